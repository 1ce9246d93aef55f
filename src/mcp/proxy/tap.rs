//! The proxy's recording: the tool calls the host sends, the answers it gets (marked
//! when they did not come from the server) and the server's notifications, written
//! to the session log and the live feed in the format `--headless --record` writes.
//!
//! A 2026-07-28 server may answer a call `input_required`; the host then sends the
//! call again, with a new id, its answers and the server's `requestState`. That is one
//! call in the log: the retry is matched to the call by its state (or, without one, by
//! its tool and arguments) and keeps its number, and each round is a `round` line with
//! what was asked and what was answered.
//!
//! A call the server runs as a task (the Tasks extension: its answer is
//! `resultType: "task"`) is one call too: the host's `tasks/get` polls of it are
//! followed, each status it goes through is a `task` line, and its end is the call's
//! response (the task's result, its error, or its cancellation).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

use crate::mcp::wire::tool_outcome;
use crate::record::Recorder;
use crate::source::SourceInfo;

/// What the tap keeps between a request and its answer.
struct Pending {
    call: u64,
    tool: String,
    started: Instant,
    /// Why its answer is not the server's answer to the request recorded.
    note: Option<String>,
    /// Its tool and arguments as one text: how a retry without a state is known.
    asked: String,
    /// The rounds of input it went through so far.
    rounds: u64,
    /// A request other than a tool call: its answer is recorded as the JSON-RPC
    /// result or error it is, not read as a tool result.
    other: bool,
}

impl Pending {
    /// A request just recorded as `call`, answered by nothing yet.
    fn new(call: u64, tool: String, asked: String, other: bool) -> Pending {
        Pending {
            call,
            tool,
            started: Instant::now(),
            note: None,
            asked,
            rounds: 0,
            other,
        }
    }
}

/// An answer as the log keeps it: its result read by `read` (a tool result's outcome,
/// or another request's result as it is), or its JSON-RPC error.
fn answer_of(m: &Value, read: impl Fn(&Value) -> Result<Value, Value>) -> Result<Value, Value> {
    match (m.get("result"), m.get("error")) {
        (Some(result), _) => read(result),
        (None, Some(error)) => Err(json!({ "error": error })),
        (None, None) => {
            Err(json!({"error": {"message": "an answer with neither result nor error"}}))
        }
    }
}

/// A request other than a tool call as a log names it: its method and what it is about
/// (`prompts/get next`, `resources/read structs://docs/overview`, `tools/list`).
fn label_of(method: &str, params: &Value) -> String {
    match crate::mcp::wire::request_target(method, params) {
        Some(about) => format!("{method} {about}"),
        None => method.to_string(),
    }
}

/// A call the server asked input for, waiting for the host to send it again.
struct Waiting {
    pending: Pending,
    /// What the server asked (`inputRequests`).
    asked: Value,
}

/// How a call waiting on its retry is found: by the state the server gave, or by its
/// tool and arguments when it gave none.
pub(super) fn retry_key(state: Option<&Value>, asked: &str) -> String {
    match state.and_then(Value::as_str) {
        Some(state) => format!("state:{state}"),
        None => format!("call:{asked}"),
    }
}

/// Records what passes.
pub(crate) struct Tap {
    pub(super) recorder: Option<Arc<Recorder>>,
    pub(super) source: SourceInfo,
    /// `tools/call` requests waiting for their answers, by their id as JSON text.
    pending: Mutex<HashMap<String, Pending>>,
    /// The calls followed past their request (rounds, tasks): this tap's own, or
    /// shared with the taps beside it ([`Tap::beside`]).
    followed: Arc<Followed>,
    /// Whether the followed calls are this tap's to end when its session ends (false
    /// for a tap beside another, which ends them).
    owns_followed: bool,
    /// The host's `tasks/*` requests waiting for their answers: the task each names,
    /// by the request's id.
    polls: Mutex<HashMap<String, String>>,
    /// The HTTP headers each request came with, behind the HTTP face.
    headers: Option<Arc<super::headers::HostHeaders>>,
    /// The requests toward the server as spans, when traces are exported.
    spans: Arc<super::spans::Spans>,
}

