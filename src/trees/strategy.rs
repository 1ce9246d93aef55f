//! A named strategy evaluated against a state: its conditions, the builds it needs
//! (each checked by the sim's rules as a `MsgStructBuildInitiate`, and together for
//! power), the work it ends with, how long all of it takes and what it costs.
//!
//! **Time.** Charge-consuming actions run one after another: the first when the bar
//! holds its cost, each next one its cost later (the bar resets to 0). A build
//! completes when its proof reaches difficulty 3 (almost free), `first age at which
//! difficulty(age, buildDifficulty) <= 3` blocks after it starts; mining and refining
//! likewise with the type's mining or refining range from when the struct comes
//! online, and a refine also waits for the first mined ore when none is held; a raid
//! with the target's planetary shield as range from when the fleet arrives (or from
//! the running raid clock). Blocks are 6 s.
//!
//! **Score** (0..1): `met / total × (1 if feasible else 0.5) × 24 / (24 + hours)`,
//! where `met / total` counts the requirements that hold (1 when there are none),
//! feasible means every blocking requirement holds (charge only takes time, so it
//! never blocks), and `hours` is the estimated time: a strategy done in a day scores
//! half of one done now.

use serde_json::{Value, json};

use super::facts::{Engine, Fact, is_built, is_online, type_of};
use super::walk::{TARGET_DIFFICULTY, blocks_until};
use super::{Strategy, StrategyBuild, StrategyCondition, Work};
use crate::entity::struct_types::raw_u64;
use crate::entity::struct_types::{StructType, struct_type};
use crate::error::ToolError;
use crate::game::difficulty::first_age_at_most;
use crate::json::chain_u64;
use crate::pow::schedule::BLOCK_SECONDS;

pub const SCORE_FORMULA: &str = "score = met / total × (1 if feasible else 0.5) × 24 / (24 + hours): \
    the share of requirements that hold, halved when a blocking one does not, discounted by the \
    estimated time (a day halves it)";

/// One requirement of the strategy, with where it comes from.
struct Req {
    requirement: String,
    met: Option<bool>,
    detail: String,
    step: String,
    blocking: bool,
    missing_input: Option<String>,
}

impl Req {
    fn json(&self) -> Value {
        let mut v = json!({
            "requirement": self.requirement,
            "met": self.met,
            "detail": self.detail,
            "step": self.step,
            "blocking": self.blocking,
        });
        if let Some(m) = &self.missing_input {
            v["missing_input"] = json!(m);
        }
        v
    }
}

/// Blocks from a work's start until its proof is at difficulty 3.
fn d3(range: u64) -> u64 {
    first_age_at_most(TARGET_DIFFICULTY, range).unwrap_or(0)
}

/// Charge-consuming actions in sequence: when each can happen.
struct ChargeClock {
    charge_now: u64,
    last: Option<u64>,
}

impl ChargeClock {
    fn next(&mut self, cost: u64) -> u64 {
        let at = match self.last {
            None => cost.saturating_sub(self.charge_now),
            Some(prev) => prev + cost,
        };
        self.last = Some(at);
        at
    }
}

async fn known_u64(engine: &mut Engine, name: &str) -> Result<Option<u64>, ToolError> {
    Ok(match engine.fact(name, None).await? {
        Fact::Known { value, .. } => value.as_u64(),
        Fact::Unknown { .. } => None,
    })
}

async fn known_i64(engine: &mut Engine, name: &str) -> Result<Option<i64>, ToolError> {
    Ok(match engine.fact(name, None).await? {
        Fact::Known { value, .. } => value.as_i64(),
        Fact::Unknown { .. } => None,
    })
}

async fn known_bool(engine: &mut Engine, name: &str) -> Result<Option<bool>, ToolError> {
    Ok(match engine.fact(name, None).await? {
        Fact::Known { value, .. } => value.as_bool(),
        Fact::Unknown { .. } => None,
    })
}

