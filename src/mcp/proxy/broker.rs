//! What the proxy does to the messages it passes: nothing, unless a rule says so. The
//! broker sees each whole line both ways and decides: pass it; hold a call at a
//! breakpoint until the operator (or the timeout) releases it; or apply a fault rule
//! (delay it, answer it without the server, drop, cut or pad the server's answer, or
//! answer with an earlier answer).
//!
//! Breakpoints are set by watchers of the control endpoint ([`Broker::command`]); a
//! watcher that leaves takes its breakpoints with it, and what they held goes on.
//! Every hold ends by [`Broker::hold_timeout`] at the latest. While a request is held
//! and the agent asked for progress, it is sent a progress notification every
//! [`KEEP_ALIVE`] so that it sees a slow call, not a dead one.
//!
//! The live feed is told of each hold and release (`"type": "held"`, `"released"`)
//! and of the breakpoints (`"type": "breakpoints"`); answers that did not come from
//! the server are logged with `injected` saying what gave them.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

mod board;
mod faults;
mod fetch;

pub(super) use self::board::Board;

use super::answers::{answer_key, check_tool_result, response_line, tool_result};
use super::rules::{Fault, Faults, Match, error_answer};
use crate::error::{ErrorCode, ToolError};
use crate::tools::schema::ArgSchema;

/// How often a held request that asked for progress is sent some.
pub const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// The longest a watcher waits for a handle fetched through the watched server.
pub const FETCH_WAIT: Duration = Duration::from_secs(10);

/// The tool that fetches a result handle's pages.
const FETCH_TOOL: &str = "structs_handle_fetch";

/// Answers kept for stale faults (the newest, by tool and arguments).
const ANSWERS_KEPT: usize = 1_000;

/// Bytes to send the host, and what they are when they did not come from the server.
#[derive(Debug)]
pub(super) enum Out {
    Bytes {
        bytes: Vec<u8>,
        /// What gave these bytes, when the server did not.
        injected: Option<String>,
        /// The messages in `bytes`, read already (the tap reads the bytes again when
        /// empty).
        messages: Vec<Value>,
    },
    /// Nothing more: the writer ends once what came before is written.
    End,
}

/// What to do with a line.
#[derive(Debug, PartialEq)]
pub(super) enum Decision {
    /// Send it on as it is.
    Pass,
    /// Not now (held, delayed, answered without the server, dropped).
    Taken,
    /// Send these bytes in its place, saying what was injected.
    Replace(Vec<u8>, String),
}

/// Which message a breakpoint holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    Request,
    Response,
}

impl On {
    fn word(self) -> &'static str {
        match self {
            On::Request => "request",
            On::Response => "response",
        }
    }
}

/// A breakpoint: which calls, which way, whose.
#[derive(Debug, Clone)]
pub struct Breakpoint {
    pub id: u64,
    pub owner: u64,
    pub on: On,
    pub when: Match,
}

/// How a hold ends.
#[derive(Debug)]
enum Release {
    Continue,
    /// A request with these arguments; a response with this result.
    Edit(Value),
    /// A call in rounds sent on with these answers to the server's questions.
    EditRound(Value),
    Answer(Value),
    Error(Value),
    Drop,
    TimedOut,
    /// The watcher whose breakpoint held it went away.
    OwnerLeft,
    /// The session is ending (the server stopped): what is held goes on as it was.
    SessionEnded,
    /// The agent cancelled the call: nothing is sent.
    Cancelled,
}

impl Release {
    /// How the hold ended, as the live feed says it.
    fn how(&self) -> &'static str {
        match self {
            Release::Continue => "continued",
            Release::TimedOut => "timed out, continued",
            Release::OwnerLeft => "its watcher left, continued",
            Release::SessionEnded => "the session ended, continued",
            Release::Cancelled => "cancelled by the agent",
            Release::Edit(_) => "edited, continued",
            Release::EditRound(_) => "answers edited, continued",
            Release::Answer(_) => "answered",
            Release::Error(_) => "answered with an error",
            Release::Drop => "dropped",
        }
    }
}

/// A call seen going to the server, until its answer.
struct Call {
    tool: String,
    args: Value,
    /// Its number in the session log, when one is kept.
    number: Option<u64>,
    response_faults: Vec<(usize, Fault)>,
}

