//! The board: what the sessions of one proxy share (breakpoints, fault rules, the
//! feed), and the watchers' commands that change it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};

use serde_json::{Value, json};

use super::{Breakpoint, Broker, On};
use crate::mcp::proxy::rules::{Faults, Match};
use crate::record::Feed;

/// The rules every session of one proxy shares.
pub(super) struct Rules {
    pub(super) faults: Option<Faults>,
    pub(super) breakpoints: Vec<Breakpoint>,
    pub(super) next_rule: u64,
    /// Holds are numbered across sessions, so that a command names one.
    pub(super) next_hold: u64,
    /// The proxy's own requests are numbered across sessions.
    pub(super) next_own: u64,
}

/// What the sessions of one proxy share: the breakpoints and fault rules, the feed,
/// and the brokers of the sessions open, to which the watchers' commands go.
pub(in crate::mcp::proxy) struct Board {
    rules: Mutex<Rules>,
    feed: Option<Feed>,
    pub(super) brokers: Mutex<Vec<Weak<Broker>>>,
    /// What the brokers learned of the server, on the board since every session
    /// passes to the same server, and a stateless host's requests each pass through a
    /// broker of their own.
    learned: Mutex<Learned>,
}

/// What the proxy learns of the server from what passes.
#[derive(Default)]
pub(in crate::mcp::proxy) struct Learned {
    /// The input schemas of the tools listed, by tool.
    pub schemas: HashMap<String, Value>,
    /// The output schemas the tools listed declare, by tool.
    pub output_schemas: HashMap<String, Value>,
    /// The server's answers, for stale faults (the newest, by tool and arguments).
    pub answers: HashMap<String, Value>,
    pub answers_order: VecDeque<String>,
    /// What the server asked of the calls it answered `input_required`, by the key
    /// their retry is known by: an edited answer is checked against it.
    pub asked: HashMap<String, Value>,
}

impl Board {
    /// What the brokers learned of the server. Taken after a broker's own state when
    /// both are, never before.
    pub(in crate::mcp::proxy) fn learned(&self) -> std::sync::MutexGuard<'_, Learned> {
        self.learned.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(in crate::mcp::proxy) fn new(feed: Option<Feed>, faults: Option<Faults>) -> Arc<Board> {
        Arc::new(Board {
            rules: Mutex::new(Rules {
                faults,
                breakpoints: Vec::new(),
                next_rule: 1,
                next_hold: 1,
                next_own: 1,
            }),
            feed,
            brokers: Mutex::new(Vec::new()),
            learned: Mutex::default(),
        })
    }

