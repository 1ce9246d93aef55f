//! A tool asking its client mid-call, in a session: the request sent to the client on
//! the call's own connection, once the client declared the capability it needs.

use rmcp::model::{ClientCapabilities, ServerRequest};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::context::{ClientAsk, Unasked};

/// The capability a request to the client needs, by its method.
fn capability(method: &str) -> Option<&'static str> {
    match method {
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// Whether `caps` declares `capability`.
fn declares(caps: Option<&ClientCapabilities>, capability: &str) -> bool {
    caps.is_some_and(|c| match capability {
        "sampling" => c.sampling.is_some(),
        "elicitation" => c.elicitation.is_some(),
        "roots" => c.roots.is_some(),
        _ => false,
    })
}

/// How a session's calls ask `peer`, whose declared capabilities are `caps`.
pub(super) fn asker(peer: Peer<RoleServer>, caps: Option<ClientCapabilities>) -> ClientAsk {
    std::sync::Arc::new(move |method: &'static str, params: Value| {
        let peer = peer.clone();
        let caps = caps.clone();
        Box::pin(async move {
            let Some(needed) = capability(method) else {
                return Err(Unasked::Failed(format!(
                    "{method} is not a request a server sends its client"
                )));
            };
            if !declares(caps.as_ref(), needed) {
                return Err(Unasked::Undeclared(needed));
            }
            let request: ServerRequest =
                serde_json::from_value(json!({"method": method, "params": params}))
                    .map_err(|e| Unasked::Failed(format!("{method}: {e}")))?;
            let answer = peer
                .send_request(request)
                .await
                .map_err(|e| Unasked::Failed(format!("{method}: {e}")))?;
            serde_json::to_value(answer).map_err(|e| Unasked::Failed(format!("{method}: {e}")))
        })
    })
}

/// How a stateless request's calls ask: a capability the request did not declare is
/// still refused as such (`-32021`), and a declared one finds no connection to ask on:
/// rounds of input for a tool's own questions are not built yet.
pub(super) fn unreachable(caps: Option<ClientCapabilities>) -> ClientAsk {
    std::sync::Arc::new(move |method: &'static str, _params: Value| {
        let declared = capability(method).is_some_and(|c| declares(caps.as_ref(), c));
        let answer = match capability(method) {
            Some(needed) if !declared => Err(Unasked::Undeclared(needed)),
            _ => Err(Unasked::NoClient(format!(
                "{method}: a stateless request's tool cannot ask its client yet (no input rounds for tools)"
            ))),
        };
        Box::pin(async move { answer })
    })
}

/// The `-32021` for a call that needed `capability` of a client that did not declare
/// it, its `data.requiredCapabilities` naming it.
pub(super) fn undeclared(capability: &str) -> rmcp::ErrorData {
    let required: ClientCapabilities =
        serde_json::from_value(json!({ capability: {} })).unwrap_or_default();
    rmcp::ErrorData::missing_required_client_capability(required)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_request_needs_its_capability_and_the_error_names_it() {
        let caps: ClientCapabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
        assert!(declares(Some(&caps), "elicitation"));
        assert!(!declares(Some(&caps), "sampling"));
        assert!(!declares(None, "elicitation"));
        assert_eq!(capability("sampling/createMessage"), Some("sampling"));
        assert_eq!(capability("tools/list"), None);
        let e = serde_json::to_value(undeclared("sampling")).unwrap();
        assert_eq!(e["code"], -32021);
        assert_eq!(e["data"]["requiredCapabilities"], json!({"sampling": {}}));
    }
}
