//! Asking a person, in the rounds of a 2026-07-28 request (SEP-2322) or by a session's
//! `elicitation/create`: the confirmation of a destructive call, and a prompt's missing
//! choice.
//!
//! `--confirm-actions`: a person confirms every call that destroys or spends (a tool
//! whose `destructiveHint` is true: a transaction, an attack, a build, mining, a plan
//! or workflow run) before it runs.
//!
//! - A 2026-07-28 request is answered `resultType: "input_required"` with one
//!   elicitation (`confirm`) and a `requestState`; the client asks its user and calls
//!   again with the answer and the state (SEP-2322). The state is sealed (HMAC-SHA256,
//!   [`rmcp::model::RequestStateCodec`]) to the tool and its arguments and lives
//!   [`STATE_TTL`]: a state altered, replayed on other arguments or too old is refused
//!   (`-32602`), and a retry without the answer is asked again.
//! - A session client (2025-11-25) is asked with `elicitation/create` on its session.
//! - A client that has not declared elicitation cannot be asked: a stateless request is
//!   refused `-32021` (MissingRequiredClientCapability, HTTP 400) naming it, a session
//!   call is answered with the tool error `VALIDATION_REQUIREMENTS_NOT_MET`. Nothing
//!   waits for an answer that cannot come.
//!
//! A prompt's required argument left out, for a 2026-07-28 client that declared
//! elicitation, is asked for with a form listing the values it may take
//! ([`Asker::choose`]); a client that cannot be asked gets today's `-32602`.
//!
//! Servers behind one balancer share the sealing key through [`KEY_ENV`]; without it
//! each process draws its own, and a state is good only on the server that made it.

use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ElicitRequestParams, ElicitationAction, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, RequestStateCodec, SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::error::{ErrorCode, ToolError};

pub mod rounds;

/// The environment variable holding the key that seals `requestState` (at least 32
/// bytes), for servers that must accept each other's states.
pub const KEY_ENV: &str = "STRUCTS_CONSOLE_STATE_KEY";

/// How long a confirmation asked for stays answerable.
pub const STATE_TTL: Duration = Duration::from_secs(600);

/// The key of the one input request a confirmation makes.
pub const CONFIRM_KEY: &str = "confirm";

/// The store's key that marks a confirmation spent, by the nonce its state carries.
pub fn spent_key(nonce: &str) -> String {
    format!("confirm:{nonce}")
}

/// Why a confirmation's state is refused a second time.
pub fn spent(tool: &str) -> McpError {
    McpError::invalid_params(
        format!(
            "this requestState was already answered yes and {tool} was run with it: a \
             confirmation is spent once. Call {tool} again without it to be asked again"
        ),
        Some(json!({"requestState": "spent"})),
    )
}

/// What a confirmation decided.
pub enum Decision {
    /// Run the call; once `spend` (a stateless confirmation's mark) is claimed, where
    /// there is one ([`spent_key`]).
    Run { spend: Option<String> },
    /// Answer this instead of running it (a question, or the refusal of the answer).
    Answer(Outcome),
}

/// What to send back when the call does not run now.
pub enum Outcome {
    /// Ask the client (a stateless request).
    Ask(InputRequiredResult),
    /// The call's answer: the tool error saying why it did not run.
    Refused(ToolError),
}

/// The key that seals what a question carries to its answer.
pub struct Asker {
    pub(super) codec: RequestStateCodec,
}

impl Asker {
    /// With the key from [`KEY_ENV`] when it is set and usable, else one drawn for this
    /// process.
    pub fn new() -> Asker {
        Asker::from_env().unwrap_or_else(|e| {
            tracing::warn!("{e}; questions' states are sealed with a key of this process's own");
            Asker::drawn()
        })
    }

