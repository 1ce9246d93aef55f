//! `structs_calculate_damage`.

use super::*;

pub(super) fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_calculate_damage",
            description: "Resolve one attack by the chain's rules: evasion (guided vs unguided \
                defensive rates, then a planet's interceptors), defender counters, the \
                deferred block by a same-ambit defender, the volley (per-shot rolls, \
                guaranteed shots, armour unless armour-piercing, at least 1 damage when any \
                shot hits), the target's counter, recoil and planetary cannons. Returns \
                `expected` (exact expected damage to each side and the chance of each \
                event, from every branch's probability), a deterministic `sample` with the \
                full breakdown for a block height and nonce, and the formula. Stats come \
                from the struct types unless overridden.",
            input_schema: damage_schema(),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Damage of an attack",
            hints: Hints::READ,
            output_schema: output::compute::damage(),
        },
        calculate_damage,
    );
}

fn rate_schema(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": {
            "numerator": {"type": "integer", "minimum": 0, "maximum": 1_000_000},
            "denominator": {"type": "integer", "minimum": 0, "maximum": 1_000_000}
        },
        "required": ["numerator", "denominator"],
        "additionalProperties": false
    })
}

fn small_int(max: u64, description: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "maximum": max, "description": description})
}

/// The properties every unit (attacker, defender, blocker) takes.
fn unit_properties() -> Map<String, Value> {
    let v = json!({
        "struct_type": struct_type_schema("The struct type: an id 1-22 or a name."),
        "ambit": {"enum": ["water", "land", "air", "space"],
            "description": "Where it operates; must be one of the type's ambits. Chosen to make the matchup work when omitted."},
        "health": {"type": "integer", "minimum": 1, "maximum": 1000,
            "description": "Current health (default: max health)."},
        "ready": {"type": "boolean", "description": "Online with its owner online (default true); only a ready struct counters or blocks."},
        "max_health": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Override: max health."},
        "attack_reduction": small_int(100, "Override: armour taken off each volley."),
        "guided_defense": rate_schema("Override: chance to evade guided fire."),
        "unguided_defense": rate_schema("Override: chance to evade unguided fire."),
        "counter_attack": small_int(100, "Override: counter damage against an attacker in another ambit."),
        "counter_attack_same_ambit": small_int(100, "Override: counter damage against an attacker in the same ambit."),
        "post_destruction_damage": small_int(100, "Override: damage dealt to whoever destroys it."),
        "stealth": {"type": "boolean", "description": "Override: stealthed (only attackable from its own ambit)."}
    });
    v.as_object().cloned().expect("object")
}

fn unit_schema(extra: Value, description: &str) -> Value {
    let mut props = unit_properties();
    if let Value::Object(m) = extra {
        props.extend(m);
    }
    json!({
        "type": "object",
        "description": description,
        "properties": props,
        "required": ["struct_type"],
        "additionalProperties": false
    })
}

fn damage_schema() -> Value {
    let weapon = json!({
        "weapon": {"enum": ["primary", "secondary"], "description": "The weapon fired (default primary)."},
        "control": {"enum": ["guided", "unguided"], "description": "Override: the weapon's control."},
        "shots": small_int(MAX_SHOTS, "Override: shots per volley (at most 8)."),
        "guaranteed_shots": small_int(MAX_SHOTS, "Override: shots that hit without a roll."),
        "damage": small_int(100, "Override: damage per hit."),
        "shot_success": rate_schema("Override: each rolled shot's chance to hit."),
        "armour_piercing": {"type": "boolean", "description": "Override: ignores the receiver's armour."},
        "recoil_damage": small_int(100, "Override: damage the attacker takes after firing."),
        "blockable": {"type": "boolean", "description": "Override: a same-ambit defender can block it."},
        "counterable": {"type": "boolean", "description": "Override: defenders and the target can counter it."}
    });
    json!({
        "type": "object",
        "properties": {
            "attacker": unit_schema(weapon, "The attacking struct, its weapon and any stat overrides."),
            "defender": unit_schema(json!({}), "The target of the attack."),
            "blockers": {
                "type": "array", "maxItems": 16,
                "description": "The target's defenders: each ready one counters if its weapons reach the attacker; the first in the target's ambit blocks.",
                "items": unit_schema(json!({}), "One defender of the target.")
            },
            "planet": {
                "type": "object",
                "description": "The planet's defenses, when the defender is a planetary struct on its owner's planet.",
                "properties": {
                    "cannon_damage": small_int(100, "Damage of the planet's defense cannons, all together."),
                    "interceptors": small_int(40, "Interceptors (Jamming Satellites) on the planet.")
                },
                "additionalProperties": false
            },
            "block_height": {"type": "integer", "minimum": 0, "description": "Block height for the sample roll (default: the source's)."},
            "nonce": {"type": "integer", "minimum": 0, "description": "The attacking player's nonce for the sample roll (default 0)."},
            "player_id": id_schema("The attacking player (1-N) for the sample roll (default 1-1)."),
            "samples": {"type": "integer", "minimum": 0, "maximum": MAX_SAMPLES,
                "description": "Extra sampled attacks (successive nonces) to average, as a check on `expected` (default 0)."}
        },
        "required": ["attacker", "defender"],
        "additionalProperties": false
    })
}