    pub(super) fn rules(&self) -> std::sync::MutexGuard<'_, Rules> {
        self.rules.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The brokers of the sessions still open (the others are forgotten).
    pub(super) fn brokers(&self) -> Vec<Arc<Broker>> {
        let mut list = self.brokers.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|b| b.strong_count() > 0);
        list.iter().filter_map(Weak::upgrade).collect()
    }

    pub(super) fn publish(&self, mut event: Value, session: &str) {
        if let Some(feed) = &self.feed {
            event["v"] = json!(crate::record::VERSION);
            event["session"] = json!(session);
            let mut line = event.to_string().into_bytes();
            line.push(b'\n');
            feed.publish(&line);
        }
    }

    /// The breakpoints as the feed lists them.
    fn breakpoints_event(&self) -> Value {
        let rules: Vec<Value> = self
            .rules()
            .breakpoints
            .iter()
            .map(|b| json!({"rule": b.id, "on": b.on.word(), "match": b.when.describe()}))
            .collect();
        json!({"type": "breakpoints", "rules": rules})
    }

    /// A watcher went away: its breakpoints go, and what they hold goes on, in every
    /// session.
    pub(in crate::mcp::proxy) fn watcher_left(&self, watcher: u64) {
        let had_breakpoints = {
            let mut rules = self.rules();
            // Its fault rules go with it, as its breakpoints do (the rules' numbering
            // stays: a number is never given twice).
            if let Some(faults) = rules.faults.as_mut() {
                faults.remove(|r| r.owner != Some(watcher));
            }
            let before = rules.breakpoints.len();
            rules.breakpoints.retain(|b| b.owner != watcher);
            before != rules.breakpoints.len()
        };
        if !had_breakpoints {
            return;
        }
        for broker in self.brokers() {
            broker.release_owned_by(watcher);
        }
        self.publish(self.breakpoints_event(), "");
    }

    /// Runs a watcher's command; the answer goes back to it.
    pub(in crate::mcp::proxy) fn command(&self, watcher: u64, body: &Value) -> Value {
        match self.run(watcher, body) {
            Ok(mut ack) => {
                ack["type"] = json!("ack");
                ack["cmd"] = body["cmd"].clone();
                ack
            }
            Err(reason) => json!({"type": "refused", "cmd": body["cmd"], "reason": reason}),
        }
    }

    fn run(&self, watcher: u64, body: &Value) -> Result<Value, String> {
        let cmd = body["cmd"].as_str().unwrap_or("");
        match cmd {
            "break" => {
                let mut rule = body.as_object().cloned().unwrap_or_default();
                rule.remove("cmd");
                let on = match rule.remove("on") {
                    None => On::Request,
                    Some(v) if v == "request" => On::Request,
                    Some(v) if v == "response" => On::Response,
                    Some(v) => return Err(format!("\"on\" is \"request\" or \"response\", not {v}")),
                };
                let when = Match::take(&mut rule)?;
                if let Some(key) = rule.keys().next() {
                    return Err(format!("unknown key {key:?} (a breakpoint has on, tool, arg, value)"));
                }
                let id = {
                    let mut rules = self.rules();
                    let id = rules.next_rule;
                    rules.next_rule += 1;
                    rules.breakpoints.push(Breakpoint {
                        id,
                        owner: watcher,
                        on,
                        when,
                    });
                    id
                };
                self.publish(self.breakpoints_event(), "");
                Ok(json!({"rule": id}))
            }
            "unbreak" => {
                {
                    let mut rules = self.rules();
                    match body.get("rule").and_then(Value::as_u64) {
                        Some(rule) => {
                            let before = rules.breakpoints.len();
                            rules.breakpoints.retain(|b| b.id != rule);
                            if before == rules.breakpoints.len() {
                                return Err(format!("no breakpoint {rule}"));
                            }
                        }
                        None => rules.breakpoints.clear(),
                    }
                }
                self.publish(self.breakpoints_event(), "");
                Ok(json!({}))
            }
            "fault" => {
                let rule = body.get("rule").cloned().unwrap_or(Value::Null);
                let mut rules = self.rules();
                let faults = rules.faults.get_or_insert_with(Faults::none);
                let number = faults.add(&rule, watcher)?;
                Ok(json!({"rule": number}))
            }
            "unfault" => {
                let mut rules = self.rules();
                let Some(faults) = rules.faults.as_mut() else {
                    return Err("no fault rules are set".into());
                };
                let removed = match body.get("rule") {
                    // One rule, whoever set it (a faults file's too).
                    Some(n) => {
                        let n = n
                            .as_u64()
                            .ok_or("\"rule\" is a fault rule's number")?;
                        let removed = faults.remove(|r| r.number as u64 != n);
                        if removed == 0 {
                            return Err(format!("no fault rule {n}"));
                        }
                        removed
                    }
                    // Every rule a watcher added; the faults file's stay.
                    None => faults.remove(|r| r.owner.is_none()),
                };
                Ok(json!({"removed": removed, "left": faults.rules.len()}))
            }
            "continue" | "edit" | "answer" | "error" | "drop" => {
                let hold = body["hold"]
                    .as_u64()
                    .ok_or("name the held call: \"hold\": N")?;
                // The session that holds it answers.
                for broker in self.brokers() {
                    if let Some(answer) = broker.release_command(cmd, hold, body) {
                        return answer;
                    }
                }
                Err(format!("nothing is held as {hold} (released, or timed out)"))
            }
            "" => Err("a command has \"cmd\": break, unbreak, fault, unfault, continue, edit, answer, error, drop or fetch".into()),
            other => Err(format!("no command {other:?} (break, unbreak, fault, unfault, continue, edit, answer, error, drop, fetch)")),
        }
    }
}
