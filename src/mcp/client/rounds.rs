//! Multi-round-trip requests (2026-07-28, SEP-2322): a server that needs something of
//! the client before it can answer (a person's input, a model's reply, the client's
//! roots) answers `resultType: "input_required"` with its `inputRequests` and an opaque
//! `requestState`. The client fulfils each request, by the script's policy or by the
//! operator in the Server tab, and sends the same request again with `inputResponses`
//! and the `requestState` as it came, until the server answers for good; at most
//! [`MAX_ROUNDS`] times.
//!
//! A 2025-11-25 server asks the same things with requests of its own in the middle of
//! the call; the connection's handler answers those ([`super::handler`]) with the same
//! answers.

use serde_json::{Value, json};

use super::Remote;
use crate::context::CallContext;
use crate::error::{ErrorCode, ToolError};

/// The most rounds of input one request is given; the next `input_required` ends it.
pub const MAX_ROUNDS: usize = 8;

/// The most rounds kept for [`Remote::take_rounds`]; older ones are dropped.
const ROUNDS_KEPT: usize = 256;

/// One round: what the server asked, and what the client answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// The `inputRequests` of the server's `input_required` result.
    pub asked: Value,
    /// The `inputResponses` sent with the request again.
    pub answered: Value,
}

impl Round {
    /// The round as `client` reports it: the request's method, the round's number from
    /// 1, what was asked and what was answered.
    pub fn to_json(&self, method: &str, number: usize) -> Value {
        json!({"method": method, "round": number, "inputRequests": self.asked,
               "inputResponses": self.answered})
    }
}

/// Whether a result asks for input rather than answering.
pub fn asks_for_input(result: &Value) -> bool {
    result["resultType"] == "input_required"
}

impl Remote {
    /// What happened along the requests since the last time it was taken, oldest
    /// first: `{"input_required": …}` for each round ([`Round::to_json`]) and
    /// `{"task": …}` for each status of a task followed ([`super::tasks`]).
    pub fn take_rounds(&self) -> Vec<Value> {
        std::mem::take(&mut *super::traffic::lock(&self.rounds))
    }

    /// Keeps one line of what happened along a request (a round, a task's status), and
    /// adds it to the call's trail.
    pub(super) fn keep_round(&self, ctx: &CallContext, round: Value) {
        ctx.trail(round.clone());
        let mut kept = super::traffic::lock(&self.rounds);
        if kept.len() == ROUNDS_KEPT {
            kept.remove(0);
        }
        kept.push(round);
    }

    /// Sends `method` with `params` and answers the server's rounds of input requests
    /// until it answers: the final result, and each round.
    ///
    /// # Errors
    ///
    /// As [`Remote::request`] for any round; and `TOOL_EXECUTION_FAILED` when an input
    /// request cannot be answered (a sampling request rejected, a method this client
    /// does not serve) or the server still asks after [`MAX_ROUNDS`] rounds.
    pub async fn request_rounds(
        &self,
        method: &str,
        params: Value,
        ctx: CallContext,
    ) -> Result<(Value, Vec<Round>), ToolError> {
        let mut params = params;
        let mut rounds = Vec::new();
        loop {
            let answer = self
                .request_once(method, params.clone(), ctx.clone())
                .await?;
            if super::tasks::is_task(&answer) {
                let result = self.follow_task(method, answer, &ctx).await?;
                return Ok((result, rounds));
            }
            if !asks_for_input(&answer) {
                return Ok((answer, rounds));
            }
            if rounds.len() == MAX_ROUNDS {
                return Err(ToolError::new(
                    ErrorCode::ToolExecutionFailed,
                    format!(
                        "{} still asked for input after {MAX_ROUNDS} rounds of {method}; \
                         stopped there",
                        self.server_name()
                    ),
                )
                .with_extra("rounds", json!(MAX_ROUNDS)));
            }
            let asked = answer["inputRequests"].clone();
            // Answers given with the call (a replay's, what the recorded agent
            // answered) come first; a round they do not cover is asked as usual.
            let recorded = ctx.next_answer();
            let covered = |given: &Value| {
                asked
                    .as_object()
                    .is_some_and(|a| a.keys().all(|k| given.get(k).is_some()))
            };
            let answered = match recorded.filter(covered) {
                Some(given) => Ok(given),
                None => self.shared.fulfil(&asked, &ctx).await,
            };
            let answered = answered.map_err(|why| {
                ToolError::new(
                    ErrorCode::ToolExecutionFailed,
                    format!(
                        "{method} was not asked again: {why} (round {} of {})",
                        rounds.len() + 1,
                        self.server_name()
                    ),
                )
            })?;
            if let Some(p) = params.as_object_mut() {
                p.insert("inputResponses".into(), answered.clone());
                match answer.get("requestState") {
                    Some(state) if !state.is_null() => {
                        p.insert("requestState".into(), state.clone());
                    }
                    _ => {
                        p.remove("requestState");
                    }
                }
            }
            let round = Round { asked, answered };
            self.keep_round(
                &ctx,
                json!({"input_required": round.to_json(method, rounds.len() + 1)}),
            );
            rounds.push(round);
        }
    }
}