    /// With the key from [`KEY_ENV`], or one drawn for this process when it is unset.
    ///
    /// # Errors
    ///
    /// A key in [`KEY_ENV`] shorter than 32 bytes.
    pub fn from_env() -> Result<Asker, String> {
        match std::env::var(KEY_ENV) {
            Ok(key) => RequestStateCodec::try_new(key.into_bytes())
                .map(|codec| Asker { codec })
                .map_err(|e| format!("{KEY_ENV}: {e}; give at least 32 bytes")),
            Err(_) => Ok(Asker::drawn()),
        }
    }

    fn drawn() -> Asker {
        let key: Vec<u8> = (0..2)
            .flat_map(|_| crate::random::hex128().into_bytes())
            .collect();
        Asker {
            codec: RequestStateCodec::new_unchecked(key),
        }
    }

    /// Decides a stateless request of `who` for a destructive tool: ask, refuse the
    /// answer, or run. A question's state is sealed to the caller, the tool and its
    /// arguments, and carries a nonce: a "yes" runs the call once its nonce is claimed
    /// ([`Decision::Run`]'s `spend`), so that a state is spent once.
    ///
    /// # Errors
    ///
    /// `-32021` when the client did not declare elicitation; `-32602` for a
    /// `requestState` that is not one this server sealed for this caller and call, or
    /// is too old. With traces on, `round` (the request's span) is linked to the span
    /// of the call that asked, which the state carries.
    #[allow(clippy::too_many_arguments)]
    pub fn confirm_stateless(
        &self,
        context: &RequestContext<RoleServer>,
        round: &tracing::Span,
        who: &str,
        tool: &str,
        arguments: Option<&Map<String, Value>>,
        request_state: Option<&str>,
        responses: Option<&InputResponses>,
    ) -> Result<Decision, McpError> {
        let declared = context
            .client_capabilities()
            .is_some_and(|caps| caps.elicitation.is_some());
        if !declared {
            let mut required = ClientCapabilities::default();
            required.elicitation = Some(Default::default());
            return Err(McpError::missing_required_client_capability(required));
        }
        let bound = binding(tool, arguments, who);
        let client = context.client_info();
        let client = client.as_ref().map(|c| c.name.as_str());
        let Some(state) = request_state else {
            return Ok(Decision::Answer(Outcome::Ask(
                self.ask(tool, arguments, &bound, client, round),
            )));
        };
        let opened = self.codec.open_with(state, &bound).map_err(|e| {
            McpError::invalid_params(
                format!(
                    "the requestState is not one this server gave for this call ({e}); \
                     call {tool} again without it"
                ),
                None,
            )
        })?;
        // A state of the call's own rounds, given once it was confirmed: spent by this
        // round, as a confirmation's is.
        if let Some(nonce) = rounds::confirmed_nonce(&opened) {
            return Ok(Decision::Run { spend: Some(nonce) });
        }
        // The nonce, and the span of the call that asked when traces are on: this round
        // is linked to it.
        let (nonce, asked_in) = match opened.iter().position(|b| *b == b' ') {
            Some(at) => (&opened[..at], Some(&opened[at + 1..])),
            None => (&opened[..], None),
        };
        if let Some(asked_in) = asked_in {
            crate::context::trace::link(round, &String::from_utf8_lossy(asked_in));
        }
        match responses.and_then(|r| r.get(CONFIRM_KEY)) {
            // Asked and not answered: ask again (SEP-2322).
            None => Ok(Decision::Answer(Outcome::Ask(
                self.ask(tool, arguments, &bound, client, round),
            ))),
            Some(answer) => Ok(match decide(tool, answer) {
                Decision::Run { .. } => Decision::Run {
                    spend: Some(String::from_utf8_lossy(nonce).into_owned()),
                },
                refused => refused,
            }),
        }
    }