/// Where a struct of this type stands (or will): found now, or built by the strategy.
#[derive(Clone, Copy)]
enum Ready {
    /// Online with its cycle started at this block.
    Running(u64),
    /// Comes online (its cycle starts) this many blocks from now.
    At(u64),
    Missing,
}

/// Evaluates a strategy against the state: its requirements, the steps with their
/// times, the cost, and the score.
pub async fn evaluate(engine: &mut Engine, name: &str, s: &Strategy) -> Result<Value, ToolError> {
    let height = engine.height();
    let mut reqs: Vec<Req> = Vec::new();
    for c in &s.conditions {
        reqs.push(condition_req(engine, c).await?);
    }

    let charge_now = known_u64(engine, "player.charge").await?.unwrap_or(0);
    let available = known_i64(engine, "player.available_capacity_mw")
        .await?
        .unwrap_or(0);
    let mut e = Estimate::new(height, reqs, charge_now);
    for b in &s.builds {
        e.needed_builds(engine, b).await?;
    }
    e.check_power(available);
    for w in &s.work {
        match w {
            Work::OreMine | Work::OreRefine => e.ore_work(engine, *w).await?,
            Work::FleetMove => e.fleet_move(engine).await?,
            Work::PlanetRaid => e.planet_raid(engine).await?,
        }
    }
    Ok(e.report(name, s))
}

/// A strategy's condition as a requirement: its fact compared with the expected value.
async fn condition_req(engine: &mut Engine, c: &StrategyCondition) -> Result<Req, ToolError> {
    let cond = &c.condition;
    let (met, detail, missing_input) = match engine.fact(&cond.fact, Some(cond)).await? {
        Fact::Known { value, detail } => {
            let expected = match &cond.value_from {
                Some(f) => match engine.fact(f, None).await? {
                    Fact::Known { value, .. } => Some(value),
                    Fact::Unknown { .. } => None,
                },
                None => cond.value(),
            };
            let met = cond.op().and_then(|op| op.apply(&value, expected.as_ref()));
            (
                met,
                detail.unwrap_or_else(|| format!("{} is {value}", cond.fact)),
                None,
            )
        }
        Fact::Unknown {
            missing_input,
            reason,
        } => (None, reason, missing_input),
    };
    Ok(Req {
        requirement: c.text.clone(),
        met,
        detail,
        step: "conditions".into(),
        blocking: c.blocking,
        missing_input,
    })
}

/// What evaluating a strategy gathers as it goes: requirements, steps, time and cost.
struct Estimate {
    height: u64,
    reqs: Vec<Req>,
    clock: ChargeClock,
    steps: Vec<Value>,
    charge_cost: u64,
    build_draw: u64,
    passive_draw: u64,
    new_builds: u32,
    end: u64,
    /// When each needed type comes online (for the work that follows).
    ready: Vec<(u8, Ready, Option<String>)>,
    mine_done: Option<u64>,
    move_done: Option<u64>,
}

impl Estimate {
    /// Nothing built or worked yet, with the conditions' requirements and the bar's charge.
    fn new(height: u64, reqs: Vec<Req>, charge_now: u64) -> Self {
        Estimate {
            height,
            reqs,
            clock: ChargeClock {
                charge_now,
                last: None,
            },
            steps: Vec::new(),
            charge_cost: 0,
            build_draw: 0,
            passive_draw: 0,
            new_builds: 0,
            end: 0,
            ready: Vec::new(),
            mine_done: None,
            move_done: None,
        }
    }

    /// A build the strategy needs: the structs of its type already there first, then
    /// new ones up to its count.
    async fn needed_builds(
        &mut self,
        engine: &mut Engine,
        b: &StrategyBuild,
    ) -> Result<(), ToolError> {
        let t = struct_type(b.struct_type).expect("validated");
        let have: Vec<(String, Value)> = engine
            .home_structs(t.is_fleet())
            .await?
            .into_iter()
            .filter(|(_, v)| type_of(v) == t.id)
            .collect();
        for (id, v) in have.iter().take(b.count as usize) {
            self.existing(t, id, v);
        }
        for _ in have.len().min(b.count as usize)..b.count as usize {
            self.new_build(engine, t).await?;
        }
        Ok(())
    }