/// Whether a request names a protocol of the stateless era in its `_meta` (2026-07-28
/// and later), whose results carry a `resultType`.
fn stateless_request(message: &Value) -> bool {
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .is_some_and(|v| v >= "2026-07-28")
}

/// A result the proxy gives in the server's place, in the era's shape: under
/// 2026-07-28 a finished call says so (`resultType: "complete"`) unless the operator
/// wrote another.
fn in_era(mut result: Value, stateless: bool) -> Value {
    if stateless && result.is_object() && result.get("resultType").is_none() {
        result["resultType"] = json!("complete");
    }
    result
}

/// A held message, as its release needs it.
struct Holding {
    way: On,
    /// The request's id.
    id: Value,
    /// The message as it came.
    line: Vec<u8>,
    hold: u64,
    /// Its call number in the log (`null` when there is no log).
    call: Value,
    tool: String,
}

struct Held {
    owner: u64,
    release: oneshot::Sender<Release>,
    way: On,
    /// The request's id (JSON text).
    id: String,
    tool: String,
    /// For a call sent again with its answers (a round): what the server had asked
    /// (`null` when the broker did not see it ask).
    round: Option<Value>,
}

#[derive(Default)]
struct State {
    calls: HashMap<String, Call>,
    holds: HashMap<u64, Held>,
    /// The proxy's own requests to the server (for watchers), by id as JSON text:
    /// where their answers go.
    own: HashMap<String, oneshot::Sender<Value>>,
    list_requests: HashSet<String>,
}

/// The most questions kept for the calls' retries; past it, all are forgotten.
const ASKED_KEPT: usize = 1_000;

/// How a call's retry with answers is known: the tap's key ([`super::tap::retry_key`]),
/// from its tool and arguments.
fn round_key(state: Option<&Value>, tool: &str, args: &Value) -> String {
    super::tap::retry_key(state, &format!("{tool} {args}"))
}

/// A `tools/call` from the agent's host, as the rules read it.
struct HostCall<'a> {
    /// The message as it came.
    line: &'a [u8],
    message: &'a Value,
    id: &'a Value,
    /// Its number in the session log, when one is kept.
    number: Option<u64>,
    tool: String,
    args: Value,
}

/// What the rules do with a call from the host.
struct Ruled {
    /// The breakpoint that holds it: its id and owner.
    held_by: Option<(u64, u64)>,
    /// Else the faults that fire, with their rules' numbers.
    fired: Vec<(usize, Fault)>,
    /// The earlier answer a stale fault would give, when one fired.
    stale: Option<Value>,
}

/// The broker of one session, shared by its two pumps and the board's commands.
pub(super) struct Broker {
    state: Mutex<State>,
    board: Arc<Board>,
    to_server: mpsc::UnboundedSender<Vec<u8>>,
    to_host: mpsc::UnboundedSender<Out>,
    session: String,
    pub hold_timeout: Duration,
    /// Where an answer the agent never gets is logged.
    tap: Option<Arc<super::Tap>>,
    /// Messages taken and not yet sent on (held, delayed, answers on their way): the
    /// session does not end, nor the server's stdin close, before they go.
    taken: tokio::sync::watch::Sender<usize>,
}

/// One message the broker has taken, until it is sent on (or let go).
struct InHand(tokio::sync::watch::Sender<usize>);

impl Drop for InHand {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Broker {
    /// A session's broker, on the board its commands come through.
    pub(super) fn new(
        to_server: mpsc::UnboundedSender<Vec<u8>>,
        to_host: mpsc::UnboundedSender<Out>,
        board: Arc<Board>,
        tap: Option<Arc<super::Tap>>,
        hold_timeout: Duration,
    ) -> Arc<Broker> {
        let session = tap
            .as_ref()
            .and_then(|t| t.recorder.as_ref())
            .map_or_else(String::new, |r| r.session().to_string());
        let broker = Arc::new(Broker {
            state: Mutex::new(State::default()),
            board: board.clone(),
            to_server,
            to_host,
            session,
            hold_timeout,
            tap,
            taken: tokio::sync::watch::Sender::new(0),
        });
        let mut brokers = board.brokers.lock().unwrap_or_else(|e| e.into_inner());
        // The sessions that ended go (a stateless host's passage ends with each request).
        brokers.retain(|b| b.strong_count() > 0);
        brokers.push(Arc::downgrade(&broker));
        drop(brokers);
        broker
    }

