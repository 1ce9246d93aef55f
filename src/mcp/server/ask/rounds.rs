//! Rounds of input for a tool's or a prompt's own questions on a stateless request
//! (SEP-2322).
//!
//! A tool asks its client with [`CallContext::ask_client`](crate::context::CallContext::ask_client),
//! each question under a key. A 2026-07-28 request has no connection to ask on, so:
//!
//! 1. the tool is run; a question whose answer is not in hand is collected, and the
//!    tool ends there ([`Unasked::InRound`]);
//! 2. the call is answered `resultType: "input_required"` with every question
//!    collected (`inputRequests`, by key) and a `requestState` sealed to the caller, the
//!    tool and its arguments ([`super::binding`]) that carries the answers used so
//!    far;
//! 3. the client calls again with its answers (`inputResponses`) and the state; the
//!    tool is run again with the answers of every round, until it asks nothing more.
//!
//! A state altered, too old ([`STATE_TTL`]) or of another call is `-32602`. An answer
//! that is not the result its request asks for (an elicitation's `action`, a sampled
//! message, a roots list) is no answer: the question is asked again. Answers to
//! questions not asked are not carried to the next round, and a question left
//! unanswered is asked again. The answers a state carries are capped
//! ([`MAX_STATE_BYTES`]).
//!
//! A call confirmed under `--confirm-actions` stays confirmed across its rounds: each
//! state it is given carries a nonce of its own, spent by the round that uses it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use rmcp::ErrorData as McpError;
use rmcp::model::{InputRequest, InputRequests, InputRequiredResult, InputResponses, SealOptions};
use serde_json::{Map, Value, json};

use super::{Asker, CONFIRM_KEY, STATE_TTL};
use crate::context::Unasked;

/// The most bytes of answers one `requestState` carries; a call whose answers grow past
/// it is refused (`-32602`).
pub const MAX_STATE_BYTES: usize = 64 * 1024;

/// What a state of a call's rounds carries (JSON, sealed).
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Carried {
    /// The answers of earlier rounds, by key.
    #[serde(default)]
    answers: Map<String, Value>,
    /// Set where the call was confirmed (`--confirm-actions`): the nonce that spends
    /// this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    confirmed: Option<String>,
}

/// The answers a call's questions are given, and the questions still to go out.
pub struct Inputs {
    /// What the state is sealed to.
    bound: Vec<u8>,
    /// Every answer in hand: earlier rounds' and this request's.
    given: Map<String, Value>,
    /// The answers the call read: what the next state carries.
    used: Mutex<Map<String, Value>>,
    /// The questions to send, by key.
    pending: Mutex<BTreeMap<String, Value>>,
    /// The capabilities the client declared; a question needing another is refused.
    declared: Vec<&'static str>,
    /// Set once the call became a task: a question left is no longer asked in rounds.
    closed: std::sync::atomic::AtomicBool,
}

