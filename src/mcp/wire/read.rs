//! Reading a client's message into rmcp's types, quickly where the message is common.
//!
//! rmcp reads a message by buffering it whole, then trying each kind of message and,
//! for a request, each of some twenty requests in turn; every request that does not
//! fit builds an error message before the next is tried. Under load that was the
//! largest single cost of a call over stdio (16% of the server's CPU in the profile
//! behind `benches/peers.rs`).
//!
//! [`client_message`] reads a `tools/call` request in two passes instead: one over the
//! envelope (its `jsonrpc`, `id` and `method`, and whether it has a `result` or an
//! `error`), one into the request's own type with rmcp's own reader. Anything else, and
//! any `tools/call` those two passes cannot read, is read the way rmcp reads it, so what
//! is accepted and what is refused stays rmcp's to say.

use std::fmt;

use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, JsonRpcRequest, RequestId,
};
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};

/// `message` as rmcp's [`ClientJsonRpcMessage`]: a `tools/call` request read directly,
/// anything else as rmcp reads it.
///
/// # Errors
///
/// What rmcp's own reader says of a message it cannot read.
pub fn client_message(message: &[u8]) -> serde_json::Result<ClientJsonRpcMessage> {
    if let Some(read) = call_request(message) {
        return Ok(read);
    }
    serde_json::from_slice(message)
}

/// A well-formed `tools/call` request, read in two passes; `None` for anything else.
fn call_request(message: &[u8]) -> Option<ClientJsonRpcMessage> {
    let envelope: Envelope = serde_json::from_slice(message).ok()?;
    if !envelope.version_2_0 || envelope.result || envelope.error {
        return None;
    }
    let id = envelope.id?;
    if envelope.method != Some(Method::ToolsCall) {
        return None;
    }
    let request: CallToolRequest = serde_json::from_slice(message).ok()?;
    Some(JsonRpcMessage::Request(JsonRpcRequest::new(
        id,
        ClientRequest::CallToolRequest(request),
    )))
}

/// What the first pass keeps of a message's top level.
#[derive(Default)]
struct Envelope {
    version_2_0: bool,
    id: Option<RequestId>,
    method: Option<Method>,
    result: bool,
    error: bool,
}

/// The methods read the fast way.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Method {
    ToolsCall,
    Other,
}

/// A top-level key.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Jsonrpc,
    Id,
    Method,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let mut envelope = Envelope::default();
        // A key twice is left to rmcp's reader, which says what it makes of it.
        let mut seen = [false; 5];
        let mut once = |slot: usize| {
            if std::mem::replace(&mut seen[slot], true) {
                Err(de::Error::custom("a key given twice"))
            } else {
                Ok(())
            }
        };
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Jsonrpc => {
                    once(0)?;
                    envelope.version_2_0 = map.next_value::<Is2_0>()?.0;
                }
                Key::Id => {
                    once(1)?;
                    envelope.id = Some(map.next_value()?);
                }
                Key::Method => {
                    once(2)?;
                    envelope.method = Some(map.next_value()?);
                }
                Key::Result => {
                    once(3)?;
                    envelope.result = true;
                    map.next_value::<IgnoredAny>()?;
                }
                Key::Error => {
                    once(4)?;
                    envelope.error = true;
                    map.next_value::<IgnoredAny>()?;
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(envelope)
    }
}

/// Whether a string is `"2.0"`, read without keeping it.
struct Is2_0(bool);

impl<'de> Deserialize<'de> for Is2_0 {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_str(StrIs(&["2.0"]))
            .map(|at| Is2_0(at.is_some()))
    }
}

impl<'de> Deserialize<'de> for Method {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(
            match deserializer.deserialize_str(StrIs(&["tools/call"]))? {
                Some(0) => Method::ToolsCall,
                _ => Method::Other,
            },
        )
    }
}

/// Which of some strings a string is, read without keeping it.
struct StrIs(&'static [&'static str]);

impl<'de> Visitor<'de> for StrIs {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|s| *s == v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The fast reader and rmcp's give the same message, down to `_meta`, for calls
    /// in every shape a client sends; and the fast way is the one taken.
    #[test]
    fn a_call_reads_as_rmcp_reads_it() {
        let calls = [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,2.5,"x"],"b":{"c":null}}}}"#,
            r#"{"method":"tools/call","params":{"name":"t"},"id":"abc","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"progressToken":3,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","inputResponses":{"q":{"action":"accept"}},"requestState":"s"},"extra":[1]}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools\/call","params":{"name":"t\u0041"}}"#,
        ];
        for line in calls {
            assert!(call_request(line.as_bytes()).is_some(), "fast: {line}");
            let fast = serde_json::to_value(client_message(line.as_bytes()).unwrap()).unwrap();
            let rmcp: ClientJsonRpcMessage = serde_json::from_str(line).unwrap();
            assert_eq!(fast, serde_json::to_value(rmcp).unwrap(), "{line}");
        }
        let fast = client_message(calls[2].as_bytes()).unwrap();
        let JsonRpcMessage::Request(r) = fast else {
            panic!("a request")
        };
        use rmcp::model::GetMeta;
        assert_eq!(
            r.request.get_meta().get_progress_token(),
            Some(rmcp::model::ProgressToken(
                rmcp::model::NumberOrString::Number(3)
            ))
        );
    }

    /// What the fast way does not take is left to rmcp, which reads or refuses it as
    /// it always did.
    #[test]
    fn the_rest_is_left_to_rmcp() {
        let passed = [
            // Not a call.
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":1,"result":{}}),
        ];
        for v in passed {
            let line = v.to_string();
            assert!(call_request(line.as_bytes()).is_none(), "{line}");
            assert!(client_message(line.as_bytes()).is_ok(), "{line}");
        }
        let left = [
            // A call rmcp cannot take as one: no name, no id, a result beside the method,
            // the wrong version, a key twice, not an object.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"result":{}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"t"}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}]"#,
            "not json",
        ];
        for line in left {
            assert!(call_request(line.as_bytes()).is_none(), "{line}");
            let rmcp = serde_json::from_str::<ClientJsonRpcMessage>(line)
                .map(|m| serde_json::to_value(m).unwrap());
            let ours = client_message(line.as_bytes()).map(|m| serde_json::to_value(m).unwrap());
            assert_eq!(
                ours.as_ref().map_err(ToString::to_string),
                rmcp.as_ref().map_err(ToString::to_string),
                "{line}"
            );
        }
        // A call without a name is not read as a call by either.
        let read = client_message(left[0].as_bytes()).map(|m| serde_json::to_value(m).unwrap());
        let method = read.as_ref().ok().map(|v: &Value| v["method"].clone());
        assert_eq!(
            method,
            Some(json!("tools/call")),
            "rmcp keeps it as a custom one"
        );
    }
}
