//! Which calls a rule takes ([`Match`]), and the fault rules of `proxy --faults FILE`:
//! what each does to the calls it takes, how often (a rate drawn from a seeded
//! generator, or every Nth), so that a run with the same seed and the same calls
//! injects the same faults.
//!
//! A faults file is JSON:
//!
//! ```json
//! {"seed": 7, "rules": [
//!   {"tool": "structs_query_player", "latency_ms": 300},
//!   {"tool": "structs_list_*", "error": "RATE_LIMIT_EXCEEDED", "details": {"retry_after_ms": 1500}, "rate": 0.5},
//!   {"every": 3, "drop_response": true}
//! ]}
//! ```

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

use crate::error::{ErrorCode, ToolError};

/// Which calls a rule takes: a tool name (`*` at either end matches any text), an
/// argument at a dotted path holding a value, both, or (neither) every call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Match {
    pub tool: Option<String>,
    /// A dotted path into the arguments (`player_id`, `plan.steps.0.tool`).
    pub arg: Option<String>,
    /// The value the argument must hold; without one, the argument must be there.
    pub value: Option<Value>,
}

impl Match {
    /// Reads `tool`, `arg` and `value` from a rule's object, taking them out of it.
    pub fn take(rule: &mut Map<String, Value>) -> Result<Match, String> {
        let tool = match rule.remove("tool") {
            None => None,
            Some(Value::String(s)) if !s.is_empty() => Some(s),
            Some(other) => return Err(format!("\"tool\" must be a tool name, not {other}")),
        };
        let arg = match rule.remove("arg") {
            None => None,
            Some(Value::String(s)) if !s.is_empty() => Some(s),
            Some(other) => {
                return Err(format!(
                    "\"arg\" must be a dotted path into the arguments, not {other}"
                ));
            }
        };
        let value = rule.remove("value");
        if value.is_some() && arg.is_none() {
            return Err("\"value\" needs the \"arg\" that holds it".into());
        }
        Ok(Match { tool, arg, value })
    }

    pub fn matches(&self, tool: &str, args: &Value) -> bool {
        if let Some(want) = &self.tool
            && !glob(want, tool)
        {
            return false;
        }
        if let Some(path) = &self.arg {
            let mut at = args;
            for part in path.split('.') {
                let next = match at {
                    Value::Object(map) => map.get(part),
                    Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
                    _ => None,
                };
                match next {
                    Some(v) => at = v,
                    None => return false,
                }
            }
            if let Some(value) = &self.value
                && value != at
            {
                return false;
            }
        }
        true
    }

    /// The rule in a few words, for the Live tab and the log.
    pub fn describe(&self) -> String {
        let mut out = self.tool.clone().unwrap_or_else(|| "any tool".into());
        if let Some(arg) = &self.arg {
            match &self.value {
                Some(v) => out.push_str(&format!(" where {arg} = {v}")),
                None => out.push_str(&format!(" with {arg}")),
            }
        }
        out
    }
}

/// `*` at the start or end of `pattern` matches any text there.
fn glob(pattern: &str, name: &str) -> bool {
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(rest), _) if rest.ends_with('*') => name.contains(&rest[..rest.len() - 1]),
        (Some(rest), _) => name.ends_with(rest),
        (None, Some(rest)) => name.starts_with(rest),
        (None, None) => pattern == name,
    }
}

/// What a fault does to a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// The request waits this long before it goes to the server.
    Latency(Duration),
    /// The call is answered at once, without the server, with this error object.
    Error(Value),
    /// The server's answer never reaches the agent.
    DropResponse,
    /// The answer's text is cut to this many bytes (no longer JSON).
    Truncate(usize),
    /// The answer is padded to this many bytes.
    Oversize(usize),
    /// The call is answered with the answer an earlier call with the same arguments
    /// got (when there was one).
    Stale,
}

impl Fault {
    /// What the log and the Live tab say was injected.
    pub fn describe(&self) -> String {
        match self {
            Fault::Latency(d) => format!("latency {} ms", d.as_millis()),
            Fault::Error(e) => format!("error {}", e["error"]["code"].as_str().unwrap_or("?")),
            Fault::DropResponse => "dropped response".into(),
            Fault::Truncate(n) => format!("truncated to {n} bytes"),
            Fault::Oversize(n) => format!("oversized to {n} bytes"),
            Fault::Stale => "stale answer".into(),
        }
    }

