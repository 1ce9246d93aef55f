//! A tool asking its client mid-call: in a session, the request sent to the client on
//! the call's own connection; on a stateless request, the question kept for the call's
//! `input_required` answer ([`super::rounds`]). Either way only once the client declared
//! the capability the request needs.

use std::sync::Arc;

use rmcp::model::{ClientCapabilities, ServerRequest};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use super::ask::rounds::{Inputs, may_ask};
use crate::context::{ClientAsk, Unasked};

/// Whether `caps` declares `capability`.
fn declares(caps: Option<&ClientCapabilities>, capability: &str) -> bool {
    caps.is_some_and(|c| match capability {
        "sampling" => c.sampling.is_some(),
        "elicitation" => c.elicitation.is_some(),
        "roots" => c.roots.is_some(),
        _ => false,
    })
}

/// The capabilities of `caps` a tool may ask under.
pub(super) fn declared(caps: Option<&ClientCapabilities>) -> Vec<&'static str> {
    ["sampling", "elicitation", "roots"]
        .into_iter()
        .filter(|c| declares(caps, c))
        .collect()
}

/// How a session's calls ask `peer`, whose declared capabilities are `caps`.
pub(super) fn asker(peer: Peer<RoleServer>, caps: Option<ClientCapabilities>) -> ClientAsk {
    let declared = declared(caps.as_ref());
    let allowed = declared.clone();
    let ask = Arc::new(move |_key: String, method: &'static str, params: Value| {
        let peer = peer.clone();
        let checked = may_ask(method, &allowed);
        Box::pin(async move {
            checked?;
            let request: ServerRequest =
                serde_json::from_value(json!({"method": method, "params": params}))
                    .map_err(|e| Unasked::Failed(format!("{method}: {e}")))?;
            let answer = peer
                .send_request(request)
                .await
                .map_err(|e| Unasked::Failed(format!("{method}: {e}")))?;
            serde_json::to_value(answer).map_err(|e| Unasked::Failed(format!("{method}: {e}")))
        }) as std::pin::Pin<Box<dyn Future<Output = Result<Value, Unasked>> + Send>>
    });
    ClientAsk { ask, declared }
}

/// How a stateless request's calls ask: each question answered from `inputs`, or kept
/// for the call's `input_required` answer. A capability the request did not declare is
/// refused as such (`-32021`).
pub(super) fn in_rounds(inputs: Arc<Inputs>) -> ClientAsk {
    let declared = inputs.declared().to_vec();
    let ask = Arc::new(move |key: String, method: &'static str, params: Value| {
        let answer = inputs.answer(&key, method, params);
        Box::pin(async move { answer })
            as std::pin::Pin<Box<dyn Future<Output = Result<Value, Unasked>> + Send>>
    });
    ClientAsk { ask, declared }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::server::ask::rounds::undeclared;

    #[test]
    fn each_request_needs_its_capability_and_the_error_names_it() {
        let caps: ClientCapabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
        assert!(declares(Some(&caps), "elicitation"));
        assert!(!declares(Some(&caps), "sampling"));
        assert!(!declares(None, "elicitation"));
        assert_eq!(declared(Some(&caps)), vec!["elicitation"]);
        assert_eq!(
            may_ask("sampling/createMessage", &declared(Some(&caps))),
            Err(Unasked::Undeclared("sampling"))
        );
        assert!(matches!(
            may_ask("tools/list", &declared(Some(&caps))),
            Err(Unasked::Failed(_))
        ));
        let e = serde_json::to_value(undeclared("sampling")).unwrap();
        assert_eq!(e["code"], -32021);
        assert_eq!(e["data"]["requiredCapabilities"], json!({"sampling": {}}));
    }
}