    /// Decides a session call for a destructive tool: asks with `elicitation/create`
    /// when the client can be asked.
    pub async fn confirm_session(
        &self,
        peer: &Peer<RoleServer>,
        tool: &str,
        arguments: Option<&Map<String, Value>>,
    ) -> Decision {
        let info = peer.peer_info();
        let declared = info
            .as_ref()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        if !declared {
            return Decision::Answer(Outcome::Refused(cannot_ask(tool)));
        }
        let who = info.as_ref().map(|info| info.client_info.name.as_str());
        let Ok(params) = serde_json::from_value::<ElicitRequestParams>(form(tool, arguments, who))
        else {
            return Decision::Answer(Outcome::Refused(cannot_ask(tool)));
        };
        match peer
            .create_elicitation_with_timeout(params, Some(STATE_TTL))
            .await
        {
            Ok(result) => decide(tool, &serde_json::to_value(result).unwrap_or_default()),
            Err(e) => Decision::Answer(Outcome::Refused(
                ToolError::new(
                    ErrorCode::ToolCancelled,
                    format!("{tool} was not run: the confirmation was not answered ({e})"),
                )
                .with_extra("confirmation", json!("unanswered")),
            )),
        }
    }

    fn ask(
        &self,
        tool: &str,
        arguments: Option<&Map<String, Value>>,
        bound: &[u8],
        who: Option<&str>,
        round: &tracing::Span,
    ) -> InputRequiredResult {
        // A nonce of its own: what marks this question's state spent once answered yes.
        let nonce = crate::random::hex128();
        let mut payload = nonce.into_bytes();
        if let Some(asking) = crate::context::trace::traceparent_of_span(round) {
            payload.push(b' ');
            payload.extend_from_slice(asking.as_bytes());
        }
        let state = self.codec.seal_with(
            &payload,
            &SealOptions::new().associated_data(bound).ttl(STATE_TTL),
        );
        let request: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": form(tool, arguments, who),
        }))
        .expect("an elicitation request is an input request");
        let mut requests = InputRequests::new();
        requests.insert(CONFIRM_KEY.to_string(), request);
        InputRequiredResult::new(Some(requests), Some(state))
    }
}

/// What a state is sealed to: the caller, the tool and a digest of its arguments, their
/// keys in order (a client may send the same arguments back with its keys in another
/// order). Another caller's state does not open.
pub(super) fn binding(tool: &str, arguments: Option<&Map<String, Value>>, who: &str) -> Vec<u8> {
    let args = arguments.map(|a| crate::json::canonical(&Value::Object(a.clone())));
    let args = serde_json::to_vec(&args).unwrap_or_default();
    let mut bound = who.as_bytes().to_vec();
    bound.push(0);
    bound.extend_from_slice(tool.as_bytes());
    bound.push(0);
    bound.extend_from_slice(&Sha256::digest(&args));
    bound
}

/// The most characters of a client's name the question repeats.
const NAME_CHARS: usize = 60;

/// Who asks, in the question's words: the client that made the call, by the name it
/// gave (`clientInfo.name`), since the server cannot tell whether an agent or a person
/// at that client pressed for it.
fn asker(name: Option<&str>) -> String {
    let name: String = name
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .take(NAME_CHARS)
        .collect();
    let name = name.trim();
    if name.is_empty() {
        "The MCP client that made this call".to_string()
    } else {
        format!("{name} (the MCP client that made this call)")
    }
}

/// The form a person is shown: who asks, what will run, and one yes-or-no.
fn form(tool: &str, arguments: Option<&Map<String, Value>>, who: Option<&str>) -> Value {
    let args = arguments.map_or("{}".to_string(), |a| {
        let text = Value::Object(a.clone()).to_string();
        if text.len() > 400 {
            format!("{}…", text.chars().take(400).collect::<String>())
        } else {
            text
        }
    });
    json!({
        "mode": "form",
        "message": format!(
            "{} asks to run {tool}, which changes the game and cannot be undone, with {args}. Run it?",
            asker(who)
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "title": "Run it",
                            "description": "Yes runs the action; no refuses it."}
            },
            "required": ["confirm"]
        }
    })
}