    /// Counts a message taken; it is let go with the guard.
    fn in_hand(&self) -> InHand {
        self.taken.send_modify(|n| *n += 1);
        InHand(self.taken.clone())
    }

    /// Waits until every message taken has been sent on.
    pub(super) async fn settled(&self) {
        let mut taken = self.taken.subscribe();
        let _ = taken.wait_for(|n| *n == 0).await;
    }

    /// Closes the server's stdin once what the broker sent before it is written.
    pub(super) fn close_server(&self) {
        let _ = self.to_server.send(Vec::new());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn publish(&self, event: Value) {
        self.board.publish(event, &self.session);
    }

    fn send_host(&self, bytes: Vec<u8>, injected: Option<String>) {
        let _ = self.to_host.send(Out::Bytes {
            bytes,
            injected,
            messages: Vec::new(),
        });
    }

    /// True when a rule could apply to a call now (faults, or breakpoints set).
    pub(super) fn active(&self) -> bool {
        let rules = self.board.rules();
        rules.faults.as_ref().is_some_and(|f| !f.rules.is_empty()) || !rules.breakpoints.is_empty()
    }

    /// True when an answer from the server concerns the broker (a call it follows, or
    /// a tool list it reads schemas from).
    pub(super) fn expects_answers(&self) -> bool {
        let state = self.lock();
        !state.calls.is_empty() || !state.list_requests.is_empty() || !state.own.is_empty()
    }

    /// A line from the agent's host. `number` is the call's number in the log when
    /// the line is a tool call being recorded.
    pub(super) fn on_host_line(
        self: &Arc<Self>,
        line: &[u8],
        message: &Value,
        number: Option<u64>,
    ) -> Decision {
        let id = message.get("id").filter(|id| !id.is_null());
        match (message["method"].as_str(), id) {
            (Some("tools/list"), Some(id)) => {
                self.lock().list_requests.insert(id.to_string());
                Decision::Pass
            }
            (Some("notifications/cancelled"), None) => {
                let id = message["params"]["requestId"].to_string();
                let hold = {
                    let mut state = self.lock();
                    state.calls.remove(&id);
                    let found = state
                        .holds
                        .iter()
                        .find(|(_, h)| h.id == id)
                        .map(|(n, _)| *n);
                    found.and_then(|n| state.holds.remove(&n))
                };
                if let Some(hold) = hold {
                    let _ = hold.release.send(Release::Cancelled);
                }
                Decision::Pass
            }
            (Some("tools/call"), Some(id)) if self.active() => {
                self.call_from_host(line, message, id, number)
            }
            _ => Decision::Pass,
        }
    }

    /// A `tools/call` while a rule could apply: held at a breakpoint, answered without
    /// the server, delayed, or passed.
    fn call_from_host(
        self: &Arc<Self>,
        line: &[u8],
        message: &Value,
        id: &Value,
        number: Option<u64>,
    ) -> Decision {
        let call = HostCall {
            line,
            message,
            id,
            number,
            tool: message["params"]["name"].as_str().unwrap_or("").to_string(),
            args: message["params"]
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| json!({})),
        };
        let stateless = stateless_request(message);
        let Ruled {
            held_by,
            fired,
            stale,
        } = self.note_call(&call);
        if let Some((rule, owner)) = held_by {
            self.hold_request(&call, rule, owner);
            return Decision::Taken;
        }
        let latency: Duration = fired
            .iter()
            .filter_map(|(_, f)| match f {
                Fault::Latency(d) => Some(*d),
                _ => None,
            })
            .sum();
        let mut notes: Vec<String> = fired
            .iter()
            .filter(|(_, f)| matches!(f, Fault::Latency(_)))
            .map(|(n, f)| format!("{} (rule {n})", f.describe()))
            .collect();
        // An answer without the server: the first error, or a stale answer when there
        // is one to give.
        let answer = fired.iter().find_map(|(n, f)| match f {
            Fault::Error(e) => Some((
                in_era(tool_result(&error_answer(e), true), stateless),
                format!("{} (rule {n})", f.describe()),
            )),
            Fault::Stale => stale
                .clone()
                .map(|r| (in_era(r, stateless), format!("{} (rule {n})", f.describe()))),
            _ => None,
        });
        if let Some((result, note)) = answer {
            notes.push(note);
            self.answer_in_place(id, &result, notes.join(", "), latency);
            return Decision::Taken;
        }
        if latency.is_zero() {
            return Decision::Pass;
        }
        self.delay_request(&call, &fired, latency);
        Decision::Taken
    }

