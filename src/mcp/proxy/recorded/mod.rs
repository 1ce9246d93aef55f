//! `structs-console serve-recording FILE`: a session log answering as the server it
//! recorded, so that an agent's tests run with no world and no network and the same
//! input gives the same answers.
//!
//! Each request is matched by its method and its params (a tool call by its name and
//! arguments; keys in any order; `_meta` left out, and a secret's value, which the log
//! never holds, matching any). Repeated identical requests are answered in the order
//! they were recorded, and past the last recorded one with the last again; a session's
//! requests (its `initialize` first) keep their own count, stateless requests (2026-07-28)
//! share one. A tool call's result comes back as the host got it (version 5 logs keep it
//! whole, [`crate::record::wire`]); a call that went through rounds of input asks for
//! the same input again, round by round, before its answer. A call the server ran as a
//! task is a task again for a client that declares the Tasks extension ([`tasks`]).
//!
//! A request the log lacks gets a JSON-RPC error naming the nearest recorded one
//! (`-32602`; `-32601` when the log has no request of that method at all), or, with
//! `--fallback TARGET`, goes to that server and its answer is given (and, under the
//! tap's `--record`, recorded). `ping` is always answered.
//!
//! The recording stands where the proxy's upstream server stands ([`super::Upstream`]),
//! so it is served over stdio and over streamable HTTP (both revisions), tapped,
//! recorded and watched as any server behind the proxy is.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::mcp::client::{Remote, Target};
use crate::record::{Entry, Kind, LogReader, Redaction};

mod tasks;
use tasks::{Served, TaskSaid};

/// The prefix of the `requestState` a recording gives a call in rounds.
const STATE_PREFIX: &str = "structs-recording:";

/// What a recorded request was answered.
#[derive(Debug, Clone)]
enum Reply {
    /// A JSON-RPC result.
    Result(Value),
    /// A JSON-RPC error object (`code`, `message`, `data`).
    Error(Value),
}

/// One recorded request and its answer.
#[derive(Debug, Clone)]
struct Answer {
    method: String,
    /// What the log calls it (`structs_query_player`, `prompts/get next`).
    name: String,
    /// Its params as matched (see [`matched_params`]).
    params: Value,
    reply: Reply,
    /// What the server asked in each round of input, in order.
    rounds: Vec<Value>,
    /// The task the call became, when it became one.
    task: Option<TaskSaid>,
    /// The request's line in the log.
    line: u64,
}

/// A request read, waiting for its response.
struct Open {
    request: Entry,
    line: u64,
    rounds: Vec<Value>,
    task: Option<TaskSaid>,
}

/// A session log loaded to answer from.
pub struct Recording {
    shown: String,
    answers: Vec<Answer>,
    /// Identical requests' answers, in recorded order, by [`key`].
    by_key: HashMap<u64, Vec<usize>>,
    /// Every answer of a method, for the nearest to a miss.
    by_method: HashMap<String, Vec<usize>>,
    /// How far stateless requests have got through each key's answers.
    shared: Mutex<HashMap<u64, usize>>,
    fallback: Option<Fallback>,
    /// The tasks given out, by id: where each has got to.
    served: Mutex<HashMap<String, Served>>,
    /// What no answer gives and no match depends on ([`crate::record::redact`]).
    redaction: Arc<Redaction>,
}

/// The server misses go to, connected at the first.
struct Fallback {
    target: Target,
    token: Option<String>,
    remote: tokio::sync::OnceCell<Arc<Remote>>,
}