/// The calls followed past the request that made them, which the next request may
/// name from another connection (a stateless host's retry or poll).
#[derive(Default)]
struct Followed {
    /// Calls the server asked input for, by [`retry_key`].
    waiting: Mutex<HashMap<String, Waiting>>,
    /// Calls that became tasks, by task id: the call, and the status last recorded.
    tasks: Mutex<HashMap<String, (Pending, String)>>,
}

/// Most calls followed as tasks (and polls of them), and most calls waiting to be sent
/// again with their answers, at once; past it, the oldest is let go (a call in rounds
/// ends in the log, unanswered).
const TASKS_FOLLOWED: usize = 1024;

impl Tap {
    pub(super) fn new(recorder: Option<Arc<Recorder>>, description: String) -> Tap {
        Tap {
            recorder,
            source: SourceInfo {
                name: "proxy",
                description,
                block_height: 0,
                paused: false,
            },
            pending: Mutex::new(HashMap::new()),
            followed: Arc::default(),
            owns_followed: true,
            polls: Mutex::new(HashMap::new()),
            headers: None,
            spans: Arc::default(),
        }
    }

    /// The spans of this tap's requests.
    pub(super) fn spans(&self) -> &super::spans::Spans {
        &self.spans
    }

    /// A tap for one request of a stateless host, beside this one: the same session
    /// in the log, and the same calls followed past their requests (a call in rounds,
    /// a task), so that the retry or the poll that comes on another request is the
    /// same call; its own requests waiting for answers, and the headers in `notes`.
    pub(super) fn beside(&self, notes: Arc<super::headers::HostHeaders>) -> Tap {
        Tap {
            recorder: self.recorder.clone(),
            source: self.source.clone(),
            pending: Mutex::new(HashMap::new()),
            followed: self.followed.clone(),
            owns_followed: false,
            polls: Mutex::new(HashMap::new()),
            headers: Some(notes),
            // Its own: another host's request may have the same id.
            spans: Arc::default(),
        }
    }

