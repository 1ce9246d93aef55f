//! The expected results of an attack: every branch of the rules walked and weighed by
//! its exact probability.

use serde::Serialize;

use super::resolve::resolve_with;
use super::units::Attack;
use crate::game::{Rate, Roller};

/// Expected results of an attack, from every branch of the rules weighed by its exact
/// probability (not by sampling).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expectation {
    pub damage_to_target: f64,
    pub damage_to_attacker: f64,
    pub damage_to_blocker: f64,
    pub target_destroyed: f64,
    pub attacker_destroyed: f64,
    pub evaded: f64,
    pub blocked: f64,
    pub volley_fired: f64,
    /// Distinct branches walked (each a different sequence of roll results).
    pub branches: usize,
}

/// Rolls fixed results for a prefix of the checks, then the most likely result, and
/// records every check it was asked.
struct Script {
    prefix: Vec<bool>,
    taken: Vec<(Rate, bool)>,
}

impl Roller for Script {
    fn roll(&mut self, rate: Rate) -> bool {
        let i = self.taken.len();
        let v = self.prefix.get(i).copied().unwrap_or(rate.is_certain());
        self.taken.push((rate, v));
        v
    }
}

/// Walks every branch of [`resolve_with`] (each check both ways, unless one way is
/// impossible) and weighs its results by its probability. The number of branches is
/// at most 2^(checks); with at most 8 rolled shots that is a few thousand.
pub fn expected(attack: &Attack) -> Expectation {
    let mut e = Expectation {
        damage_to_target: 0.0,
        damage_to_attacker: 0.0,
        damage_to_blocker: 0.0,
        target_destroyed: 0.0,
        attacker_destroyed: 0.0,
        evaded: 0.0,
        blocked: 0.0,
        volley_fired: 0.0,
        branches: 0,
    };
    let mut stack: Vec<Vec<bool>> = vec![Vec::new()];
    while let Some(prefix) = stack.pop() {
        let fixed = prefix.len();
        let mut script = Script {
            prefix,
            taken: Vec::new(),
        };
        let out = resolve_with(attack, &mut script);
        let p: f64 = script
            .taken
            .iter()
            .map(|&(rate, v)| {
                if v {
                    rate.probability()
                } else {
                    1.0 - rate.probability()
                }
            })
            .product();
        // Every check past the fixed prefix took its default; the other way is a new
        // branch when it can happen.
        for i in fixed..script.taken.len() {
            let (rate, v) = script.taken[i];
            let other_possible = if v {
                !rate.is_certain()
            } else {
                !rate.is_never()
            };
            if other_possible {
                let mut next: Vec<bool> = script.taken[..i].iter().map(|&(_, v)| v).collect();
                next.push(!v);
                stack.push(next);
            }
        }
        e.branches += 1;
        e.damage_to_target += p * f64::from(out.damage_to_target);
        e.damage_to_attacker += p * f64::from(out.damage_to_attacker);
        e.damage_to_blocker += p * f64::from(out.damage_to_blocker);
        e.target_destroyed += p * f64::from(u8::from(out.target_destroyed()));
        e.attacker_destroyed += p * f64::from(u8::from(out.attacker_destroyed()));
        e.evaded += p * f64::from(u8::from(out.evasion.evaded));
        e.blocked += p * f64::from(u8::from(out.blocking.blocked));
        e.volley_fired += p * f64::from(u8::from(out.volley.fired));
    }
    e
}