/// A request's params as matched: without `_meta` and the state of rounds; a tool
/// call's as `{"name", "arguments"}`; `initialize` and `server/discover` by method alone.
/// What the redaction rules hide is blurred ([`Redaction::blurred`]): the log never held
/// a secret, so a secret in its place matches any other.
fn matched_params(rules: &Redaction, method: &str, params: Option<&Value>) -> Value {
    let normalize = |v: &Value| rules.blurred(v);
    let params = params.cloned().unwrap_or(Value::Null);
    match method {
        "initialize" | "server/discover" => Value::Null,
        "tools/call" => json!({
            "name": params["name"],
            "arguments": normalize(params.get("arguments").filter(|a| !a.is_null()).unwrap_or(&json!({}))),
        }),
        _ => match params {
            Value::Object(mut m) => {
                for k in ["_meta", "inputResponses", "requestState"] {
                    m.remove(k);
                }
                if m.is_empty() {
                    Value::Null
                } else {
                    normalize(&Value::Object(m))
                }
            }
            other => normalize(&other),
        },
    }
}

/// A reply with what the rules hide hidden (a log written under fewer rules holds it).
fn redacted(rules: &Redaction, reply: Reply) -> Reply {
    match reply {
        Reply::Result(v) => Reply::Result(rules.applied_answer(&v)),
        Reply::Error(e) => Reply::Error(rules.applied_answer(&e)),
    }
}

fn key(method: &str, params: &Value) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    method.hash(&mut h);
    crate::json::canonical(params).to_string().hash(&mut h);
    h.finish()
}

/// A tool call's recorded answer as the JSON-RPC reply the host got.
fn tool_reply(entry: &Entry) -> Reply {
    let wire = entry.wire.as_ref();
    match (&entry.result, &entry.error) {
        (Some(v), _) => Reply::Result(crate::record::wire::rebuild(v, false, wire)),
        (None, Some(e)) => {
            let inner = &e["error"];
            let rpc = inner["code"].is_i64() && e.as_object().is_some_and(|o| o.len() == 1);
            if rpc && wire.is_none() {
                Reply::Error(inner.clone())
            } else {
                Reply::Result(crate::record::wire::rebuild(e, true, wire))
            }
        }
        (None, None) => Reply::Result(Value::Null),
    }
}

/// Another request's recorded answer.
fn other_reply(entry: &Entry) -> Reply {
    match (&entry.result, &entry.error) {
        (Some(v), _) => Reply::Result(v.clone()),
        (None, Some(e)) => Reply::Error(e.get("error").cloned().unwrap_or_else(|| e.clone())),
        (None, None) => Reply::Result(Value::Null),
    }
}

impl Recording {
    /// Reads the log at `path`; a miss goes to `fallback` when given. What `redaction`
    /// hides is never served.
    ///
    /// # Errors
    ///
    /// When the log cannot be read, or holds no answered request.
    pub fn load(
        path: &Path,
        fallback: Option<(Target, Option<String>)>,
        redaction: Arc<Redaction>,
    ) -> anyhow::Result<Recording> {
        let mut reader = LogReader::open(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        let mut open: HashMap<(String, u64), Open> = HashMap::new();
        let mut answers = Vec::new();
        loop {
            let Some(item) = reader.next() else { break };
            let line = reader.line();
            let Ok(Ok(entry)) = item else { continue };
            let Some(call) = entry.call else { continue };
            let at = (entry.session.clone(), call);
            match entry.kind {
                Kind::Request => {
                    open.insert(
                        at,
                        Open {
                            request: entry,
                            line,
                            rounds: Vec::new(),
                            task: None,
                        },
                    );
                }
                Kind::Round => {
                    if let Some(o) = open.get_mut(&at) {
                        o.rounds
                            .push(entry.input_requests.clone().unwrap_or(Value::Null));
                    }
                }
                Kind::Task => {
                    if let Some(o) = open.get_mut(&at) {
                        TaskSaid::push(&mut o.task, &entry);
                    }
                }
                Kind::Response => {
                    if let Some(o) = open.remove(&at) {
                        answers.push(Self::answer(&redaction, o, &entry));
                    }
                }
                _ => {}
            }
        }
        if answers.is_empty() {
            anyhow::bail!("{} holds no answered request to serve", path.display());
        }
        answers.sort_by_key(|a| a.line);
        let mut by_key: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut by_method: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, a) in answers.iter().enumerate() {
            by_key.entry(key(&a.method, &a.params)).or_default().push(i);
            by_method.entry(a.method.clone()).or_default().push(i);
        }
        Ok(Recording {
            shown: format!("the recording {}", path.display()),
            answers,
            by_key,
            by_method,
            shared: Mutex::default(),
            served: Mutex::default(),
            fallback: fallback.map(|(target, token)| Fallback {
                target,
                token,
                remote: tokio::sync::OnceCell::new(),
            }),
            redaction,
        })
    }