    /// True for the faults that act on the server's answer.
    pub fn on_response(&self) -> bool {
        matches!(
            self,
            Fault::DropResponse | Fault::Truncate(_) | Fault::Oversize(_)
        )
    }
}

/// One rule of a faults file.
#[derive(Debug, Clone)]
pub struct FaultRule {
    pub when: Match,
    pub fault: Fault,
    /// Fires for this share of the calls it matches (drawn from the seeded generator).
    pub rate: Option<f64>,
    /// Fires for every Nth call it matches.
    pub every: Option<u64>,
    /// Its number, as notes and commands name it: a faults file's rules are 1, 2, …
    /// in order, and each rule a watcher adds takes the next.
    pub number: usize,
    /// The watcher that added it (`None`: the faults file's); it goes when they leave.
    pub owner: Option<u64>,
    matched: u64,
}

/// The fault rules, their counts and their generator.
#[derive(Debug, Clone)]
pub struct Faults {
    pub rules: Vec<FaultRule>,
    pub seed: u64,
    rng: ChaCha8Rng,
    /// The number the last rule added took (numbers are never used twice).
    last_number: usize,
}

/// The most answer bytes `oversize` pads to.
pub const OVERSIZE_MAX: usize = 64 * 1024 * 1024;

impl Faults {
    /// Reads a faults file.
    ///
    /// # Errors
    ///
    /// When it cannot be read, or a rule is not one (the message names the rule and the
    /// key).
    pub fn load(path: &std::path::Path) -> Result<Faults, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        Faults::from_json(&value).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The rules a faults file's JSON gives.
    ///
    /// # Errors
    ///
    /// As [`Faults::load`].
    pub fn from_json(value: &Value) -> Result<Faults, String> {
        let Some(top) = value.as_object() else {
            return Err("a faults file is an object: {\"seed\": N, \"rules\": [...]}".into());
        };
        if let Some(key) = top.keys().find(|k| *k != "seed" && *k != "rules") {
            return Err(format!(
                "unknown key {key:?} (a faults file has \"seed\" and \"rules\")"
            ));
        }
        let seed = match top.get("seed") {
            None => 0,
            Some(v) => v
                .as_u64()
                .ok_or_else(|| format!("\"seed\" must be a whole number, not {v}"))?,
        };
        let rules = top
            .get("rules")
            .and_then(Value::as_array)
            .ok_or("\"rules\" must be a list of rules")?
            .iter()
            .enumerate()
            .map(|(i, rule)| {
                let mut rule = rule_of(rule).map_err(|e| format!("rule {}: {e}", i + 1))?;
                rule.number = i + 1;
                Ok::<_, String>(rule)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Faults {
            last_number: rules.len(),
            rules,
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed),
        })
    }

    /// No rules yet: where a watcher's first rule goes.
    pub fn none() -> Faults {
        Faults {
            rules: Vec::new(),
            seed: 0,
            rng: ChaCha8Rng::seed_from_u64(0),
            last_number: 0,
        }
    }

    /// Adds a watcher's rule (one rule's JSON, as in a faults file) and gives its
    /// number.
    ///
    /// # Errors
    ///
    /// When it is not a rule, saying why.
    pub fn add(&mut self, rule: &Value, owner: u64) -> Result<usize, String> {
        let mut rule = rule_of(rule)?;
        self.last_number += 1;
        rule.number = self.last_number;
        rule.owner = Some(owner);
        let number = rule.number;
        self.rules.push(rule);
        Ok(number)
    }

    /// Removes the rules `keep` says no to, and gives how many went.
    pub fn remove(&mut self, keep: impl Fn(&FaultRule) -> bool) -> usize {
        let before = self.rules.len();
        self.rules.retain(keep);
        before - self.rules.len()
    }