/// An elicitation's answer, as a decision.
fn decide(tool: &str, answer: &Value) -> Decision {
    let action: Option<ElicitationAction> = serde_json::from_value(answer["action"].clone()).ok();
    let yes = answer["content"]["confirm"] == json!(true);
    match action {
        Some(ElicitationAction::Accept) if yes => Decision::Run { spend: None },
        Some(ElicitationAction::Accept) => declined(tool, "declined"),
        Some(ElicitationAction::Decline) => declined(tool, "declined"),
        Some(ElicitationAction::Cancel) => declined(tool, "cancelled"),
        _ => Decision::Answer(Outcome::Refused(ToolError::field(
            ErrorCode::ValidationInvalidFormat,
            "inputResponses.confirm",
            "an elicitation result is {\"action\": \"accept\", \"content\": {\"confirm\": true}}, or a decline or cancel",
        ))),
    }
}

fn declined(tool: &str, how: &str) -> Decision {
    Decision::Answer(Outcome::Refused(
        ToolError::new(
            ErrorCode::ToolCancelled,
            format!("{tool} was not run: asked to confirm it, the person {how}"),
        )
        .with_extra("confirmation", json!(how)),
    ))
}

fn cannot_ask(tool: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ValidationRequirementsNotMet,
        format!(
            "{tool} needs a person's confirmation on this server (--confirm-actions), and this \
             client has not declared elicitation, so it cannot be asked"
        ),
    )
    .with_extra("requires", json!("elicitation"))
}

impl Default for Asker {
    fn default() -> Asker {
        Asker::new()
    }
}

/// One required argument a prompt was called without.
pub struct Missing {
    pub name: String,
    pub description: String,
    /// The values it may take, when they are few enough to list.
    pub values: Option<Vec<String>>,
}

/// What asking for a prompt's missing arguments decided.
pub enum Choice {
    /// Every argument is there: get the prompt with these.
    Ready(Map<String, Value>),
    /// Ask the client for the rest.
    Ask(InputRequiredResult),
}

/// The key of the one input request a choice makes.
pub const CHOOSE_KEY: &str = "choose";

impl Asker {
    /// A 2026-07-28 `prompts/get` missing required arguments: asks for them with a form,
    /// then takes the answer into the arguments.
    ///
    /// # Errors
    ///
    /// `-32602` for a `requestState` this server did not seal for this prompt and these
    /// arguments, and for a person who declined to choose.
    pub fn choose(
        &self,
        prompt: &str,
        given: &Map<String, Value>,
        missing: &[Missing],
        request_state: Option<&str>,
        responses: Option<&InputResponses>,
    ) -> Result<Choice, McpError> {
        let bound = binding(&format!("prompt {prompt}"), Some(given), "");
        let mut args = given.clone();
        for m in missing {
            args.remove(&m.name);
        }
        if let Some(state) = request_state {
            self.codec.open_with(state, &bound).map_err(|e| {
                McpError::invalid_params(
                    format!(
                        "the requestState is not one this server gave for prompt {prompt} with \
                         these arguments ({e}); get it again without it"
                    ),
                    None,
                )
            })?;
            if let Some(answer) = responses.and_then(|r| r.get(CHOOSE_KEY)) {
                let accepted = answer["action"] == "accept";
                if !accepted {
                    return Err(McpError::invalid_params(
                        format!(
                            "prompt {prompt} needs {}; the person did not choose",
                            names(missing)
                        ),
                        None,
                    ));
                }
                for m in missing {
                    if let Some(Value::String(v)) = answer["content"].get(&m.name)
                        && !v.trim().is_empty()
                    {
                        args.insert(m.name.clone(), Value::String(v.clone()));
                    }
                }
            }
        }
        let left: Vec<&Missing> = missing
            .iter()
            .filter(|m| !args.contains_key(&m.name))
            .collect();
        if left.is_empty() {
            return Ok(Choice::Ready(args));
        }
        let mut properties = Map::new();
        for m in &left {
            let mut field =
                json!({"type": "string", "title": m.name, "description": m.description});
            if let Some(values) = &m.values {
                field["enum"] = json!(values);
            }
            properties.insert(m.name.clone(), field);
        }
        let required: Vec<&str> = left.iter().map(|m| m.name.as_str()).collect();
        let request: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": format!("The prompt {prompt} needs {}. Choose:", names(missing)),
                "requestedSchema": {"type": "object", "properties": properties, "required": required},
            },
        }))
        .map_err(|e| McpError::internal_error(format!("a choice form: {e}"), None))?;
        let state = self.codec.seal_with(
            b"choose",
            &SealOptions::new().associated_data(&bound).ttl(STATE_TTL),
        );
        let mut requests = InputRequests::new();
        requests.insert(CHOOSE_KEY.to_string(), request);
        Ok(Choice::Ask(InputRequiredResult::new(
            Some(requests),
            Some(state),
        )))
    }
}

