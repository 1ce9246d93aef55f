//! The proxy's own requests for watchers: a page of a result handle fetched from the
//! watched server through an agent's session, on a request id the agent never sees.

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{Board, Broker, FETCH_TOOL, FETCH_WAIT};

impl Board {
    /// `{"cmd": "fetch", "handle", "page", "session"}`: a page of a result handle,
    /// fetched from the watched server through an agent's session (the one named, else
    /// any), on a request of the proxy's own that the agent never sees.
    pub(in crate::mcp::proxy) async fn fetch(&self, body: &Value) -> Value {
        let refused = |why: String| json!({"type": "refused", "cmd": "fetch", "handle": body["handle"], "reason": why});
        let Some(handle) = body["handle"].as_str().filter(|h| !h.is_empty()) else {
            return refused("name the \"handle\" to fetch".into());
        };
        let page = match body.get("page") {
            None => 1,
            Some(p) => match p.as_u64().filter(|p| *p >= 1) {
                Some(p) => p,
                None => return refused(format!("\"page\" is a page number from 1, not {p}")),
            },
        };
        let brokers = self.brokers();
        // A named session that has gone is refused, never swapped for another agent's.
        let chosen = match body["session"].as_str() {
            Some(s) => match brokers.iter().find(|b| b.session == s) {
                Some(b) => Some(b),
                None => {
                    return refused(format!(
                        "session {s} has ended: a handle is fetched through the session that made it"
                    ));
                }
            },
            None => brokers.first(),
        };
        let Some(broker) = chosen.cloned() else {
            return refused(
                "no agent is connected: a handle is fetched through an agent's session".into(),
            );
        };
        match broker.fetch_handle(handle, page).await {
            Ok(result) => {
                json!({"type": "ack", "cmd": "fetch", "handle": handle, "result": result})
            }
            Err(why) => refused(why),
        }
    }
}

impl Broker {
    /// Fetches a page of `handle` from the server, on a request of the proxy's own in
    /// this session: its answer goes to the watcher that asked, not to the agent.
    async fn fetch_handle(&self, handle: &str, page: u64) -> Result<Value, String> {
        let n = {
            let mut rules = self.board.rules();
            rules.next_own += 1;
            rules.next_own - 1
        };
        let id = json!(format!("structs-console-proxy-{n}"));
        let key = id.to_string();
        let (tx, rx) = oneshot::channel();
        self.lock().own.insert(key.clone(), tx);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": FETCH_TOOL, "arguments": {"handle": handle, "page": page}}});
        let mut line = request.to_string().into_bytes();
        line.push(b'\n');
        if self.to_server.send(line).is_err() {
            self.lock().own.remove(&key);
            return Err("the session has ended".into());
        }
        let answer = match tokio::time::timeout(FETCH_WAIT, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => return Err("the session ended before the server answered".into()),
            Err(_) => {
                self.lock().own.remove(&key);
                return Err(format!(
                    "the watched server did not answer in {} s",
                    FETCH_WAIT.as_secs()
                ));
            }
        };
        if let Some(error) = answer.get("error") {
            return Err(format!(
                "the watched server refused {FETCH_TOOL}: {}",
                error["message"].as_str().unwrap_or("no reason given")
            ));
        }
        crate::mcp::wire::tool_outcome(&answer["result"]).map_err(|e| {
            let e = e.get("error").unwrap_or(&e);
            format!(
                "{} {}",
                e["code"].as_str().unwrap_or("error"),
                e["message"].as_str().unwrap_or("")
            )
        })
    }
}