    /// The tap of an HTTP face: each call is recorded with the headers its request
    /// came with, as noted in `notes`.
    pub(super) fn with_headers(mut self, notes: Arc<super::headers::HostHeaders>) -> Tap {
        self.headers = Some(notes);
        self
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Pending, String)>> {
        self.followed
            .tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn polls(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.polls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A task's word on itself (a `tasks/get` answer): a status line when it changed,
    /// and the call's response when it ended.
    fn task_said(&self, recorder: &Recorder, task_id: &str, task: &Value) {
        let Some(status) = task["status"].as_str() else {
            return;
        };
        let mut tasks = self.tasks();
        let Some((p, last)) = tasks.get_mut(task_id) else {
            return;
        };
        // A new status, or a new message while it works (its progress), is a line.
        let message = task["statusMessage"].as_str();
        let now = format!("{status}\n{}", message.unwrap_or_default());
        if *last != now {
            recorder.task(p.call, &p.tool, task_id, status, message);
            *last = now;
        }
        let outcome = match status {
            "completed" => tool_outcome(&task["result"]),
            "failed" => Err(json!({"error": task["error"]})),
            "cancelled" => Err(json!({"error": {
                "code": "TOOL_CANCELLED",
                "message": format!("the task {task_id} was cancelled"),
            }})),
            _ => return,
        };
        let Some((p, _)) = tasks.remove(task_id) else {
            return;
        };
        drop(tasks);
        // A completed task's result is kept whole too, to be given again as it was.
        let wire = (status == "completed")
            .then(|| {
                let value = outcome.as_ref().unwrap_or_else(|e| e);
                crate::record::wire::shrink(&task["result"], value)
            })
            .flatten();
        recorder.response_whole(
            p.call,
            &p.tool,
            outcome.as_ref(),
            wire,
            p.started.elapsed(),
            &self.source,
            p.note.as_deref(),
        );
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        self.followed
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// True when what passes is recorded now (a log file, or a watcher).
    pub(super) fn active(&self) -> bool {
        self.recorder.as_ref().is_some_and(|r| r.wanted())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A message from the host: a tool call is recorded (its number returned), a
    /// cancellation ends the call it names.
    pub(super) fn host_sent(&self, m: &Value) -> Option<u64> {
        let recorder = self.recorder.as_ref().filter(|r| r.wanted())?;
        let id = m.get("id").filter(|id| !id.is_null()).map(Value::to_string);
        match (m["method"].as_str(), id) {
            (Some("tools/call"), Some(id)) => {
                let tool = m["params"]["name"].as_str().unwrap_or("").to_string();
                let arguments = m["params"]
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let asked = format!("{tool} {arguments}");
                // The call sent again with its answers: the same call, one round on.
                if let Some(answers) = m["params"].get("inputResponses") {
                    let key = retry_key(m["params"].get("requestState"), &asked);
                    let found = self.waiting().remove(&key);
                    if let Some(Waiting { mut pending, asked }) = found {
                        pending.rounds += 1;
                        recorder.round(
                            pending.call,
                            &pending.tool,
                            pending.rounds,
                            &asked,
                            Some(answers),
                        );
                        let call = pending.call;
                        self.lock().insert(id, pending);
                        return Some(call);
                    }
                }
                let token = m["params"]["_meta"].get("progressToken");
                let headers = self.headers.as_ref().and_then(|h| h.peek(&id));
                let call = recorder.request_with_meta(
                    &tool,
                    &arguments,
                    token,
                    m["params"].get("_meta"),
                    headers.as_ref(),
                    &self.source,
                );
                self.lock()
                    .insert(id, Pending::new(call, tool, asked, false));
                Some(call)
            }
            (Some("tasks/get" | "tasks/cancel" | "tasks/update"), Some(id))
                if m["params"]["taskId"]
                    .as_str()
                    .is_some_and(|task| self.tasks().contains_key(task)) =>
            {
                // A poll of a task the log follows: its answer is the task's word.
                let task = m["params"]["taskId"].as_str()?.to_string();
                let mut polls = self.polls();
                if polls.len() >= TASKS_FOLLOWED {
                    polls.clear();
                }
                polls.insert(id, task);
                None
            }
            (Some(method), Some(id)) => {
                // Every other request: a prompt got, a resource read, a list, a
                // completion, a ping.
                let params = m.get("params").cloned().unwrap_or_else(|| json!({}));
                let label = label_of(method, &params);
                let headers = self.headers.as_ref().and_then(|h| h.peek(&id));
                let call = recorder.request_other(
                    method,
                    &label,
                    &params,
                    m["params"].get("_meta"),
                    headers.as_ref(),
                    &self.source,
                );
                self.lock()
                    .insert(id, Pending::new(call, label, String::new(), true));
                Some(call)
            }
            (Some("notifications/cancelled"), None) => {
                // The host gave up on a call: the server need not answer it, so the
                // log says it ended here.
                let id = m["params"]["requestId"].to_string();
                let p = self.lock().remove(&id)?;
                let reason = m["params"]["reason"].as_str().unwrap_or("no reason given");
                let error = json!({"error": {
                    "code": "TOOL_CANCELLED",
                    "message": format!("the client cancelled the call: {reason}"),
                }});
                // A call whose answer a fault rule kept from the agent ends here too,
                // marked with the rule: the agent gave up waiting.
                recorder.response_injected(
                    p.call,
                    &p.tool,
                    Err(&error),
                    p.started.elapsed(),
                    &self.source,
                    p.note.as_deref(),
                );
                None
            }
            _ => None,
        }
    }

    /// A line on its way to the host; `injected` when it did not come from the
    /// server.
    pub(super) fn host_gets(&self, line: &[u8], injected: Option<&str>) {
        if self.recorder.is_none() {
            return;
        }
        // A line the broker wrote: one message, or several on their lines.
        for text in line.split(|b| *b == b'\n') {
            if let Ok(message) = serde_json::from_slice::<Value>(text) {
                self.host_gets_message(&message, injected);
            }
        }
    }

    /// A message on its way to the host (a batch: each of its messages).
    pub(super) fn host_gets_message(&self, message: &Value, injected: Option<&str>) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let messages: &[Value] = match message {
            Value::Array(items) => items,
            _ => std::slice::from_ref(message),
        };
        for m in messages {
            let id = m.get("id").filter(|id| !id.is_null()).map(Value::to_string);
            match (m["method"].as_str(), id) {
                (None, Some(id)) => {
                    let polled = self.polls().remove(&id);
                    if let Some(task) = polled {
                        if let Some(result) = m.get("result")
                            && result.get("status").is_some()
                        {
                            self.task_said(recorder, &task, result);
                        }
                        continue;
                    }
                    let Some(p) = self.lock().remove(&id) else {
                        continue;
                    };
                    if p.other {
                        let outcome = answer_of(m, |result| Ok(result.clone()));
                        recorder.response_injected(
                            p.call,
                            &p.tool,
                            outcome.as_ref(),
                            p.started.elapsed(),
                            &self.source,
                            injected.or(p.note.as_deref()),
                        );
                        continue;
                    }
                    // A task made for the call: the call goes on until the task ends.
                    if let Some(result) = m.get("result")
                        && result["resultType"] == "task"
                        && let Some(task) = result["taskId"].as_str()
                    {
                        self.follow_task(recorder, p, task, result);
                        continue;
                    }
                    // Input asked for: the call goes on when the host sends it again.
                    if let Some(result) = m.get("result")
                        && result["resultType"] == "input_required"
                    {
                        self.wait_for_retry(recorder, p, result);
                        continue;
                    }
                    let outcome = answer_of(m, tool_outcome);
                    // What the host got beyond the value, to be given again whole.
                    let wire = m.get("result").and_then(|r| {
                        let value = outcome.as_ref().unwrap_or_else(|e| e);
                        crate::record::wire::shrink(r, value)
                    });
                    recorder.response_whole(
                        p.call,
                        &p.tool,
                        outcome.as_ref(),
                        wire,
                        p.started.elapsed(),
                        &self.source,
                        injected.or(p.note.as_deref()),
                    );
                }
                (Some(method), None) if method.starts_with("notifications/") => {
                    recorder.notification(method, m.get("params").cloned().unwrap_or(Value::Null));
                }
                _ => {}
            }
        }
    }

    /// A task made for the call `p`: the call goes on until the task ends; the tap
    /// follows at most [`TASKS_FOLLOWED`], letting the oldest go.
    fn follow_task(&self, recorder: &Recorder, p: Pending, task: &str, result: &Value) {
        let status = result["status"].as_str().unwrap_or("working");
        let message = result["statusMessage"].as_str();
        recorder.task(p.call, &p.tool, task, status, message);
        let mut tasks = self.tasks();
        if tasks.len() >= TASKS_FOLLOWED
            && let Some(oldest) = tasks
                .iter()
                .min_by_key(|(_, (p, _))| p.started)
                .map(|(k, _)| k.clone())
        {
            tasks.remove(&oldest);
        }
        let said = format!("{status}\n{}", message.unwrap_or_default());
        tasks.insert(task.to_string(), (p, said));
    }

    /// Input asked for of the call `p`: it goes on when the host sends it again.
    fn wait_for_retry(&self, recorder: &Recorder, p: Pending, result: &Value) {
        let key = retry_key(result.get("requestState"), &p.asked);
        let asked = result["inputRequests"].clone();
        let let_go = {
            let mut waiting = self.waiting();
            // At the most followed, the oldest is let go.
            let oldest = (waiting.len() >= TASKS_FOLLOWED)
                .then(|| {
                    waiting
                        .iter()
                        .min_by_key(|(_, w)| w.pending.started)
                        .map(|(k, _)| k.clone())
                })
                .flatten()
                .and_then(|k| waiting.remove(&k));
            // The same call waiting already (the same tool and
            // arguments, no state): the one before was not sent again.
            let before = waiting.insert(key, Waiting { pending: p, asked });
            [
                oldest.map(|w| {
                    (
                        w,
                        "not followed any more: the tap follows at most 1024 calls in rounds",
                    )
                }),
                before.map(|w| {
                    (
                        w,
                        "the same call was made again before this one was sent again",
                    )
                }),
            ]
        };
        for (w, why) in let_go.into_iter().flatten() {
            self.never_sent_again(recorder, w, why);
        }
    }

    /// The call with this id was changed on its way (its arguments edited): its answer
    /// will be logged as not the server's answer to the request logged.
    pub(super) fn note(&self, id: &str, note: &str) {
        if let Some(p) = self.lock().get_mut(id) {
            p.note = Some(note.to_string());
        }
    }

    /// The session ended: every call still waiting for its answer ends in the log as
    /// not answered (marked with why its answer was kept from the agent, when it was),
    /// so that no call is left running for ever in the log and the live feed.
    pub(super) fn session_ended(&self) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let mut waiting: Vec<Pending> = self.lock().drain().map(|(_, p)| p).collect();
        self.polls().clear();
        if !self.owns_followed {
            // The rounds and tasks go on: the tap this one is beside ends them.
            return self.unanswered(recorder, waiting);
        }
        // A call whose task never ended while the host watched.
        for (_, (p, _)) in self.tasks().drain() {
            waiting.push(p);
        }
        // A call whose input the host never gave: its last round, unanswered.
        let never: Vec<Waiting> = self.waiting().drain().map(|(_, w)| w).collect();
        for w in never {
            self.never_sent_again(
                recorder,
                w,
                "the session ended before the agent sent it again",
            );
        }
        self.unanswered(recorder, waiting);
    }

    /// A call in rounds the tap stops following before the host sent it again: its last
    /// round unanswered, and its end, in the log.
    fn never_sent_again(&self, recorder: &Recorder, w: Waiting, why: &str) {
        recorder.round(
            w.pending.call,
            &w.pending.tool,
            w.pending.rounds + 1,
            &w.asked,
            None,
        );
        self.cancelled(
            recorder,
            &w.pending,
            "the agent did not send the call again with its answers",
            why,
        );
    }

    /// Ends `p` in the log as cancelled, saying why, marked with `note`.
    fn cancelled(&self, recorder: &Recorder, p: &Pending, message: &str, note: &str) {
        let error = json!({"error": {"code": "TOOL_CANCELLED", "message": message}});
        recorder.response_injected(
            p.call,
            &p.tool,
            Err(&error),
            p.started.elapsed(),
            &self.source,
            Some(note),
        );
    }

    /// Ends in the log each call whose answer the agent never got.
    fn unanswered(&self, recorder: &Recorder, waiting: Vec<Pending>) {
        for p in waiting {
            let note = p
                .note
                .clone()
                .unwrap_or_else(|| "no answer before the session ended".into());
            self.cancelled(
                recorder,
                &p,
                "the session ended before the agent got an answer",
                &note,
            );
        }
    }

    /// The server's answer to the call with this id was dropped on purpose: the agent
    /// gets none, so for the agent the call goes on until it gives up on it (its
    /// `notifications/cancelled`), which the log records, marked with `note`.
    pub(super) fn dropped(&self, id: &str, note: &str) {
        self.note(id, note);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same call (no state) asked input for twice before the host sent it again:
    /// the first ends in the log, unanswered and marked, and the second goes on.
    #[test]
    fn a_call_asked_again_before_its_retry_ends_the_one_before() {
        let dir = std::env::temp_dir().join(format!("structs-tap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("twice.jsonl");
        let _ = std::fs::remove_file(&path);
        let recorder = Arc::new(Recorder::open(&path).unwrap());
        let tap = Tap::new(Some(recorder), "test".into());
        let asked = json!({"jsonrpc": "2.0", "result": {"resultType": "input_required",
            "inputRequests": {"q": {"method": "elicitation/create", "params": {}}}}});
        for id in [1, 2] {
            tap.host_sent(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "t", "arguments": {"a": 1}}}));
            let mut answer = asked.clone();
            answer["id"] = json!(id);
            tap.host_gets_message(&answer, None);
        }
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let kinds: Vec<(&str, u64)> = lines
            .iter()
            .map(|l| (l["type"].as_str().unwrap(), l["call"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("request", 1),
                ("request", 2),
                ("round", 1),
                ("response", 1)
            ],
            "{lines:#?}"
        );
        let end = lines.last().unwrap();
        assert!(
            end["injected"]
                .as_str()
                .unwrap()
                .contains("made again before"),
            "{end:#}"
        );
    }
}
