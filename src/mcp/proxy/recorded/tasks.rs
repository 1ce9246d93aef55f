//! Tasks replayed as tasks: a call the recorded server ran as a task (the Tasks
//! extension, `task` lines in the log) is answered, to a client that declares the
//! extension, with the task under its recorded id and first status. Each `tasks/get`
//! then gives the next status the log holds (its message with it), the last with the
//! call's result (`completed`) or error (`failed`); past the last it stays there.
//! `tasks/cancel` ends it `cancelled`, `tasks/update` is acknowledged. A client that
//! does not declare the extension gets the call's answer itself, as a server gives it.
//!
//! Times are the recorded lines' (`createdAt` the first status's, `lastUpdatedAt` each
//! status's); the poll interval is [`POLL_INTERVAL_MS`], short, since nothing is worked
//! on. A task id the recording did not give out goes to the fallback, or is answered
//! with a `-32602` error naming it.

use serde_json::{Map, Value, json};

use super::{Answer, Recording, Reply};
use crate::record::{Entry, Redaction};

/// The poll interval a replayed task asks for.
pub const POLL_INTERVAL_MS: u64 = 100;

/// How long a replayed task is said to be kept (as this server's own are).
const TTL_MS: u64 = 600_000;

/// What a recorded task said of itself, status by status.
#[derive(Debug, Clone)]
pub(super) struct TaskSaid {
    id: String,
    said: Vec<Said>,
    /// A `failed` task's error object.
    error: Option<Value>,
}

/// One status line of a task.
#[derive(Debug, Clone)]
struct Said {
    status: String,
    message: Option<String>,
    /// When it was written, as the server writes a task's times.
    at: String,
}

/// Where a task given out has got to.
pub(super) struct Served {
    answer: usize,
    at: usize,
    cancelled: bool,
}

/// True for a status a task does not leave.
fn terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// True when `capabilities` (a client's) declare the Tasks extension.
pub(super) fn declared(capabilities: &Value) -> bool {
    capabilities["extensions"]
        .get(rmcp::model::TASKS_EXTENSION_ID)
        .is_some()
}

/// A line's time (RFC 3339, micros) in milliseconds, as task times are written.
fn millis(ts: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(ts)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string()
        })
        .unwrap_or_else(|_| ts.to_string())
}

impl TaskSaid {
    /// Adds a `task` line to the call's task (made at its first).
    pub(super) fn push(task: &mut Option<TaskSaid>, entry: &Entry) {
        let Some(status) = entry.status.clone() else {
            return;
        };
        let t = task.get_or_insert_with(|| TaskSaid {
            id: entry.task_id.clone().unwrap_or_default(),
            said: Vec::new(),
            error: None,
        });
        t.said.push(Said {
            status,
            message: entry.status_message.clone(),
            at: millis(&entry.ts),
        });
    }

    /// The task as it ended: its last status a terminal one (the one the reply
    /// implies when the log has none), the messages hidden as the rules say.
    pub(super) fn ended(mut self, rules: &Redaction, reply: &Reply, response: &Entry) -> TaskSaid {
        for s in &mut self.said {
            if let Some(m) = s.message.as_mut().and_then(|m| rules.text(m)) {
                s.message = Some(m);
            }
        }
        let failed = match reply {
            Reply::Error(e) => Some(e.clone()),
            Reply::Result(_) => response
                .error
                .as_ref()
                .map(|e| e.get("error").cloned().unwrap_or_else(|| e.clone())),
        };
        if !self.said.last().is_some_and(|s| terminal(&s.status)) {
            self.said.push(Said {
                status: if failed.is_some() {
                    "failed"
                } else {
                    "completed"
                }
                .into(),
                message: None,
                at: millis(&response.ts),
            });
        }
        self.error = failed.map(|e| rules.applied_answer(&e));
        self
    }