    /// Notes a call going to the server, and reads what the rules do with it.
    fn note_call(&self, call: &HostCall<'_>) -> Ruled {
        let (tool, args) = (&call.tool, &call.args);
        let mut state = self.lock();
        let mut rules = self.board.rules();
        let held_by = rules
            .breakpoints
            .iter()
            .find(|b| b.on == On::Request && b.when.matches(tool, args))
            .map(|b| (b.id, b.owner));
        let fired = match (&held_by, &mut rules.faults) {
            (None, Some(faults)) => faults.pick(tool, args),
            _ => Vec::new(),
        };
        drop(rules);
        let stale = if fired.iter().any(|(_, f)| *f == Fault::Stale) {
            self.board
                .learned()
                .answers
                .get(&answer_key(tool, args))
                .cloned()
        } else {
            None
        };
        state.calls.insert(
            call.id.to_string(),
            Call {
                tool: tool.clone(),
                args: args.clone(),
                number: call.number,
                response_faults: fired
                    .iter()
                    .filter(|(_, f)| f.on_response())
                    .cloned()
                    .collect(),
            },
        );
        Ruled {
            held_by,
            fired,
            stale,
        }
    }

    /// Holds a call at the breakpoint `rule` of `owner`, the agent's progress token kept
    /// for the keep-alives.
    fn hold_request(self: &Arc<Self>, call: &HostCall<'_>, rule: u64, owner: u64) {
        let (tool, args, params) = (&call.tool, &call.args, &call.message["params"]);
        let mut held = json!({"type": "held", "way": "request", "call": call.number, "tool": tool,
            "arguments": args, "rule": rule});
        // A call sent again with its answers: the round, with what was asked.
        if let Some(given) = params.get("inputResponses") {
            let key = round_key(params.get("requestState"), tool, args);
            let asked = self
                .board
                .learned()
                .asked
                .remove(&key)
                .unwrap_or(Value::Null);
            held["round"] = json!({"input_requests": asked, "input_responses": given});
        }
        let token = params["_meta"].get("progressToken").cloned();
        self.hold(On::Request, call.id, owner, held, call.line.to_vec(), token);
    }

    /// A line from the server.
    pub(super) fn on_server_line(self: &Arc<Self>, message: &Value) -> Decision {
        if message.get("method").is_some() {
            return Decision::Pass;
        }
        let Some(id) = message.get("id").filter(|id| !id.is_null()) else {
            return Decision::Pass;
        };
        let key = id.to_string();
        let call = {
            let mut state = self.lock();
            // The answer to a request of the proxy's own: for the watcher that asked.
            if let Some(reply) = state.own.remove(&key) {
                let _ = reply.send(message.clone());
                return Decision::Taken;
            }
            if state.list_requests.remove(&key) {
                self.learn_tools(message);
                return Decision::Pass;
            }
            let Some(call) = state.calls.remove(&key) else {
                return Decision::Pass;
            };
            self.learn_asked(&call, message);
            let (keep, held_by) = {
                let rules = self.board.rules();
                let keep = rules.faults.as_ref().is_some_and(Faults::wants_answers);
                let held_by = rules
                    .breakpoints
                    .iter()
                    .find(|b| b.on == On::Response && b.when.matches(&call.tool, &call.args))
                    .map(|b| (b.id, b.owner));
                (keep, held_by)
            };
            if keep {
                self.keep_answer(&call, message);
            }
            if let Some((rule, owner)) = held_by {
                drop(state);
                let held = json!({"type": "held", "way": "response", "call": call.number,
                    "tool": call.tool, "arguments": call.args,
                    "answer": message.get("result").or_else(|| message.get("error")),
                    "rule": rule});
                let mut line = message.to_string().into_bytes();
                line.push(b'\n');
                self.hold(On::Response, id, owner, held, line, None);
                return Decision::Taken;
            }
            call
        };
        self.fault_response(&call, &key, id, message)
    }