fn rate_arg(v: &Value) -> Option<Rate> {
    Some(Rate::new(
        v.get("numerator").and_then(whole_number)?,
        v.get("denominator").and_then(whole_number)?,
    ))
}

fn ambit_by_name(name: &str) -> Option<Ambit> {
    Ambit::ALL.into_iter().find(|a| a.name() == name)
}

/// A unit from its argument object: type and stat overrides. Its ambit is settled
/// later (it may depend on the other units).
fn unit_arg(v: &Value, field: &str, id: &str) -> Result<(Unit, Option<Ambit>), ToolError> {
    let t = struct_type_arg(&v["struct_type"], &format!("{field}.struct_type"))?;
    let first = t.ambits()[0];
    let mut u = Unit::new(id, t, first);
    let s = &mut u.stats;
    if let Some(n) = u32_arg(v, "max_health") {
        s.max_health = n;
    }
    if let Some(n) = u32_arg(v, "attack_reduction") {
        s.attack_reduction = n;
    }
    if let Some(r) = v.get("guided_defense").and_then(rate_arg) {
        s.guided_defense = r;
    }
    if let Some(r) = v.get("unguided_defense").and_then(rate_arg) {
        s.unguided_defense = r;
    }
    if let Some(n) = u32_arg(v, "counter_attack") {
        s.counter_attack = n;
    }
    if let Some(n) = u32_arg(v, "counter_attack_same_ambit") {
        s.counter_attack_same_ambit = n;
    }
    if let Some(n) = u32_arg(v, "post_destruction_damage") {
        s.post_destruction_damage = n;
    }
    if let Some(b) = v.get("stealth").and_then(Value::as_bool) {
        s.stealth = b;
    }
    u.health = match u32_arg(v, "health") {
        Some(h) if h > s.max_health => {
            return Err(ToolError::field(
                ErrorCode::ValidationOutOfRange,
                format!("{field}.health"),
                format!(
                    "{h} is more than the {}'s max health {}",
                    t.name, s.max_health
                ),
            ));
        }
        Some(h) => h,
        None => s.max_health,
    };
    if let Some(b) = v.get("ready").and_then(Value::as_bool) {
        u.ready = b;
    }
    let ambit = match opt_str(v, "ambit") {
        Some(name) => {
            let a = ambit_by_name(name)
                .ok_or_else(|| invalid(&format!("{field}.ambit"), "unknown ambit"))?;
            if t.possible_ambit & a.bit() == 0 {
                let can: Vec<&str> = t.ambits().into_iter().map(Ambit::name).collect();
                return Err(invalid(
                    &format!("{field}.ambit"),
                    format!(
                        "a {} operates in {}, not {}",
                        t.name,
                        can.join(" or "),
                        a.name()
                    ),
                ));
            }
            Some(a)
        }
        None => None,
    };
    Ok((u, ambit))
}