    fn answer(rules: &Redaction, open: Open, response: &Entry) -> Answer {
        let Open {
            request,
            line,
            rounds,
            task,
        } = open;
        let method = request
            .method
            .clone()
            .unwrap_or_else(|| "tools/call".to_string());
        let name = request.tool.clone().unwrap_or_else(|| method.clone());
        let (params, reply) = if method == "tools/call" {
            let params =
                json!({"name": name, "arguments": request.arguments.clone().unwrap_or(json!({}))});
            (
                matched_params(rules, &method, Some(&params)),
                tool_reply(response),
            )
        } else {
            (
                matched_params(rules, &method, request.params.as_ref()),
                other_reply(response),
            )
        };
        let reply = redacted(rules, reply);
        let rounds = rounds.iter().map(|r| rules.applied_answer(r)).collect();
        let task = task.map(|t| t.ended(rules, &reply, response));
        Answer {
            method,
            name,
            params,
            reply,
            rounds,
            task,
            line,
        }
    }

    /// How the recording is named in the log and on the console.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// How many requests the recording can answer.
    pub fn len(&self) -> usize {
        self.answers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// Serves one session (or one stateless request): reads the host's lines from
    /// `input` and writes the answers to `output`, until `input` ends. Never loses the
    /// session (`false`, as [`super::Upstream::run`] says it).
    pub async fn run<R, W>(self: Arc<Self>, input: R, output: W) -> bool
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let mut output = output;
        let mut lines = BufReader::new(input).lines();
        // A session (its `initialize` first) counts its own way through repeated
        // requests; stateless requests share the recording's count.
        let mut own: Option<HashMap<u64, usize>> = None;
        // Whether the session's client declared the Tasks extension when it began.
        let mut tasks_declared = false;
        let mut first = true;
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if first {
                first = false;
                if message["method"] == "initialize" {
                    own = Some(HashMap::new());
                    tasks_declared = tasks::declared(&message["params"]["capabilities"]);
                }
            }
            let Some(reply) = self.reply(&message, own.as_mut(), tasks_declared).await else {
                continue;
            };
            let mut bytes = reply.to_string().into_bytes();
            bytes.push(b'\n');
            if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
        let _ = output.shutdown().await;
        false
    }