    /// Learns the input and output schemas of the tools a `tools/list` answer lists.
    fn learn_tools(&self, message: &Value) {
        let mut learned = self.board.learned();
        for tool in message["result"]["tools"].as_array().into_iter().flatten() {
            let Some(name) = tool["name"].as_str() else {
                continue;
            };
            if let Some(schema) = tool.get("inputSchema") {
                learned.schemas.insert(name.to_string(), schema.clone());
            }
            match tool.get("outputSchema").filter(|s| s.is_object()) {
                Some(schema) => {
                    learned
                        .output_schemas
                        .insert(name.to_string(), schema.clone());
                }
                None => {
                    learned.output_schemas.remove(name);
                }
            }
        }
    }

    /// Learns what the server asked of a call it answered `input_required`, under the
    /// key its retry is known by (all forgotten once [`ASKED_KEPT`] are kept).
    fn learn_asked(&self, call: &Call, message: &Value) {
        if let Some(result) = message.get("result")
            && result["resultType"] == "input_required"
        {
            let asked = &mut self.board.learned().asked;
            if asked.len() >= ASKED_KEPT {
                asked.clear();
            }
            asked.insert(
                round_key(result.get("requestState"), &call.tool, &call.args),
                result["inputRequests"].clone(),
            );
        }
    }

    /// Keeps the server's answer to a call (not an error result) for stale faults: the
    /// newest [`ANSWERS_KEPT`], by tool and arguments.
    fn keep_answer(&self, call: &Call, message: &Value) {
        if let Some(result) = message.get("result")
            && result["isError"] != true
        {
            let k = answer_key(&call.tool, &call.args);
            let mut learned = self.board.learned();
            if learned.answers.insert(k.clone(), result.clone()).is_none() {
                learned.answers_order.push_back(k);
                if learned.answers_order.len() > ANSWERS_KEPT
                    && let Some(old) = learned.answers_order.pop_front()
                {
                    learned.answers.remove(&old);
                }
            }
        }
    }