    /// True when a rule answers with earlier answers, so they must be kept.
    pub fn wants_answers(&self) -> bool {
        self.rules.iter().any(|r| r.fault == Fault::Stale)
    }

    /// The faults that fire for this call, each with its rule's number (from 1). Every
    /// matching rule counts the call, and draws from the generator if it has a rate,
    /// in the order the rules are written.
    pub fn pick(&mut self, tool: &str, args: &Value) -> Vec<(usize, Fault)> {
        let mut fired = Vec::new();
        for rule in &mut self.rules {
            if !rule.when.matches(tool, args) {
                continue;
            }
            rule.matched += 1;
            let by_count = rule.every.is_none_or(|n| rule.matched.is_multiple_of(n));
            let by_rate = match rule.rate {
                Some(rate) => self.rng.random::<f64>() < rate,
                None => true,
            };
            if by_count && by_rate {
                fired.push((rule.number, rule.fault.clone()));
            }
        }
        fired
    }
}

/// A rule's `error` fault: the code `v` names, with the rule's `message` and
/// `details` when given.
fn injected_error(
    v: &Value,
    message: Option<&Value>,
    details: Option<&Value>,
) -> Result<Fault, String> {
    let name = v.as_str().unwrap_or_default();
    let code = ErrorCode::parse(name)
        .ok_or_else(|| format!("\"error\" must be one of the error codes, not {v}"))?;
    let text = message.and_then(Value::as_str).map_or_else(
        || format!("{} injected by structs-console proxy", code.as_str()),
        str::to_string,
    );
    let mut error = json!({"error": {"code": code.as_str(), "message": text}});
    if let Some(d) = details {
        if !d.is_object() {
            return Err(format!("\"details\" must be an object, not {d}"));
        }
        error["error"]["details"] = d.clone();
    }
    Ok(Fault::Error(error))
}

fn rule_of(rule: &Value) -> Result<FaultRule, String> {
    let Some(map) = rule.as_object() else {
        return Err(format!("a rule is an object, not {rule}"));
    };
    let mut map = map.clone();
    let when = Match::take(&mut map)?;
    let rate = match map.remove("rate") {
        None => None,
        Some(v) => match v.as_f64() {
            Some(r) if r > 0.0 && r <= 1.0 => Some(r),
            _ => {
                return Err(format!(
                    "\"rate\" must be a number above 0 and at most 1, not {v}"
                ));
            }
        },
    };
    let every = match map.remove("every") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(n),
            _ => return Err(format!("\"every\" must be a whole number from 1, not {v}")),
        },
    };
    let message = map.remove("message");
    let details = map.remove("details");
    let mut faults = Vec::new();
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let v = map.remove(&key).unwrap_or(Value::Null);
        let fault = match key.as_str() {
            "latency_ms" => Fault::Latency(Duration::from_millis(
                v.as_u64()
                    .filter(|ms| *ms <= 3_600_000)
                    .ok_or_else(|| format!("\"latency_ms\" must be 0 to 3600000, not {v}"))?,
            )),
            "error" => injected_error(&v, message.as_ref(), details.as_ref())?,
            "drop_response" if v == true => Fault::DropResponse,
            "stale" if v == true => Fault::Stale,
            "truncate" => Fault::Truncate(
                v.as_u64()
                    .ok_or_else(|| format!("\"truncate\" must be a number of bytes, not {v}"))?
                    as usize,
            ),
            "oversize" => Fault::Oversize(
                v.as_u64()
                    .filter(|n| *n as usize <= OVERSIZE_MAX)
                    .ok_or_else(|| {
                        format!(
                            "\"oversize\" must be a number of bytes up to {OVERSIZE_MAX}, not {v}"
                        )
                    })? as usize,
            ),
            "drop_response" | "stale" => {
                return Err(format!("\"{key}\" is true or left out, not {v}"));
            }
            other => {
                return Err(format!(
                    "unknown key {other:?} (a rule has tool, arg, value, rate, every, and one of latency_ms, error (with message, details), drop_response, truncate, oversize, stale)"
                ));
            }
        };
        faults.push(fault);
    }
    if (message.is_some() || details.is_some())
        && !faults.iter().any(|f| matches!(f, Fault::Error(_)))
    {
        return Err("\"message\" and \"details\" go with \"error\"".into());
    }
    match faults.len() {
        1 => Ok(FaultRule {
            when,
            fault: faults.remove(0),
            rate,
            every,
            number: 0,
            owner: None,
            matched: 0,
        }),
        0 => Err(
            "no fault: give one of latency_ms, error, drop_response, truncate, oversize, stale"
                .into(),
        ),
        _ => Err("one fault a rule: write another rule for the next".into()),
    }
}