/// Applies the attacker's weapon overrides to its weapon in `slot`.
fn weapon_overrides(u: &mut Unit, slot: WeaponSlot, v: &Value) -> Result<(), ToolError> {
    let name = struct_type(u.type_id).map_or("?", |t| t.name.as_str());
    let Some(w) = u.stats.weapon_mut(slot) else {
        return Err(invalid(
            "attacker.weapon",
            format!("a {name} has no {} weapon", slot.name()),
        ));
    };
    if let Some(c) = opt_str(v, "control") {
        w.control = if c == "guided" {
            Control::Guided
        } else {
            Control::Unguided
        };
    }
    if let Some(n) = u32_arg(v, "shots") {
        w.shots = n;
    }
    if let Some(n) = u32_arg(v, "guaranteed_shots") {
        w.guaranteed_shots = n;
    }
    if let Some(n) = u32_arg(v, "damage") {
        w.damage = n;
    }
    if let Some(r) = v.get("shot_success").and_then(rate_arg) {
        w.shot_success = r;
    }
    if let Some(b) = v.get("armour_piercing").and_then(Value::as_bool) {
        w.armour_piercing = b;
    }
    if let Some(n) = u32_arg(v, "recoil_damage") {
        w.recoil_damage = n;
    }
    if let Some(b) = v.get("blockable").and_then(Value::as_bool) {
        w.blockable = b;
    }
    if let Some(b) = v.get("counterable").and_then(Value::as_bool) {
        w.counterable = b;
    }
    if w.guaranteed_shots > w.shots {
        return Err(invalid(
            "attacker.guaranteed_shots",
            format!(
                "{} guaranteed shots is more than the {} shots the weapon fires",
                w.guaranteed_shots, w.shots
            ),
        ));
    }
    Ok(())
}

fn possible(u: &Unit) -> Vec<Ambit> {
    struct_type(u.type_id).map_or_else(Vec::new, StructType::ambits)
}

/// Whether the attacker, placed at some ambit it may take (or `given`), can fire at a
/// target placed at `at`.
fn can_fire(
    attacker: &Unit,
    given: Option<Ambit>,
    slot: WeaponSlot,
    target: &Unit,
    at: Ambit,
) -> bool {
    let froms = given.map_or_else(|| possible(attacker), |a| vec![a]);
    froms.into_iter().any(|from| {
        let mut a = attacker.clone();
        a.ambit = from;
        let mut t = target.clone();
        t.ambit = at;
        check_reach(&a, slot, &t).is_ok()
    })
}

fn weapon_json(w: &Weapon) -> Value {
    let mut v = serde_json::to_value(w).unwrap_or(Value::Null);
    v["reach_ambits"] = json!(w.reach_names());
    v
}