    /// The JSON-RPC answer to `message`, or `None` for a notification or a response.
    /// `tasks_declared`: the session's client declared the Tasks extension (a stateless
    /// request declares it in its own `_meta`).
    async fn reply(
        &self,
        message: &Value,
        own: Option<&mut HashMap<u64, usize>>,
        tasks_declared: bool,
    ) -> Option<Value> {
        let id = message.get("id").filter(|id| !id.is_null())?.clone();
        let method = message["method"].as_str()?;
        let answered = |reply: Reply| match reply {
            Reply::Result(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Reply::Error(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        if method == "ping" {
            return Some(answered(Reply::Result(json!({}))));
        }
        let params = message.get("params");
        let tasks_ok = tasks_declared
            || tasks::declared(
                &message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            );
        // A task this recording gave out, asked after.
        if let Some(reply) = self.task_method(method, params) {
            return Some(answered(reply));
        }
        // The next round of a call in rounds, by the state this recording gave it.
        if let Some(state) = params
            .and_then(|p| p["requestState"].as_str())
            .and_then(|s| s.strip_prefix(STATE_PREFIX))
            && let Some((i, round)) = state
                .split_once(':')
                .and_then(|(i, r)| Some((i.parse::<usize>().ok()?, r.parse::<usize>().ok()?)))
            && let Some(a) = self.answers.get(i)
        {
            return Some(answered(self.round(i, a, round, tasks_ok)));
        }
        let matched = matched_params(&self.redaction, method, params);
        let k = key(method, &matched);
        let Some(found) = self.by_key.get(&k) else {
            return Some(answered(self.miss(method, params, &matched).await));
        };
        let i = {
            let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
            let cursors = match own {
                Some(own) => own,
                None => &mut *shared,
            };
            let next = cursors.entry(k).or_insert(0);
            let i = found[(*next).min(found.len() - 1)];
            *next += 1;
            i
        };
        let a = &self.answers[i];
        Some(answered(self.round(i, a, 0, tasks_ok)))
    }

    /// Answer `i` at round `round`: the input its server asked for next, or its reply
    /// (the task it became, to a client that may be given one).
    fn round(&self, i: usize, a: &Answer, round: usize, tasks_ok: bool) -> Reply {
        match (a.rounds.get(round), &a.task) {
            (Some(asked), _) => Reply::Result(json!({
                "resultType": "input_required",
                "inputRequests": asked,
                "requestState": format!("{STATE_PREFIX}{i}:{}", round + 1),
            })),
            (None, Some(task)) if tasks_ok => self.task_created(i, task),
            (None, _) => a.reply.clone(),
        }
    }

    /// A request the log lacks: the fallback's answer, or an error naming the nearest.
    async fn miss(&self, method: &str, params: Option<&Value>, matched: &Value) -> Reply {
        if let Some(f) = &self.fallback {
            return f.ask(method, params).await;
        }
        let Some(same) = self.by_method.get(method) else {
            let methods: Vec<&str> = {
                let mut m: Vec<&str> = self.by_method.keys().map(String::as_str).collect();
                m.sort_unstable();
                m
            };
            return Reply::Error(json!({
                "code": -32601,
                "message": format!("the recording holds no {method} request (it holds {})", methods.join(", ")),
                "data": {"method": method},
            }));
        };
        // The same tool (prompt, resource) first, then the closest params as text.
        let wanted = crate::json::canonical(matched).to_string();
        let named = |p: &Value| p.get("name").or_else(|| p.get("uri")).cloned();
        let nearest = same
            .iter()
            .map(|&i| &self.answers[i])
            .min_by_key(|a| {
                let other = named(&a.params) != named(matched);
                let text = crate::json::canonical(&a.params).to_string();
                (other, crate::text::edit_distance(&wanted, &text))
            })
            .expect("a method's answers are never empty");
        let given = |p: &Value| match method {
            "tools/call" => format!("{} {}", p["name"].as_str().unwrap_or("?"), p["arguments"]),
            _ if p.is_null() => String::new(),
            _ => p.to_string(),
        };
        Reply::Error(json!({
            "code": -32602,
            "message": format!(
                "the recording holds no {method} {}; the nearest it holds is {} {} (line {})",
                given(matched), method, given(&nearest.params), nearest.line
            ),
            "data": {
                "method": method,
                "nearest": {"name": nearest.name, "params": nearest.params, "line": nearest.line},
            },
        }))
    }
}

impl Fallback {
    /// Asks the fallback server, connecting at the first miss.
    async fn ask(&self, method: &str, params: Option<&Value>) -> Reply {
        let remote = self
            .remote
            .get_or_try_init(|| Remote::connect(self.target.clone(), self.token.clone()))
            .await;
        let remote = match remote {
            Ok(r) => r,
            Err(e) => {
                return Reply::Error(json!({
                    "code": -32603,
                    "message": format!("the recording lacks this request, and the fallback {} cannot be reached: {e:#}", self.target.describe()),
                }));
            }
        };
        let mut params = params.cloned().unwrap_or(json!({}));
        if let Some(p) = params.as_object_mut() {
            p.remove("_meta");
        }
        match remote
            .request_once(method, params, crate::context::CallContext::new())
            .await
        {
            Ok(result) => Reply::Result(result),
            Err(e) => match e.extra.get("jsonrpc_code").and_then(Value::as_i64) {
                Some(code) => Reply::Error(json!({"code": code, "message": e.message})),
                None => Reply::Error(json!({
                    "code": -32603,
                    "message": format!("the fallback {}: {}", self.target.describe(), e.message),
                    "data": e.to_json(&chrono::Utc::now().to_rfc3339()),
                })),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"v":5,"ts":"2026-12-01T10:00:00Z","session":"s","seq":1,"type":"request","call":1,"method":"initialize","tool":"initialize","params":{"protocolVersion":"2025-11-25"}}
{"v":5,"ts":"2026-12-01T10:00:00Z","session":"s","seq":2,"type":"response","call":1,"tool":"initialize","result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"rec"}}}
{"v":5,"ts":"2026-12-01T10:00:01Z","session":"s","seq":3,"type":"request","call":2,"tool":"q","arguments":{"id":"1-1","token":"[redacted: 9 bytes]"}}
{"v":5,"ts":"2026-12-01T10:00:01Z","session":"s","seq":4,"type":"response","call":2,"tool":"q","result":{"n":1}}
{"v":5,"ts":"2026-12-01T10:00:02Z","session":"s","seq":5,"type":"request","call":3,"tool":"q","arguments":{"token":"[redacted: 9 bytes]","id":"1-1"}}
{"v":5,"ts":"2026-12-01T10:00:02Z","session":"s","seq":6,"type":"response","call":3,"tool":"q","result":{"n":2},"wire":{"resultType":"complete","content":[{"type":"text","textIsValue":true}],"structuredContent":true,"isError":false}}
{"v":5,"ts":"2026-12-01T10:00:03Z","session":"s","seq":7,"type":"request","call":4,"tool":"confirm","arguments":{"id":"5-1"}}
{"v":5,"ts":"2026-12-01T10:00:03Z","session":"s","seq":8,"type":"round","call":4,"tool":"confirm","round":1,"input_requests":{"c":{"method":"elicitation/create"}},"input_responses":{"c":{"action":"accept"}}}
{"v":5,"ts":"2026-12-01T10:00:03Z","session":"s","seq":9,"type":"response","call":4,"tool":"confirm","error":{"error":{"code":"TOOL_CANCELLED","message":"no"}}}
{"v":5,"ts":"2026-12-01T10:00:04Z","session":"s","seq":10,"type":"request","call":5,"method":"prompts/get","tool":"prompts/get brief","params":{"name":"brief","arguments":{"entity_id":"1-1"}}}
{"v":5,"ts":"2026-12-01T10:00:04Z","session":"s","seq":11,"type":"response","call":5,"tool":"prompts/get brief","error":{"error":{"code":-32602,"message":"unknown prompt"}}}
"#;

    fn recording() -> Arc<Recording> {
        // A file of each call's own: the tests run at once in one process.
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "structs-recorded-{}-{}.jsonl",
            std::process::id(),
            MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::write(&path, LOG).unwrap();
        let r = Recording::load(&path, None, Redaction::standard()).unwrap();
        let _ = std::fs::remove_file(&path);
        Arc::new(r)
    }

    async fn ask(r: &Arc<Recording>, own: Option<&mut HashMap<u64, usize>>, m: Value) -> Value {
        r.reply(&m, own, false).await.expect("an answer")
    }

    fn call(id: u64, tool: &str, args: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": tool, "arguments": args, "_meta": {"progressToken": 1}}})
    }

    #[tokio::test]
    async fn repeated_calls_come_back_in_recorded_order_then_the_last_again() {
        let r = recording();
        let mut own = HashMap::new();
        let init = ask(
            &r,
            Some(&mut own),
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "other"}}}),
        )
        .await;
        assert_eq!(init["result"]["serverInfo"]["name"], "rec");
        // A secret of another value matches; the keys' order does not matter.
        let args = json!({"token": "another-secret", "id": "1-1"});
        let first = ask(&r, Some(&mut own), call(1, "q", args.clone())).await;
        assert_eq!(first["result"]["structuredContent"], json!({"n": 1}));
        assert_eq!(first["result"]["content"][0]["text"], r#"{"n":1}"#);
        let second = ask(&r, Some(&mut own), call(2, "q", args.clone())).await;
        assert_eq!(
            second["result"]["resultType"], "complete",
            "as the host got it: {second}"
        );
        assert_eq!(second["result"]["structuredContent"], json!({"n": 2}));
        let third = ask(&r, Some(&mut own), call(3, "q", args.clone())).await;
        assert_eq!(
            third["result"]["structuredContent"],
            json!({"n": 2}),
            "the last again"
        );
        // Another session starts from the first; so do stateless requests.
        let mut other = HashMap::new();
        let again = ask(&r, Some(&mut other), call(4, "q", args.clone())).await;
        assert_eq!(again["result"]["structuredContent"], json!({"n": 1}));
        let stateless = ask(&r, None, call(5, "q", args)).await;
        assert_eq!(stateless["result"]["structuredContent"], json!({"n": 1}));
        let ping = ask(
            &r,
            None,
            json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
        )
        .await;
        assert_eq!(ping["result"], json!({}));
        assert!(
            r.reply(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                None,
                false
            )
            .await
            .is_none()
        );
    }

    #[tokio::test]
    async fn a_call_in_rounds_asks_again_and_an_error_comes_back_as_it_was() {
        let r = recording();
        let asked = ask(&r, None, call(1, "confirm", json!({"id": "5-1"}))).await;
        assert_eq!(asked["result"]["resultType"], "input_required");
        assert_eq!(
            asked["result"]["inputRequests"]["c"]["method"],
            "elicitation/create"
        );
        let state = asked["result"]["requestState"]
            .as_str()
            .unwrap()
            .to_string();
        let mut again = call(2, "confirm", json!({"id": "5-1"}));
        again["params"]["inputResponses"] = json!({"c": {"action": "accept"}});
        again["params"]["requestState"] = json!(state);
        let done = ask(&r, None, again).await;
        assert_eq!(done["result"]["isError"], true);
        assert_eq!(
            done["result"]["structuredContent"]["error"]["code"],
            "TOOL_CANCELLED"
        );
        let prompt = ask(
            &r,
            None,
            json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get",
            "params": {"arguments": {"entity_id": "1-1"}, "name": "brief"}}),
        )
        .await;
        assert_eq!(prompt["error"]["code"], -32602);
        assert_eq!(prompt["error"]["message"], "unknown prompt");
    }

    #[tokio::test]
    async fn a_miss_names_the_nearest_recorded_request() {
        let r = recording();
        let miss = ask(&r, None, call(1, "q", json!({"id": "1-2"}))).await;
        assert_eq!(miss["error"]["code"], -32602, "{miss}");
        let message = miss["error"]["message"].as_str().unwrap();
        assert!(message.contains(r#"q {"id":"1-2"}"#), "{message}");
        assert!(
            message.contains("nearest") && message.contains("(line 3)"),
            "{message}"
        );
        assert_eq!(miss["error"]["data"]["nearest"]["name"], "q");
        let unknown = ask(
            &r,
            None,
            json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"}),
        )
        .await;
        assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
        assert!(
            unknown["error"]["message"]
                .as_str()
                .unwrap()
                .contains("tools/call")
        );
    }
}