/// An injected error as the wire answers it, stamped now to the second, as the
/// server stamps its own (so that an agent cannot tell them apart by the stamp).
pub fn error_answer(error: &Value) -> Value {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    ToolError::from_wire(error).map_or_else(|| error.clone(), |e| e.to_json(&now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_match_takes_a_tool_pattern_and_an_argument() {
        let m = Match {
            tool: Some("structs_query_*".into()),
            arg: Some("ids.1".into()),
            value: Some(json!("1-2")),
        };
        assert!(m.matches("structs_query_player", &json!({"ids": ["1-1", "1-2"]})));
        assert!(!m.matches("structs_query_player", &json!({"ids": ["1-1"]})));
        assert!(!m.matches("structs_list_entities", &json!({"ids": ["1-1", "1-2"]})));
        assert!(Match::default().matches("anything", &Value::Null));
        assert!(glob("*entit*", "structs_list_entities"));
        assert!(glob("*_player", "structs_query_player"));
        assert!(!glob("structs_query_player", "structs_query_players"));
    }

    #[test]
    fn rates_are_seeded_and_every_counts_the_calls_a_rule_matches() {
        let file = json!({"seed": 7, "rules": [
            {"tool": "a", "error": "RATE_LIMIT_EXCEEDED", "details": {"retry_after_ms": 1500}, "rate": 0.25},
            {"every": 3, "drop_response": true}
        ]});
        let fired = |faults: &mut Faults| -> Vec<Vec<usize>> {
            (0..400)
                .map(|_| {
                    faults
                        .pick("a", &json!({}))
                        .iter()
                        .map(|(i, _)| *i)
                        .collect()
                })
                .collect()
        };
        let mut one = Faults::from_json(&file).unwrap();
        let mut two = Faults::from_json(&file).unwrap();
        let first = fired(&mut one);
        assert_eq!(first, fired(&mut two), "the same seed, the same faults");
        let errors = first.iter().filter(|f| f.contains(&1)).count();
        assert!((70..=130).contains(&errors), "{errors} of 400 at 0.25");
        let drops: Vec<usize> = first
            .iter()
            .enumerate()
            .filter(|(_, f)| f.contains(&2))
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(drops.len(), 133);
        assert!(drops.iter().all(|n| n % 3 == 0));
        let Fault::Error(e) = &one.rules[0].fault else {
            panic!("{:?}", one.rules[0].fault)
        };
        assert_eq!(e["error"]["details"]["retry_after_ms"], 1500);
    }

    #[test]
    fn a_rule_that_is_not_one_is_refused_by_its_number_and_key() {
        let bad = |rules: Value| Faults::from_json(&json!({"rules": rules})).unwrap_err();
        assert!(
            bad(json!([{"latency_ms": 5}, {"eror": "X"}]))
                .starts_with("rule 2: unknown key \"eror\"")
        );
        assert!(bad(json!([{"error": "NOT_A_CODE"}])).contains("one of the error codes"));
        assert!(bad(json!([{"tool": "a"}])).contains("no fault"));
        assert!(bad(json!([{"latency_ms": 5, "stale": true}])).contains("one fault a rule"));
        assert!(bad(json!([{"stale": true, "rate": 2}])).contains("\"rate\""));
        assert!(bad(json!([{"stale": true, "every": 0}])).contains("\"every\""));
        assert!(bad(json!([{"value": 1, "stale": true}])).contains("\"arg\""));
        assert!(bad(json!([{"drop_response": false}])).contains("true or left out"));
        assert!(Faults::from_json(&json!({"rules": [], "extra": 1})).is_err());
    }
}