/// The capability a request to the client needs, by its method.
pub fn capability(method: &str) -> Option<&'static str> {
    match method {
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// Whether `answer` is a result of `method`: an elicitation's has an `action`, a
/// sampled message a `role` and a `content`, a roots list its `roots`.
pub fn is_result(method: &str, answer: &Value) -> bool {
    let Some(object) = answer.as_object() else {
        return false;
    };
    match method {
        "elicitation/create" => object
            .get("action")
            .and_then(Value::as_str)
            .is_some_and(|a| matches!(a, "accept" | "decline" | "cancel")),
        "sampling/createMessage" => object.get("role").is_some() && object.get("content").is_some(),
        "roots/list" => object.get("roots").is_some_and(Value::is_array),
        _ => true,
    }
}

/// Whether a question `method` may be asked of a client that declared `declared`:
/// [`Unasked::Failed`] for a method that is no question, [`Unasked::Undeclared`] for a
/// capability the client did not declare. The one check of every way a tool asks.
pub fn may_ask(method: &str, declared: &[&'static str]) -> Result<(), Unasked> {
    let Some(needed) = capability(method) else {
        return Err(Unasked::Failed(format!(
            "{method} is not a request a server sends its client"
        )));
    };
    if declared.contains(&needed) {
        Ok(())
    } else {
        Err(Unasked::Undeclared(needed))
    }
}

impl Inputs {
    /// The answer to the question `key`, or the question kept to go out.
    ///
    /// # Errors
    ///
    /// [`Unasked::Undeclared`] for a capability the client did not declare,
    /// [`Unasked::InRound`] for a question not answered yet, or answered with something
    /// that is not a result of `method` (asked again), [`Unasked::Failed`] for a method
    /// that is not a question.
    pub fn answer(&self, key: &str, method: &'static str, params: Value) -> Result<Value, Unasked> {
        may_ask(method, &self.declared)?;
        let answer = self
            .given
            .get(key)
            .filter(|answer| is_result(method, answer));
        let Some(answer) = answer else {
            if self.closed.load(std::sync::atomic::Ordering::Acquire) {
                return Err(Unasked::NoClient(format!(
                    "{key}: the call became a task; its questions are asked before that"
                )));
            }
            self.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key.to_string(), json!({"method": method, "params": params}));
            return Err(Unasked::InRound(key.to_string()));
        };
        self.used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_string(), answer.clone());
        Ok(answer.clone())
    }

    /// Whether a question was kept to go out.
    pub fn asked(&self) -> bool {
        !self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    /// The questions kept, by key, as `{"method", "params"}`; none are kept after.
    pub fn take_questions(&self) -> BTreeMap<String, Value> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// No more questions go out in rounds: the call became a task.
    pub fn close(&self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// The capabilities questions may be asked under.
    pub fn declared(&self) -> &[&'static str] {
        &self.declared
    }

    /// Only questions under `declared` capabilities may be asked (`-32021` for others).
    pub fn declaring(mut self, declared: Vec<&'static str>) -> Inputs {
        self.declared = declared;
        self
    }
}

/// The `-32021` for a call that needed `capability` of a client that did not declare
/// it, its `data.requiredCapabilities` naming it.
pub fn undeclared(capability: &str) -> McpError {
    let required: rmcp::model::ClientCapabilities =
        serde_json::from_value(json!({ capability: {} })).unwrap_or_default();
    McpError::missing_required_client_capability(required)
}

/// The protocol error for a question that could not be asked of the client: `-32021`
/// for an undeclared capability, `-32602` for a malformed answer.
pub fn refusal(why: Unasked) -> McpError {
    match why {
        Unasked::Undeclared(capability) => undeclared(capability),
        other => McpError::invalid_params(other.to_string(), None),
    }
}

impl Asker {
    /// The answers of a stateless request bound to `bound`: those its `requestState`
    /// carries and its `inputResponses` (the answer under [`CONFIRM_KEY`] aside where
    /// `confirming`: the confirm stage's). A state of a confirmation carries none.
    ///
    /// # Errors
    ///
    /// `-32602` for a state not sealed by this server for this caller and call, or too
    /// old.
    pub fn inputs(
        &self,
        bound: Vec<u8>,
        state: Option<&str>,
        responses: Option<&InputResponses>,
        what: &str,
        confirming: bool,
    ) -> Result<Inputs, McpError> {
        let mut given = match state {
            Some(state) => self.open_carried(state, &bound, what)?.answers,
            None => Map::new(),
        };
        for (key, answer) in responses.into_iter().flatten() {
            if !(confirming && key == CONFIRM_KEY) {
                given.insert(key.clone(), answer.clone());
            }
        }
        Ok(Inputs {
            bound,
            given,
            used: Mutex::default(),
            pending: Mutex::default(),
            declared: vec!["sampling", "elicitation", "roots"],
            closed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// What a state carries: nothing for a confirmation's own.
    fn open_carried(&self, state: &str, bound: &[u8], what: &str) -> Result<Carried, McpError> {
        let opened = self.codec.open_with(state, bound).map_err(|e| {
            McpError::invalid_params(
                format!(
                    "the requestState is not one this server gave for this {what} ({e}); \
                     make it again without it"
                ),
                None,
            )
        })?;
        Ok(carried(&opened).unwrap_or_default())
    }

    /// The `input_required` answer for the questions `inputs` kept, with a state that
    /// carries the answers used; `None` when nothing was asked. `confirmed`: the call
    /// was confirmed, and each of its states is spent once.
    ///
    /// # Errors
    ///
    /// `-32602` when the answers so far are over [`MAX_STATE_BYTES`]; `-32603` for a
    /// question that is not an input request.
    pub fn next_round(
        &self,
        inputs: &Inputs,
        confirmed: bool,
    ) -> Result<Option<InputRequiredResult>, McpError> {
        let pending = inputs.take_questions();
        if pending.is_empty() {
            return Ok(None);
        }
        let mut requests = InputRequests::new();
        for (key, request) in pending {
            let request: InputRequest = serde_json::from_value(request).map_err(|e| {
                McpError::internal_error(
                    format!("the question {key} is not an input request: {e}"),
                    None,
                )
            })?;
            requests.insert(key, request);
        }
        let carried = Carried {
            answers: inputs
                .used
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            confirmed: confirmed.then(crate::random::hex128),
        };
        let payload = serde_json::to_vec(&carried).unwrap_or_default();
        if payload.len() > MAX_STATE_BYTES {
            return Err(McpError::invalid_params(
                format!(
                    "the answers given so far are {} bytes; a requestState carries at most {MAX_STATE_BYTES}",
                    payload.len()
                ),
                Some(json!({"limit": MAX_STATE_BYTES})),
            ));
        }
        let state = self.codec.seal_with(
            &payload,
            &SealOptions::new()
                .associated_data(&inputs.bound)
                .ttl(STATE_TTL),
        );
        Ok(Some(InputRequiredResult::new(Some(requests), Some(state))))
    }
}

/// A rounds state's payload (JSON); `None` for a confirmation's (a nonce).
fn carried(opened: &[u8]) -> Option<Carried> {
    if opened.first() != Some(&b'{') {
        return None;
    }
    serde_json::from_slice(opened).ok()
}

/// The nonce that spends a confirmed rounds state, if `opened` is one.
pub(super) fn confirmed_nonce(opened: &[u8]) -> Option<String> {
    carried(opened).and_then(|c| c.confirmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(asker: &Asker, state: Option<&str>, responses: Value) -> Result<Inputs, McpError> {
        let responses: InputResponses = serde_json::from_value(responses).unwrap();
        asker.inputs(
            b"caller\0t\0args".to_vec(),
            state,
            Some(&responses),
            "call",
            false,
        )
    }

    fn name() -> Value {
        json!({"message": "Your name?", "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}}})
    }

    #[test]
    fn a_question_goes_out_and_its_answer_comes_back_through_the_state() {
        let asker = Asker::default();
        let first = inputs(&asker, None, json!({})).unwrap();
        assert_eq!(
            first.answer("name", "elicitation/create", name()),
            Err(Unasked::InRound("name".into()))
        );
        let asked = asker.next_round(&first, false).unwrap().unwrap();
        let asked = serde_json::to_value(&asked).unwrap();
        assert_eq!(asked["resultType"], "input_required");
        assert_eq!(
            asked["inputRequests"]["name"]["method"],
            "elicitation/create"
        );
        let state = asked["requestState"].as_str().unwrap();
        // Round 2: the name answered, a second question asked.
        let alice = json!({"action": "accept", "content": {"name": "Alice"}});
        let second = inputs(
            &asker,
            Some(state),
            json!({"name": alice, "extra": {"x": 1}}),
        )
        .unwrap();
        assert_eq!(
            second.answer("name", "elicitation/create", name()),
            Ok(alice.clone())
        );
        assert!(
            second
                .answer("colour", "elicitation/create", name())
                .is_err()
        );
        let again = asker.next_round(&second, false).unwrap().unwrap();
        let state2 = again.request_state.unwrap();
        assert_ne!(state2, state);
        // Round 3: the name comes from the state, the colour from the request.
        let blue = json!({"action": "accept", "content": {"colour": "blue"}});
        let third = inputs(&asker, Some(&state2), json!({"colour": blue})).unwrap();
        assert_eq!(
            third.answer("name", "elicitation/create", name()),
            Ok(alice)
        );
        assert_eq!(
            third.answer("colour", "elicitation/create", name()),
            Ok(blue)
        );
        assert!(asker.next_round(&third, false).unwrap().is_none());
        // The extra answer, never asked, is not carried.
        let opened = asker.codec.open_with(&state2, b"caller\0t\0args").unwrap();
        assert!(!String::from_utf8_lossy(&opened).contains("extra"));
    }

    #[test]
    fn a_tampered_or_foreign_state_is_refused_and_a_bad_answer_is_the_tools() {
        let asker = Asker::default();
        let first = inputs(&asker, None, json!({})).unwrap();
        let _ = first.answer("q", "roots/list", json!({}));
        let state = asker
            .next_round(&first, true)
            .unwrap()
            .unwrap()
            .request_state
            .unwrap();
        let e = inputs(&asker, Some(&format!("{state}-TAMPERED")), json!({}))
            .err()
            .unwrap();
        assert_eq!(e.code.0, -32602);
        let foreign = asker.inputs(b"other".to_vec(), Some(&state), None, "call", false);
        assert!(foreign.is_err());
        let opened = asker.codec.open_with(&state, b"caller\0t\0args").unwrap();
        assert_eq!(confirmed_nonce(&opened).map(|n| n.len()), Some(32));
        // An answer that is not the question's result is no answer: asked again.
        let bad = inputs(&asker, Some(&state), json!({"q": 12345})).unwrap();
        assert!(matches!(
            bad.answer("q", "roots/list", json!({})),
            Err(Unasked::InRound(_))
        ));
        let wrong = inputs(&asker, Some(&state), json!({"q": {"action": "accept"}})).unwrap();
        assert!(matches!(
            wrong.answer("q", "roots/list", json!({})),
            Err(Unasked::InRound(_))
        ));
        assert!(wrong.asked());
        let roots = json!({"roots": [{"uri": "file:///r"}]});
        let good = inputs(&asker, Some(&state), json!({"q": roots})).unwrap();
        assert_eq!(good.answer("q", "roots/list", json!({})), Ok(roots));
        // A capability not declared is not asked.
        let only = inputs(&asker, None, json!({}))
            .unwrap()
            .declaring(vec!["sampling"]);
        assert_eq!(
            only.answer("q", "roots/list", json!({})),
            Err(Unasked::Undeclared("roots"))
        );
        assert!(!only.asked());
    }

    #[test]
    fn once_the_call_became_a_task_no_question_goes_out_in_rounds() {
        let asker = Asker::default();
        let alice = json!({"action": "accept", "content": {"name": "Alice"}});
        let round = inputs(&asker, None, json!({"name": alice})).unwrap();
        round.close();
        // What was answered still is; a new question is not asked.
        assert_eq!(
            round.answer("name", "elicitation/create", name()),
            Ok(alice)
        );
        assert!(matches!(
            round.answer("colour", "elicitation/create", name()),
            Err(Unasked::NoClient(_))
        ));
        assert!(!round.asked());
    }

    #[test]
    fn answers_past_the_cap_are_refused() {
        let asker = Asker::default();
        let big = json!({"action": "accept", "content": {"text": "x".repeat(MAX_STATE_BYTES)}});
        let round = inputs(&asker, None, json!({"a": big})).unwrap();
        round.answer("a", "elicitation/create", name()).unwrap();
        let _ = round.answer("b", "elicitation/create", name());
        let e = asker.next_round(&round, false).err().unwrap();
        assert_eq!(e.code.0, -32602);
        assert_eq!(e.data.unwrap()["limit"], MAX_STATE_BYTES);
    }
}
