//! The HTTP headers a 2026-07-28 request travels with. The revision has a host say
//! what a request is outside its body too: `Mcp-Method`, `Mcp-Name` (the tool, the
//! prompt or the resource named) and `MCP-Protocol-Version`, which a server checks
//! against the body. The proxy's pumps pass lines, not HTTP, so these headers go
//! beside them:
//!
//! - behind the HTTP face, the headers each host request came with are noted by its
//!   id ([`HostHeaders`]): the tap records them with the call, and the link upstream
//!   sends them as the host did (a wrong header reaches the server wrong, as it would
//!   without the proxy);
//! - a request that came without them (from a stdio host, which has no headers) gets
//!   the ones its body says ([`from_body`]), so a stdio host reaches a 2026-07-28
//!   server over HTTP.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::http::HeaderMap;
use serde_json::{Map, Value};

/// The headers of the revision, as the log names them.
pub const NAMES: [&str; 3] = ["Mcp-Method", "Mcp-Name", "MCP-Protocol-Version"];

/// The most requests whose headers wait for the link to send them; past it, all are
/// forgotten (those requests then go with the headers their bodies say). Headers of a
/// request the proxy answers itself (a fault, a breakpoint) are never taken, and go
/// this way.
const KEPT: usize = 4096;

/// Where a 2026-07-28 request names its protocol version.
const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

/// Headers by request id (its JSON text), from the HTTP face to the tap and the link.
#[derive(Default)]
pub(crate) struct HostHeaders {
    by_id: Mutex<HashMap<String, Value>>,
}

impl HostHeaders {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Value>> {
        self.by_id.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes the revision's headers of `headers`, if it has any, for request `id`.
    pub fn note(&self, id: &str, headers: &HeaderMap) {
        let kept = of_request(headers);
        if kept.is_empty() {
            return;
        }
        let mut by_id = self.lock();
        if by_id.len() >= KEPT {
            by_id.clear();
        }
        by_id.insert(id.to_string(), Value::Object(kept));
    }

    /// The headers request `id` came with, left for the link.
    pub fn peek(&self, id: &str) -> Option<Value> {
        self.lock().get(id).cloned()
    }

    /// The headers request `id` came with, taken (by the link, which sends them).
    pub fn take(&self, id: &str) -> Option<Value> {
        self.lock().remove(id)
    }
}

/// The revision's headers among `headers`, by their names in [`NAMES`].
fn of_request(headers: &HeaderMap) -> Map<String, Value> {
    NAMES
        .iter()
        .filter_map(|name| {
            let value = headers.get(*name)?.to_str().ok()?;
            Some(((*name).to_string(), Value::String(value.to_string())))
        })
        .collect()
}

/// The headers a 2026-07-28 message's body says it should travel with: none for a
/// message of an older revision (no protocol version in its `_meta`).
pub fn from_body(message: &Value) -> Map<String, Value> {
    let mut headers = Map::new();
    let Some(version) = message["params"]["_meta"][VERSION_META].as_str() else {
        return headers;
    };
    headers.insert(NAMES[2].into(), Value::String(version.to_string()));
    let Some(method) = message["method"].as_str() else {
        return headers;
    };
    headers.insert(NAMES[0].into(), Value::String(method.to_string()));
    let name = match method {
        "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
        "resources/read" => message["params"]["uri"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        headers.insert(NAMES[1].into(), Value::String(name.to_string()));
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_2026_body_says_its_headers_and_an_older_one_none() {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "add", "arguments": {}, "_meta": {VERSION_META: "2026-07-28"}}});
        assert_eq!(
            Value::Object(from_body(&call)),
            json!({"Mcp-Method": "tools/call", "Mcp-Name": "add",
                   "MCP-Protocol-Version": "2026-07-28"})
        );
        let read = json!({"method": "resources/read", "params": {"uri": "a://b",
            "_meta": {VERSION_META: "2026-07-28"}}});
        assert_eq!(from_body(&read)["Mcp-Name"], "a://b");
        let list =
            json!({"method": "tools/list", "params": {"_meta": {VERSION_META: "2026-07-28"}}});
        assert!(from_body(&list).get("Mcp-Name").is_none());
        let old = json!({"method": "tools/call", "params": {"name": "add"}});
        assert!(from_body(&old).is_empty());
    }

    #[test]
    fn a_hosts_headers_are_kept_by_request_until_taken() {
        let notes = HostHeaders::default();
        let mut headers = HeaderMap::new();
        headers.insert("mcp-method", "tools/call".parse().unwrap());
        headers.insert("mcp-name", "add".parse().unwrap());
        headers.insert("accept", "application/json".parse().unwrap());
        notes.note("7", &headers);
        notes.note("8", &HeaderMap::new());
        assert_eq!(
            notes.peek("7"),
            Some(json!({"Mcp-Method": "tools/call", "Mcp-Name": "add"}))
        );
        assert!(notes.take("7").is_some());
        assert!(notes.take("7").is_none());
        assert!(notes.peek("8").is_none());
    }
}