    /// The task at status `k` (the call's result or error with its last).
    fn state(&self, k: usize, reply: &Reply, created: bool) -> Value {
        let k = k.min(self.said.len() - 1);
        let s = &self.said[k];
        let mut v = Map::new();
        let kind = if created { "task" } else { "complete" };
        v.insert("resultType".into(), json!(kind));
        v.insert("taskId".into(), json!(self.id));
        v.insert("status".into(), json!(s.status));
        if let Some(m) = &s.message {
            v.insert("statusMessage".into(), json!(m));
        }
        v.insert("createdAt".into(), json!(self.said[0].at));
        v.insert("lastUpdatedAt".into(), json!(s.at));
        v.insert("ttlMs".into(), json!(TTL_MS));
        v.insert("pollIntervalMs".into(), json!(POLL_INTERVAL_MS));
        if k + 1 == self.said.len() {
            match (s.status.as_str(), reply, &self.error) {
                ("completed", Reply::Result(result), _) => {
                    v.insert("result".into(), result.clone());
                }
                ("failed", _, Some(error)) => {
                    v.insert("error".into(), error.clone());
                }
                _ => {}
            }
        }
        Value::Object(v)
    }

    /// The task as it stands cancelled.
    fn cancelled(&self) -> Value {
        let mut v = self.state(0, &Reply::Result(Value::Null), false);
        v["status"] = json!("cancelled");
        if let Some(o) = v.as_object_mut() {
            o.remove("statusMessage");
            o.remove("result");
            o.remove("error");
        }
        v
    }
}

impl Recording {
    /// Answer `i`'s task given out, at its first status.
    pub(super) fn task_created(&self, i: usize, task: &TaskSaid) -> Reply {
        self.tasks().insert(
            task.id.clone(),
            Served {
                answer: i,
                at: 0,
                cancelled: false,
            },
        );
        Reply::Result(task.state(0, &self.answers[i].reply, true))
    }