    /// Holds a message until it is released or the timeout.
    fn hold(
        self: &Arc<Self>,
        way: On,
        id: &Value,
        owner: u64,
        mut event: Value,
        line: Vec<u8>,
        token: Option<Value>,
    ) {
        let (tx, rx) = oneshot::channel();
        let hold = {
            let mut state = self.lock();
            let n = {
                let mut rules = self.board.rules();
                rules.next_hold += 1;
                rules.next_hold - 1
            };
            state.holds.insert(
                n,
                Held {
                    owner,
                    release: tx,
                    way,
                    id: id.to_string(),
                    tool: event["tool"].as_str().unwrap_or("").to_string(),
                    round: event.get("round").map(|r| r["input_requests"].clone()),
                },
            );
            n
        };
        event["hold"] = json!(hold);
        event["timeout_ms"] = json!(self.hold_timeout.as_millis() as u64);
        let tool = event["tool"].as_str().unwrap_or("").to_string();
        if way == On::Request
            && let Some(schema) = self.board.learned().schemas.get(&tool).cloned()
        {
            event["schema"] = schema;
        }
        // What an answer given in its place must fit: the agent's SDK checks it.
        if let Some(schema) = self.board.learned().output_schemas.get(&tool).cloned() {
            event["output_schema"] = schema;
        }
        let holding = Holding {
            way,
            id: id.clone(),
            line,
            hold,
            call: event["call"].clone(),
            tool: event["tool"].as_str().unwrap_or("").to_string(),
        };
        self.publish(event);
        let broker = self.clone();
        let in_hand = self.in_hand();
        tokio::spawn(async move {
            let _in_hand = in_hand;
            let deadline = tokio::time::Instant::now() + broker.hold_timeout;
            let mut rx = rx;
            let mut beats = 0u64;
            let release = loop {
                tokio::select! {
                    r = &mut rx => break r.unwrap_or(Release::OwnerLeft),
                    () = tokio::time::sleep_until(deadline) => {
                        if broker.lock().holds.remove(&hold).is_some() {
                            break Release::TimedOut;
                        }
                        // A command took it at the deadline: its release is on its way.
                        break (&mut rx).await.unwrap_or(Release::OwnerLeft);
                    }
                    () = tokio::time::sleep(KEEP_ALIVE) => {
                        beats += 1;
                        if let Some(token) = &token {
                            let note = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progressToken": token, "progress": beats,
                                    "message": "held at a breakpoint in structs-console"}});
                            let mut bytes = note.to_string().into_bytes();
                            bytes.push(b'\n');
                            broker.send_host(bytes, None);
                        }
                    }
                }
            };
            broker.release(&holding, release);
        });
    }

    fn release(&self, holding: &Holding, release: Release) {
        let Holding {
            way,
            id,
            line,
            hold,
            call,
            tool,
        } = holding;
        let way = *way;
        let mut event = json!({"type": "released", "hold": hold, "call": call, "tool": tool});
        event["how"] = json!(release.how());
        // The era of the call, from the request held or the server's answer held.
        let original: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
        let stateless = match way {
            On::Request => stateless_request(&original),
            On::Response => original["result"].get("resultType").is_some(),
        };
        match (release, way) {
            (
                Release::Continue | Release::TimedOut | Release::OwnerLeft | Release::SessionEnded,
                On::Request,
            ) => {
                let _ = self.to_server.send(line.to_vec());
            }
            (
                Release::Continue | Release::TimedOut | Release::OwnerLeft | Release::SessionEnded,
                On::Response,
            ) => {
                self.send_host(line.to_vec(), None);
            }
            (Release::Cancelled, _) => {}
            (Release::EditRound(given), _) => {
                self.send_edited(
                    line,
                    id,
                    "inputResponses",
                    &given,
                    "the answers to the server's questions edited at a breakpoint",
                );
                event["input_responses"] = given;
            }
            (Release::Edit(args), On::Request) => {
                if let Some(c) = self.lock().calls.get_mut(&id.to_string()) {
                    c.args = args.clone();
                }
                self.send_edited(
                    line,
                    id,
                    "arguments",
                    &args,
                    "arguments edited at a breakpoint",
                );
                event["arguments"] = args;
            }
            // The operator gives the whole tool result, as the held answer shows it:
            // it goes to the agent as given.
            (Release::Edit(result), On::Response) | (Release::Answer(result), On::Response) => {
                self.send_host(
                    response_line(id, &in_era(result, stateless)),
                    Some("edited at a breakpoint".into()),
                );
            }
            (Release::Answer(result), On::Request) => {
                self.lock().calls.remove(&id.to_string());
                self.send_host(
                    response_line(id, &in_era(result, stateless)),
                    Some("answered at a breakpoint".into()),
                );
            }
            (Release::Error(error), _) => {
                self.lock().calls.remove(&id.to_string());
                self.send_host(
                    response_line(
                        id,
                        &in_era(tool_result(&error_answer(&error), true), stateless),
                    ),
                    Some(format!(
                        "error {} at a breakpoint",
                        error["error"]["code"].as_str().unwrap_or("?")
                    )),
                );
            }
            (Release::Drop, _) => {
                self.lock().calls.remove(&id.to_string());
                let error = json!({"error": {"code": "TOOL_CANCELLED",
                    "message": "the operator dropped the call at a breakpoint"}});
                self.send_host(
                    response_line(
                        id,
                        &in_era(tool_result(&error_answer(&error), true), stateless),
                    ),
                    Some("dropped at a breakpoint".into()),
                );
            }
        }
        self.publish(event);
    }

    /// A held request sent on to the server with its `params.{key}` replaced by
    /// `value`, the tap noting why.
    fn send_edited(&self, line: &[u8], id: &impl ToString, key: &str, value: &Value, why: &str) {
        let mut message: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
        message["params"][key] = value.clone();
        if let Some(tap) = &self.tap {
            tap.note(&id.to_string(), why);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(b'\n');
        let _ = self.to_server.send(bytes);
    }

    /// The session is ending: everything it holds goes on as it was (a held answer
    /// reaches the agent), so that nothing taken is lost.
    pub(super) fn let_go(&self) {
        let held: Vec<Held> = self.lock().holds.drain().map(|(_, h)| h).collect();
        for held in held {
            let _ = held.release.send(Release::SessionEnded);
        }
    }

    /// Releases what this session holds for a watcher that went away.
    fn release_owned_by(&self, watcher: u64) {
        let released: Vec<Held> = {
            let mut state = self.lock();
            let mine: Vec<u64> = state
                .holds
                .iter()
                .filter(|(_, h)| h.owner == watcher)
                .map(|(n, _)| *n)
                .collect();
            mine.iter().filter_map(|n| state.holds.remove(n)).collect()
        };
        for held in released {
            let _ = held.release.send(Release::OwnerLeft);
        }
    }

    /// A command on hold `hold`: `None` when this session does not hold it.
    fn release_command(&self, cmd: &str, hold: u64, body: &Value) -> Option<Result<Value, String>> {
        let (way, tool, round) = {
            let state = self.lock();
            let held = state.holds.get(&hold)?;
            (held.way, held.tool.clone(), held.round.clone())
        };
        if let (Some(asked), Some(given)) = (round, body.get("input_responses"))
            && cmd == "edit"
        {
            return Some(
                super::answers::check_input_responses(&asked, given)
                    .map_err(|why| format!("the answers do not fit what the server asked: {why}"))
                    .and_then(|()| self.release_with(hold, Release::EditRound(given.clone()))),
            );
        }
        Some(self.release_as(cmd, hold, way, &tool, body))
    }

    fn release_as(
        &self,
        cmd: &str,
        hold: u64,
        way: On,
        tool: &str,
        body: &Value,
    ) -> Result<Value, String> {
        let release = match cmd {
            "continue" => Release::Continue,
            "drop" => Release::Drop,
            "edit" if way == On::Request => {
                let args = body
                    .get("arguments")
                    .filter(|a| a.is_object())
                    .cloned()
                    .ok_or("an edit gives the call's new \"arguments\", an object")?;
                let schema = self.board.learned().schemas.get(tool).cloned();
                if let Some(schema) = schema
                    && let Ok(compiled) = ArgSchema::compile(&schema)
                    && let Err(e) = compiled.check(&args)
                {
                    return Err(format!(
                        "the arguments do not fit the tool's schema: {} {}",
                        e.code.as_str(),
                        e.message
                    ));
                }
                Release::Edit(args)
            }
            "edit" | "answer" => {
                let result = body.get("result").ok_or(
                    "give the \"result\" to answer with: the whole tool result, {\"content\": […], \"structuredContent\": {…}}",
                )?;
                let schema = self.board.learned().output_schemas.get(tool).cloned();
                check_tool_result(result, schema.as_ref())?;
                if cmd == "edit" {
                    Release::Edit(result.clone())
                } else {
                    Release::Answer(result.clone())
                }
            }
            _ => {
                let error = body
                    .get("error")
                    .ok_or("give the \"error\": {\"code\": …, \"message\": …, \"details\": {…}}")?;
                let code = error["code"].as_str().unwrap_or("");
                if ErrorCode::parse(code).is_none() {
                    return Err(format!("{code:?} is not one of the error codes"));
                }
                let wire = json!({"error": error});
                if ToolError::from_wire(&wire).is_none() {
                    return Err("the error needs a \"code\"".into());
                }
                Release::Error(wire)
            }
        };
        self.release_with(hold, release)
    }

    /// Ends hold `hold` with `release`.
    fn release_with(&self, hold: u64, release: Release) -> Result<Value, String> {
        let held = self
            .lock()
            .holds
            .remove(&hold)
            .ok_or_else(|| format!("nothing is held as {hold}"))?;
        held.release
            .send(release)
            .map_err(|_| format!("{hold} was released meanwhile"))?;
        Ok(json!({"hold": hold}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_given_in_the_servers_place_follows_the_era() {
        let call = |version: &str| {
            json!({"method": "tools/call", "params": {"name": "t",
                "_meta": {"io.modelcontextprotocol/protocolVersion": version}}})
        };
        assert!(stateless_request(&call("2026-07-28")));
        assert!(!stateless_request(&call("2025-11-25")));
        assert!(!stateless_request(&json!({"params": {"name": "t"}})));
        let error = tool_result(&json!({"error": {"code": "TOOL_CANCELLED"}}), true);
        assert_eq!(in_era(error.clone(), true)["resultType"], "complete");
        assert!(in_era(error, false).get("resultType").is_none());
        let asked = json!({"resultType": "input_required"});
        assert_eq!(in_era(asked, true)["resultType"], "input_required");
    }
}