    /// A struct already there: online, built but offline (to activate), or building.
    fn existing(&mut self, t: &StructType, id: &str, v: &Value) {
        let start = chain_u64(v, &["structAttributes", "blockStartBuild"]).unwrap_or(0);
        let done = if is_built(v) {
            0
        } else {
            blocks_until(
                TARGET_DIFFICULTY,
                t.build_difficulty,
                self.height.saturating_sub(start),
            )
            .unwrap_or(0)
        };
        let (state, starts, done, status) = if is_online(v) {
            (Ready::Running(cycle_start(t, v)), 0, done, "online")
        } else if is_built(v) {
            // Built but offline: activation is one more charge-consuming action.
            let cost = raw_u64(t, "activateCharge");
            let at = self.clock.next(cost);
            self.charge_cost += cost;
            (Ready::At(at), at, at, "built, offline: activate it")
        } else {
            (Ready::At(done), 0, done, "building: complete its proof")
        };
        self.end = self.end.max(done);
        self.ready.push((t.id, state, Some(id.to_string())));
        self.steps.push(json!({
            "step": format!("{} {id}", t.name),
            "status": status,
            "starts_in_blocks": starts,
            "done_in_blocks": done,
        }));
    }

    /// A struct the strategy builds: its build checked, then timed and costed.
    async fn new_build(&mut self, engine: &mut Engine, t: &StructType) -> Result<(), ToolError> {
        self.new_builds += 1;
        let step = format!("build {}", t.name);
        self.check_candidate(engine, "build", Some(t.id), &step, "buildable")
            .await?;
        let cost = raw_u64(t, "buildCharge");
        let start = self.clock.next(cost);
        let done = start + d3(t.build_difficulty);
        self.charge_cost += cost;
        self.build_draw += t.build_draw;
        self.passive_draw += t.passive_draw;
        self.end = self.end.max(done);
        self.ready.push((t.id, Ready::At(done), None));
        self.steps.push(json!({
            "step": step,
            "status": "to build",
            "starts_in_blocks": start,
            "done_in_blocks": done,
            "difficulty_range": t.build_difficulty,
            "charge": cost,
            "build_draw_mw": t.build_draw,
        }));
        Ok(())
    }

    /// An action's candidate message checked by the sim's rules, a requirement each
    /// (charge only takes time); one that cannot be made is an `unknown` requirement.
    async fn check_candidate(
        &mut self,
        engine: &mut Engine,
        action: &str,
        struct_type_id: Option<u8>,
        step: &str,
        unknown: &str,
    ) -> Result<(), ToolError> {
        match engine.candidate(action, struct_type_id).await? {
            Ok(msg) => {
                for r in engine.check(&msg)? {
                    self.reqs.push(Req {
                        requirement: r.requirement.to_string(),
                        met: Some(r.met),
                        detail: r.detail.clone(),
                        step: step.to_string(),
                        blocking: r.requirement != "sufficientCharge",
                        missing_input: None,
                    });
                }
            }
            Err(Fact::Unknown {
                missing_input,
                reason,
            }) => self.reqs.push(Req {
                requirement: unknown.into(),
                met: None,
                detail: reason,
                step: step.to_string(),
                blocking: true,
                missing_input,
            }),
            Err(Fact::Known { .. }) => {}
        }
        Ok(())
    }

    /// With more than one new build, whether the power available covers them together.
    fn check_power(&mut self, available: i64) {
        if self.new_builds > 1 {
            let ok = available >= self.build_draw as i64;
            let (new_builds, build_draw) = (self.new_builds, self.build_draw);
            self.reqs.push(Req {
                requirement: "sufficientPower".into(),
                met: Some(ok),
                detail: format!(
                    "the {new_builds} builds draw {build_draw} mW together (each from its initiation); {available} mW is available"
                ),
                step: "all builds".into(),
                blocking: true,
                missing_input: None,
            });
        }
    }