    /// The answer to `tasks/get`, `tasks/cancel` or `tasks/update` of a task this
    /// recording gave out; `None` for any other request.
    pub(super) fn task_method(&self, method: &str, params: Option<&Value>) -> Option<Reply> {
        if !matches!(method, "tasks/get" | "tasks/cancel" | "tasks/update") {
            return None;
        }
        let id = params?.get("taskId")?.as_str()?;
        let mut served = self.tasks();
        let Some(s) = served.get_mut(id) else {
            // Not one of ours: the fallback's, if there is one.
            return self.fallback.is_none().then(|| {
                Reply::Error(json!({
                    "code": -32602,
                    "message": format!("no task {id}: the recording gave out none by that id"),
                    "data": {"taskId": id},
                }))
            });
        };
        let a: &Answer = &self.answers[s.answer];
        let task = a.task.as_ref()?;
        let ended = s.at + 1 >= task.said.len();
        Some(match method {
            "tasks/cancel" => {
                s.cancelled |= !ended;
                Reply::Result(json!({}))
            }
            "tasks/update" => Reply::Result(json!({})),
            _ if s.cancelled => Reply::Result(task.cancelled()),
            _ => {
                s.at = (s.at + 1).min(task.said.len() - 1);
                Reply::Result(task.state(s.at, &a.reply, false))
            }
        })
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Served>> {
        self.served.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::Recording;
    use crate::record::Redaction;
    use serde_json::{Value, json};

    const LOG: &str = r#"{"v":5,"ts":"2026-12-01T10:00:00.000100Z","session":"s","seq":1,"type":"request","call":1,"tool":"structs_calculate_proof_of_work","arguments":{"entity_id":"5-1"}}
{"v":5,"ts":"2026-12-01T10:00:00.001Z","session":"s","seq":2,"type":"task","call":1,"tool":"structs_calculate_proof_of_work","task_id":"t-1","status":"working","status_message":"running"}
{"v":5,"ts":"2026-12-01T10:00:01.500Z","session":"s","seq":3,"type":"task","call":1,"tool":"structs_calculate_proof_of_work","task_id":"t-1","status":"working","status_message":"1000 of 5000 iterations"}
{"v":5,"ts":"2026-12-01T10:00:02.250Z","session":"s","seq":4,"type":"task","call":1,"tool":"structs_calculate_proof_of_work","task_id":"t-1","status":"completed"}
{"v":5,"ts":"2026-12-01T10:00:02.250Z","session":"s","seq":5,"type":"response","call":1,"tool":"structs_calculate_proof_of_work","result":{"nonce":7}}
"#;

    fn recording() -> Arc<Recording> {
        // A file of each call's own: the tests run at once in one process.
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "structs-recorded-tasks-{}-{}.jsonl",
            std::process::id(),
            MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::write(&path, LOG).unwrap();
        let r = Recording::load(&path, None, Redaction::standard()).unwrap();
        let _ = std::fs::remove_file(&path);
        Arc::new(r)
    }

    fn with_tasks() -> Value {
        json!({"io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}}})
    }

    async fn ask(r: &Recording, id: u64, method: &str, params: Value, session: bool) -> Value {
        let m = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        r.reply(&m, None, session).await.expect("an answer")["result"].clone()
    }

    #[tokio::test]
    async fn a_task_is_polled_through_its_recorded_statuses_to_its_result() {
        let r = recording();
        let call = json!({"name": "structs_calculate_proof_of_work",
            "arguments": {"entity_id": "5-1"}, "_meta": with_tasks()});
        let created = ask(&r, 1, "tools/call", call.clone(), false).await;
        assert_eq!(created["resultType"], "task", "{created:#}");
        assert_eq!(created["taskId"], "t-1");
        assert_eq!(
            (&created["status"], &created["statusMessage"]),
            (&json!("working"), &json!("running"))
        );
        assert_eq!(created["createdAt"], "2026-12-01T10:00:00.001Z");
        let get = json!({"taskId": "t-1", "_meta": with_tasks()});
        let second = ask(&r, 2, "tasks/get", get.clone(), false).await;
        assert_eq!(second["status"], "working");
        assert_eq!(second["statusMessage"], "1000 of 5000 iterations");
        assert_eq!(second["lastUpdatedAt"], "2026-12-01T10:00:01.500Z");
        assert!(second.get("result").is_none(), "{second:#}");
        let done = ask(&r, 3, "tasks/get", get.clone(), false).await;
        assert_eq!(done["status"], "completed", "{done:#}");
        assert_eq!(done["result"]["structuredContent"]["nonce"], 7, "{done:#}");
        // Past its end it stays ended.
        assert_eq!(ask(&r, 4, "tasks/get", get, false).await, done);

        // A client without the extension gets the answer itself; a session that
        // declared it at its start, the task.
        let mut plain = call.clone();
        plain["_meta"] = json!({});
        let direct = ask(&r, 5, "tools/call", plain.clone(), false).await;
        assert_eq!(direct["structuredContent"]["nonce"], 7, "{direct:#}");
        assert_eq!(
            ask(&r, 6, "tools/call", plain, true).await["resultType"],
            "task"
        );
    }

    #[tokio::test]
    async fn a_task_cancelled_says_so_and_an_unknown_task_is_a_miss() {
        let r = recording();
        let call = json!({"name": "structs_calculate_proof_of_work",
            "arguments": {"entity_id": "5-1"}, "_meta": with_tasks()});
        ask(&r, 1, "tools/call", call, false).await;
        let cancel = ask(&r, 2, "tasks/cancel", json!({"taskId": "t-1"}), false).await;
        assert_eq!(cancel, json!({}));
        let after = ask(&r, 3, "tasks/get", json!({"taskId": "t-1"}), false).await;
        assert_eq!(after["status"], "cancelled", "{after:#}");
        assert!(after.get("result").is_none());
        let m =
            json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"taskId": "t-9"}});
        let unknown = r.reply(&m, None, false).await.unwrap();
        assert_eq!(unknown["error"]["code"], -32602, "{unknown:#}");
        assert!(
            unknown["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no task t-9"),
            "{unknown:#}"
        );
    }
}