fn unit_json(u: &Unit) -> Value {
    let t = struct_type(u.type_id);
    let s = &u.stats;
    json!({
        "id": u.id,
        "struct_type": t.map(type_json),
        "ambit": u.ambit.name(),
        "health": u.health,
        "max_health": s.max_health,
        "ready": u.ready,
        "attack_reduction": s.attack_reduction,
        "unit_defenses": s.unit_defenses,
        "guided_defense": s.guided_defense,
        "unguided_defense": s.unguided_defense,
        "counter_attack": s.counter_attack,
        "counter_attack_same_ambit": s.counter_attack_same_ambit,
        "post_destruction_damage": s.post_destruction_damage,
        "stealth": s.stealth,
        "planetary": s.planetary,
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Resolves the attack `n` more times with the dice (successive nonces) and averages.
fn sample_many(attack: &Attack, dice: &mut Dice, n: u64) -> Value {
    let (mut to_target, mut to_attacker, mut killed, mut lost) = (0u64, 0u64, 0u64, 0u64);
    for _ in 0..n {
        let o = combat::resolve(attack, dice);
        to_target += u64::from(o.damage_to_target);
        to_attacker += u64::from(o.damage_to_attacker);
        killed += u64::from(o.target_destroyed());
        lost += u64::from(o.attacker_destroyed());
    }
    let count = n as f64;
    json!({
        "count": n,
        "mean_damage_to_target": to_target as f64 / count,
        "mean_damage_to_attacker": to_attacker as f64 / count,
        "target_destroyed_rate": killed as f64 / count,
        "attacker_destroyed_rate": lost as f64 / count,
        "nonce_after": dice.nonce(),
    })
}

async fn calculate_damage(env: Env, args: Value) -> Result<Value, ToolError> {
    let a_args = &args["attacker"];
    let slot = opt_str(a_args, "weapon")
        .and_then(WeaponSlot::parse)
        .unwrap_or(WeaponSlot::Primary);
    let (mut attacker, attacker_ambit) = unit_arg(a_args, "attacker", "attacker")?;
    weapon_overrides(&mut attacker, slot, a_args)?;
    let (mut target, target_ambit) = unit_arg(&args["defender"], "defender", "defender")?;
    place(
        &mut attacker,
        attacker_ambit,
        slot,
        &mut target,
        target_ambit,
    )?;
    let defenders = blockers_arg(&args, target.ambit)?;
    let planet = planet_arg(&args, &target)?;
    let attack = Attack {
        attacker,
        weapon: slot,
        target,
        defenders,
        planet,
    };
    let dice = DiceArgs::read(&env, &args)?;
    let resolved = resolve_attack(attack, &dice).await?;
    Ok(damage_json(&resolved, slot, &dice))
}

/// Places the attacker and the target at their given ambits, or the first that make
/// the matchup possible; an attacker whose weapon still cannot reach is refused.
fn place(
    attacker: &mut Unit,
    attacker_ambit: Option<Ambit>,
    slot: WeaponSlot,
    target: &mut Unit,
    target_ambit: Option<Ambit>,
) -> Result<(), ToolError> {
    target.ambit = target_ambit.unwrap_or_else(|| {
        possible(target)
            .into_iter()
            .find(|&at| can_fire(attacker, attacker_ambit, slot, target, at))
            .unwrap_or(target.ambit)
    });
    attacker.ambit = attacker_ambit.unwrap_or_else(|| {
        let options = possible(attacker);
        let fits = |from: Ambit| {
            let mut a = attacker.clone();
            a.ambit = from;
            check_reach(&a, slot, target).is_ok()
        };
        if options.contains(&target.ambit) && fits(target.ambit) {
            target.ambit
        } else {
            options
                .into_iter()
                .find(|&a| fits(a))
                .unwrap_or(attacker.ambit)
        }
    });
    if let Err(reason) = check_reach(attacker, slot, target) {
        let w = attacker.stats.weapon(slot);
        return Err(invalid("defender.ambit", reason)
            .with_extra("attacker_ambit", json!(attacker.ambit.name()))
            .with_extra("defender_ambit", json!(target.ambit.name()))
            .with_extra("weapon_reach", json!(w.map(Weapon::reach_names))));
    }
    Ok(())
}

/// The blockers, each at its given ambit, or the target's (`target_ambit`) when it
/// may take it, else its first.
fn blockers_arg(args: &Value, target_ambit: Ambit) -> Result<Vec<Unit>, ToolError> {
    let mut defenders = Vec::new();
    if let Some(list) = args.get("blockers").and_then(Value::as_array) {
        for (i, b) in list.iter().enumerate() {
            let field = format!("blockers[{i}]");
            let (mut u, ambit) = unit_arg(b, &field, &format!("blocker-{}", i + 1))?;
            u.ambit = ambit.unwrap_or_else(|| {
                let options = possible(&u);
                if options.contains(&target_ambit) {
                    target_ambit
                } else {
                    options[0]
                }
            });
            defenders.push(u);
        }
    }
    Ok(defenders)
}

/// The planet's defenses, which protect only a planetary target.
fn planet_arg(args: &Value, target: &Unit) -> Result<Option<PlanetDefenses>, ToolError> {
    let Some(p) = args.get("planet") else {
        return Ok(None);
    };
    if !target.stats.planetary {
        return Err(invalid(
            "planet",
            format!(
                "planetary defenses protect planetary structs only; the defender, a {}, is a fleet struct",
                struct_type(target.type_id).map_or("?", |t| t.name.as_str())
            ),
        ));
    }
    Ok(Some(PlanetDefenses {
        cannon_damage: u32_arg(p, "cannon_damage").unwrap_or(0),
        interceptors: u32_arg(p, "interceptors").unwrap_or(0),
    }))
}

/// The dice: the block height, player and nonce they start from, and how many more
/// attacks to sample after the first.
struct DiceArgs {
    block_height: u64,
    player: String,
    nonce: u64,
    samples: u64,
}

impl DiceArgs {
    fn read(env: &Env, args: &Value) -> Result<DiceArgs, ToolError> {
        let block_height =
            u64_arg(args, "block_height").unwrap_or_else(|| env.status().block_height);
        let nonce = u64_arg(args, "nonce").unwrap_or(0);
        let player = match opt_str(args, "player_id") {
            Some(p) => parse_id(p, "player_id", Some(EntityKind::Player))?.to_string(),
            None => "1-1".to_string(),
        };
        let samples = u64_arg(args, "samples").unwrap_or(0);
        Ok(DiceArgs {
            block_height,
            player,
            nonce,
            samples,
        })
    }
}

/// An attack with what it comes to: the exact expectation, a sample with the dice,
/// and the average of more samples when asked for.
struct Resolved {
    attack: Attack,
    expected: combat::Expectation,
    sample: combat::Outcome,
    sampled: Option<Value>,
}

/// Resolves the attack: the expectation, a sample and the further samples.
async fn resolve_attack(attack: Attack, dice: &DiceArgs) -> Result<Resolved, ToolError> {
    // Thousands of branches or samples, each with a few SHA-256 rolls: off the
    // runtime's workers.
    let player = dice.player.clone();
    let (block_height, nonce, samples) = (dice.block_height, dice.nonce, dice.samples);
    tokio::task::spawn_blocking(move || {
        let expected = combat::expected(&attack);
        let mut dice = Dice::new(block_height, &player, nonce);
        let sample = combat::resolve(&attack, &mut dice);
        let sampled = (samples > 0).then(|| sample_many(&attack, &mut dice, samples));
        Resolved {
            attack,
            expected,
            sample,
            sampled,
        }
    })
    .await
    .map_err(|e| {
        ToolError::new(
            ErrorCode::ToolExecutionFailed,
            format!("the damage calculation failed: {e}"),
        )
    })
}

/// The answer: the units, the expectation, the sample with its dice, the formula and
/// the explanation.
fn damage_json(r: &Resolved, slot: WeaponSlot, dice: &DiceArgs) -> Value {
    let attack = &r.attack;
    let w = attack
        .attacker
        .stats
        .weapon(slot)
        .expect("check_reach found the weapon");
    let mut attacker_json = unit_json(&attack.attacker);
    attacker_json["weapon"] = weapon_json(w);
    json!({
        "attacker": attacker_json,
        "defender": unit_json(&attack.target),
        "blockers": attack.defenders.iter().map(unit_json).collect::<Vec<_>>(),
        "planet": attack.planet,
        "expected": r.expected,
        "sample": {
            "dice": {
                "block_height": dice.block_height,
                "player_id": dice.player,
                "nonce": dice.nonce,
                "nonce_after": dice.nonce + r.sample.rolls,
                "roll": "success when first 8 bytes (big-endian) of SHA-256(\"{block_height}/{player_id}/{nonce}\") mod denominator < numerator; each roll advances the nonce",
            },
            "outcome": r.sample,
        },
        "samples": r.sampled.clone().unwrap_or(Value::Null),
        "formula": "evade = roll(target's guided|unguided defensive rate), then for guided fire at a planetary \
                    target roll(1 - (2/3)^interceptors); each ready defender whose weapons reach the attacker \
                    counters once (counterAttackSameAmbit if same ambit, else counterAttack); the first ready \
                    defender in the target's ambit blocks (blockable, not evaded, attacker alive); \
                    volley = sum(damage for each shot: shot < guaranteed or roll(shot success)); \
                    damage = max(1, volley - armour) when volley > 0 (armour 0 if armour-piercing), \
                    capped at the receiver's health; then the target counters, recoil, cannons",
        "explanation": explanation(r, slot, w),
    })
}

/// The attack and its expectation in a sentence or two.
fn explanation(r: &Resolved, slot: WeaponSlot, w: &Weapon) -> String {
    let (attack, expected) = (&r.attack, &r.expected);
    let a_name = struct_type(attack.attacker.type_id).map_or("?", |t| t.name.as_str());
    let t_name = struct_type(attack.target.type_id).map_or("?", |t| t.name.as_str());
    format!(
        "{} {a_name} in {} fires its {} weapon ({}, {} {} of {} damage, {} guaranteed, {} per rolled shot{}) \
         at {} {t_name} in {}. Expected: {} damage to the {t_name} ({}% destroyed), {} back to the \
         {a_name} ({}% destroyed); evaded {}% of the time, blocked {}% (the blocker takes {} expected).",
        capital(article(a_name)),
        attack.attacker.ambit.name(),
        slot.name(),
        w.control.name(),
        w.shots,
        if w.shots == 1 { "shot" } else { "shots" },
        w.damage,
        w.guaranteed_shots,
        w.shot_success,
        if w.armour_piercing {
            ", armour-piercing"
        } else {
            ""
        },
        article(t_name),
        attack.target.ambit.name(),
        round3(expected.damage_to_target),
        round3(expected.target_destroyed * 100.0),
        round3(expected.damage_to_attacker),
        round3(expected.attacker_destroyed * 100.0),
        round3(expected.evaded * 100.0),
        round3(expected.blocked * 100.0),
        round3(expected.damage_to_blocker),
    )
}