    /// Mining or refining one ore: on the struct that does it, a refine after the mine
    /// when no ore is held.
    async fn ore_work(&mut self, engine: &mut Engine, w: Work) -> Result<(), ToolError> {
        let (type_id, what) = if w == Work::OreMine {
            (14u8, "mine one ore")
        } else {
            (15u8, "refine one ore")
        };
        let t = struct_type(type_id).expect("known type");
        let range = if w == Work::OreMine {
            raw_u64(t, "oreMiningDifficulty")
        } else {
            raw_u64(t, "oreRefiningDifficulty")
        };
        let found = self.ready_of(engine, t).await?;
        let (start, mut done) = self.work_timing(found, t, range, what);
        if w == Work::OreRefine {
            let held = known_u64(engine, "player.stored_ore").await?.unwrap_or(0);
            if held == 0 {
                match self.mine_done {
                    Some(m) => done = done.max(m),
                    None => self.reqs.push(Req {
                        requirement: "hasStoredOre".into(),
                        met: Some(false),
                        detail: "no ore held and none mined by this strategy".into(),
                        step: what.into(),
                        blocking: true,
                        missing_input: None,
                    }),
                }
            }
        } else {
            self.mine_done = Some(done);
        }
        self.end = self.end.max(done);
        self.steps.push(json!({
            "step": what,
            "starts_in_blocks": start,
            "done_in_blocks": done,
            "difficulty_range": range,
        }));
        Ok(())
    }

    /// Where a struct of this type stands: as the builds left it, else as found on the planet.
    async fn ready_of(&self, engine: &mut Engine, t: &StructType) -> Result<Ready, ToolError> {
        if let Some(r) = self.ready.iter().find(|(id, _, _)| *id == t.id) {
            return Ok(r.1);
        }
        let have = engine
            .home_structs(false)
            .await?
            .into_iter()
            .find(|(_, v)| type_of(v) == t.id);
        Ok(match have {
            Some((_, v)) if is_online(&v) => Ready::Running(cycle_start(t, &v)),
            Some(_) => Ready::Missing,
            None => Ready::Missing,
        })
    }

    /// When a struct's work of this range starts and is done; a missing struct is a
    /// blocking requirement.
    fn work_timing(&mut self, found: Ready, t: &StructType, range: u64, what: &str) -> (u64, u64) {
        match found {
            Ready::Running(cycle) => (
                0,
                blocks_until(TARGET_DIFFICULTY, range, self.height.saturating_sub(cycle))
                    .unwrap_or(0),
            ),
            Ready::At(at) => (at, at + d3(range)),
            Ready::Missing => {
                self.reqs.push(Req {
                    requirement: format!("{} online", t.name),
                    met: Some(false),
                    detail: format!(
                        "no online {} on the planet and the strategy builds none",
                        t.name
                    ),
                    step: what.into(),
                    blocking: true,
                    missing_input: None,
                });
                (0, d3(range))
            }
        }
    }

    /// Moving the fleet to the target, unless it is there: checked, then one charge.
    async fn fleet_move(&mut self, engine: &mut Engine) -> Result<(), ToolError> {
        let at_target = known_bool(engine, "fleet.at_target").await?;
        if at_target == Some(true) {
            self.move_done = Some(0);
            self.steps.push(
                json!({"step": "move the fleet to the target", "status": "already there",
                "starts_in_blocks": 0, "done_in_blocks": 0}),
            );
            return Ok(());
        }
        let step = "move the fleet to the target".to_string();
        self.check_candidate(engine, "move_to_target", None, &step, "movable")
            .await?;
        let cost = raw_u64(struct_type(1).expect("command ship"), "moveCharge");
        let at = self.clock.next(cost);
        self.charge_cost += cost;
        self.move_done = Some(at);
        self.end = self.end.max(at);
        self.steps.push(
            json!({"step": step, "starts_in_blocks": at, "done_in_blocks": at, "charge": cost}),
        );
        Ok(())
    }