fn names(missing: &[Missing]) -> String {
    missing
        .iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Map<String, Value> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_state_is_bound_to_its_tool_and_arguments_whatever_their_key_order() {
        let a = args(r#"{"x": 1, "y": {"b": 2, "a": [1, {"d": 4, "c": 3}]}}"#);
        let b = args(r#"{"y": {"a": [1, {"c": 3, "d": 4}], "b": 2}, "x": 1}"#);
        let bind = |tool, args| binding(tool, args, "caller:alice");
        assert_eq!(bind("t", Some(&a)), bind("t", Some(&b)));
        assert_ne!(bind("t", Some(&a)), bind("u", Some(&a)));
        let c = args(r#"{"x": 2, "y": {"b": 2, "a": [1, {"d": 4, "c": 3}]}}"#);
        assert_ne!(bind("t", Some(&a)), bind("t", Some(&c)));
        assert_ne!(bind("t", Some(&a)), bind("t", None));
        // Another caller's state is not this one's.
        assert_ne!(bind("t", Some(&a)), binding("t", Some(&a), "caller:bob"));
    }

    #[test]
    fn the_question_names_the_client_that_asked() {
        let said = |who| form("structs_action_attack", None, who)["message"].clone();
        assert!(said(Some("structs-console")).as_str().unwrap().starts_with(
            "structs-console (the MCP client that made this call) asks to run structs_action_attack"
        ));
        assert!(
            said(None)
                .as_str()
                .unwrap()
                .starts_with("The MCP client that made this call asks to run")
        );
        let odd = "evil\u{1b}[2J".to_string() + &"x".repeat(100);
        let text = said(Some(&odd)).as_str().unwrap().to_string();
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(
            text.starts_with(&format!("evil[2J{}", "x".repeat(53))),
            "{text}"
        );
        assert!(
            !text.contains(&"x".repeat(54)),
            "the name is cut at 60 characters"
        );
        assert!(
            said(Some(" \n "))
                .as_str()
                .unwrap()
                .starts_with("The MCP client")
        );
    }

    #[test]
    fn a_sealed_state_opens_only_for_its_binding() {
        let asker = Asker::drawn();
        let a = args(r#"{"x": 1}"#);
        let bind = |args| binding("t", args, "caller:alice");
        let asked = asker.ask("t", Some(&a), &bind(Some(&a)), None, &tracing::Span::none());
        let state = asked.request_state.unwrap();
        let nonce = asker.codec.open_with(&state, &bind(Some(&a))).unwrap();
        assert_eq!(nonce.len(), 32, "a nonce of 128 bits, as hex");
        // Each question its own nonce: what spends one leaves the other.
        let again = asker.ask("t", Some(&a), &bind(Some(&a)), None, &tracing::Span::none());
        let other_nonce = asker
            .codec
            .open_with(&again.request_state.unwrap(), &bind(Some(&a)))
            .unwrap();
        assert_ne!(nonce, other_nonce);
        let other = args(r#"{"x": 2}"#);
        assert!(asker.codec.open_with(&state, &bind(Some(&other))).is_err());
        // Another caller cannot open it.
        assert!(
            asker
                .codec
                .open_with(&state, &binding("t", Some(&a), "caller:bob"))
                .is_err()
        );
        // Another process's key does not open it.
        assert!(
            Asker::drawn()
                .codec
                .open_with(&state, &bind(Some(&a)))
                .is_err()
        );
    }
}