    /// Raiding the target: the proof at its shield, from the fleet's arrival or the
    /// running raid clock.
    async fn planet_raid(&mut self, engine: &mut Engine) -> Result<(), ToolError> {
        let shield = known_u64(engine, "target.shield").await?;
        let clock_on = known_bool(engine, "target.raid_clock_running").await?;
        let Some(range) = shield else {
            self.reqs.push(Req {
                requirement: "target".into(),
                met: None,
                detail: "the raid needs state.target_planet_id".into(),
                step: "raid".into(),
                blocking: true,
                missing_input: Some("target_planet_id".into()),
            });
            return Ok(());
        };
        let arrive = self.move_done.unwrap_or(0);
        let done = if clock_on == Some(true) {
            let started = raid_started(engine, self.height).await?;
            arrive.max(
                blocks_until(
                    TARGET_DIFFICULTY,
                    range,
                    self.height.saturating_sub(started),
                )
                .unwrap_or(0),
            )
        } else {
            arrive + d3(range)
        };
        self.end = self.end.max(done);
        self.steps.push(json!({
            "step": "raid: the proof at the target's shield",
            "starts_in_blocks": arrive,
            "done_in_blocks": done,
            "difficulty_range": range,
            "raid_clock_running": clock_on,
        }));
        Ok(())
    }

    /// The evaluation: feasibility, score, requirements, time and cost.
    fn report(self, name: &str, s: &Strategy) -> Value {
        let (reqs, end, height) = (&self.reqs, self.end, self.height);
        let total = reqs.len();
        let met = reqs.iter().filter(|r| r.met == Some(true)).count();
        let requirements_met = met == total;
        let feasible = reqs.iter().all(|r| !r.blocking || r.met == Some(true));
        let hours = end as f64 * BLOCK_SECONDS / 3600.0;
        let share = if total == 0 {
            1.0
        } else {
            met as f64 / total as f64
        };
        let score = share * if feasible { 1.0 } else { 0.5 } * 24.0 / (24.0 + hours);
        let missing: Vec<Value> = reqs
            .iter()
            .filter(|r| r.met != Some(true))
            .map(Req::json)
            .collect();
        json!({
            "strategy": name,
            "title": s.title,
            "description": s.description,
            "feasible": feasible,
            "score": (score * 1000.0).round() / 1000.0,
            "score_formula": SCORE_FORMULA,
            "requirements_met": requirements_met,
            "missing_requirements": missing,
            "requirements": reqs.iter().map(Req::json).collect::<Vec<_>>(),
            "estimated_time": {
                "blocks": end,
                "seconds": end as f64 * BLOCK_SECONDS,
                "hours": (hours * 10.0).round() / 10.0,
                "block_seconds": BLOCK_SECONDS,
                "target_difficulty": TARGET_DIFFICULTY,
                "steps": self.steps,
            },
            "estimated_cost": {
                "charge": self.charge_cost,
                "build_draw_mw": self.build_draw,
                "passive_draw_mw": self.passive_draw,
                "alpha_matter": 0,
                "note": "charge is what the bar must hold for each action in turn (it resets to 0 after each, refilling one per block); power is drawn from a build's initiation (build draw) and while online (passive draw), not spent; builds cost no Alpha Matter",
            },
            "block_height": height,
        })
    }
}

/// When the target's running raid clock started: its `blockStartRaid`, else now.
async fn raid_started(engine: &mut Engine, height: u64) -> Result<u64, ToolError> {
    let target = engine
        .state()
        .get("target_planet_id")
        .and_then(Value::as_str)
        .and_then(|t| crate::entity::EntityId::parse(t).ok());
    Ok(match target {
        Some(id) => chain_u64(
            &engine.entity(id).await?,
            &["planetAttributes", "blockStartRaid"],
        )
        .unwrap_or(height),
        None => height,
    })
}

/// When an online struct's mining or refining cycle started (its activation).
fn cycle_start(t: &StructType, v: &Value) -> u64 {
    let field = if raw_u64(t, "oreRefiningDifficulty") > 0 {
        "blockStartOreRefine"
    } else {
        "blockStartOreMine"
    };
    chain_u64(v, &["structAttributes", field]).unwrap_or(0)
}
