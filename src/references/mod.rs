//! References: a response can carry the full data of every entity it mentions.
//!
//! After a reference-capable tool's handler returns, [`attach`] walks the result for
//! entity ids ([`extract`]), chooses which to include (mode, type filter, limits,
//! depth), resolves them ([`resolve`]) and adds two top-level fields beside the
//! result's own:
//!
//! - `references`: a flat map, entity id → `{reference_type, id, status, error?,
//!   referenced_from, referenced_in, depth, ...the entity's data as its query returns it}`;
//! - `references_summary`: how many were included, resolved, failed, served from the
//!   cache, traversed, and left out by which limit, so an agent knows whether the map
//!   is complete.
//!
//! That is the `full` bookkeeping ([`Metadata`]). A call that asked for a smaller answer
//! (`fields`, or verbosity summary or compact) gets `failures` unless it says otherwise:
//! an entry is `{reference_type, ...the entity's data}`, only a failed one says why and
//! where it was mentioned, and the summary comes only when something failed or was left
//! out, holding only what is not zero. With `none` a failed reference leaves the map and
//! the summary names it.
//!
//! The type filter decides what enters the map, not what is walked: at depth 2 a
//! first-level entity of a filtered-out kind is still fetched (counted as `traversed`)
//! so that the kinds asked for are reached through it (a player's structs through its
//! planet). Their `referenced_in` then names an entity that is not in the map. Such a
//! fetch counts against `max_references` like an entry; one the limit stops is counted
//! as left out, since what it would have led to is missing.
//!
//! With references off the result is untouched, byte for byte.

pub mod config;
pub mod extract;
pub mod resolve;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value, json};

pub use config::{
    Include, Metadata, Mode, OnError, ReferenceConfig, ReferenceOptions, ReferencePlan, Support,
};
use extract::{Candidate, Extraction};
use resolve::Outcome;

use crate::entity::EntityId;
use crate::error::ErrorCode;
use crate::source::World;
use resolve::Resolver;

/// The fields a `references` entry has beside the entity's own data (`id` is both).
pub const ENTRY_FIELDS: [&str; 7] = [
    "reference_type",
    "status",
    "error",
    "error_code",
    "referenced_from",
    "referenced_in",
    "depth",
];

/// Most left-out ids the summary lists by name.
const LEFT_OUT_IDS_SHOWN: usize = 20;

/// Why a found reference was not included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    Total,
    PerEntity,
}

/// The choice of references for one response, level by level.
struct Selection<'a> {
    opts: &'a ReferenceOptions,
    chosen: Vec<(Candidate, u8)>,
    chosen_ids: HashSet<EntityId>,
    per_entity: HashMap<EntityId, usize>,
    left_out: Vec<(EntityId, Limit)>,
    /// First-level mentions of kinds the type filter leaves out, fetched only to reach
    /// their own references at depth 2 (never in the map).
    through: Vec<EntityId>,
    through_ids: HashSet<EntityId>,
}

impl<'a> Selection<'a> {
    fn new(opts: &'a ReferenceOptions) -> Selection<'a> {
        Selection {
            opts,
            chosen: Vec::new(),
            chosen_ids: HashSet::new(),
            per_entity: HashMap::new(),
            left_out: Vec::new(),
            through: Vec::new(),
            through_ids: HashSet::new(),
        }
    }

    /// Entities this response fetches (or takes from the cache): the map's entries and
    /// those walked through. `max_references` bounds both together.
    fn fetches(&self) -> usize {
        self.chosen.len() + self.through.len()
    }

    /// Considers `candidates` found at `depth`.
    fn consider(&mut self, candidates: &[Candidate], present: &HashSet<EntityId>, depth: u8) {
        for c in candidates {
            // Primary: direct relationships first, then what those entities hold.
            let by_mode = match (self.opts.mode, depth) {
                (Mode::All, _) => true,
                (Mode::Primary, 1) => c.primary,
                (Mode::Primary, _) => c.contents,
            };
            if !by_mode || present.contains(&c.id) || self.chosen_ids.contains(&c.id) {
                continue;
            }
            if !self.opts.wants(c.id.kind) {
                // A kind the filter leaves out can still lead to kinds it keeps: at depth
                // 2 it is fetched and walked. Its fetch counts against `max_references`.
                if depth == 1 && self.opts.depth >= 2 && self.through_ids.insert(c.id) {
                    if self.fetches() < self.opts.max_references {
                        self.through.push(c.id);
                    } else {
                        self.left_out.push((c.id, Limit::Total));
                    }
                }
                continue;
            }
            if let (Some(limit), Some(by)) = (self.opts.max_per_entity, c.referenced_in)
                && self.per_entity.get(&by).copied().unwrap_or(0) >= limit
            {
                self.left_out.push((c.id, Limit::PerEntity));
                continue;
            }
            if self.fetches() >= self.opts.max_references {
                self.left_out.push((c.id, Limit::Total));
                continue;
            }
            if let Some(by) = c.referenced_in {
                *self.per_entity.entry(by).or_default() += 1;
            }
            self.chosen_ids.insert(c.id);
            self.chosen.push((c.clone(), depth));
        }
    }

    /// Left-out ids that no other mention brought in, each once, with its first reason.
    fn left_out(&self) -> Vec<(EntityId, Limit)> {
        let mut seen = HashSet::new();
        self.left_out
            .iter()
            .filter(|(id, _)| !self.chosen_ids.contains(id) && seen.insert(*id))
            .copied()
            .collect()
    }
}

/// Adds `references` and `references_summary` to `response` as `plan` says. A response
/// that is not a JSON object is left as it is. `lean_shaping`: the call asked for a
/// smaller answer (`fields`, or verbosity summary or compact), which makes the map's
/// bookkeeping lean unless the call says otherwise ([`ReferenceOptions::metadata`]).
pub async fn attach(
    resolver: &Arc<Resolver>,
    world: &World,
    plan: &ReferencePlan,
    lean_shaping: bool,
    response: &mut Value,
) {
    let Some(obj) = response.as_object() else {
        return;
    };
    let (references, summary) = match plan {
        ReferencePlan::Off => return,
        ReferencePlan::Disabled(reason) => (
            Map::new(),
            Some(json!({"status": "disabled", "reason": reason})),
        ),
        ReferencePlan::On(opts) => {
            collect(resolver, world, opts, opts.metadata(lean_shaping), obj).await
        }
    };
    if let Some(obj) = response.as_object_mut() {
        obj.insert("references".into(), Value::Object(references));
        if let Some(summary) = summary {
            obj.insert("references_summary".into(), summary);
        }
    }
}

/// What building the `references` map counted, for its summary.
#[derive(Default)]
struct Tally {
    resolved: usize,
    /// Failed references left out of the map.
    omitted: usize,
    cached: usize,
    failed_ids: Vec<EntityId>,
}

/// The `references` map of `payload` and its summary: the references chosen, resolved
/// and written as `metadata` says.
async fn collect(
    resolver: &Arc<Resolver>,
    world: &World,
    opts: &ReferenceOptions,
    metadata: Metadata,
    payload: &Map<String, Value>,
) -> (Map<String, Value>, Option<Value>) {
    resolver.cache().observe(resolve::WorldVersion::of(world));
    let mut selection = Selection::new(opts);
    let outcomes = resolve_levels(resolver, world, &mut selection, payload).await;

    let mut references = Map::new();
    let mut tally = Tally::default();
    for (chosen, outcome) in selection.chosen.iter().zip(outcomes) {
        if let Some(entry) = reference_entry(chosen, outcome, opts, metadata, &mut tally) {
            references.insert(chosen.0.id.to_string(), Value::Object(entry));
        }
    }

    let summary = if metadata == Metadata::Full {
        Some(full_summary(&selection, references.len(), &tally))
    } else {
        lean_summary(&selection, references.len(), &tally)
    };
    (references, summary)
}

/// Chooses the references `payload` mentions into `selection`, level by level, and
/// resolves them: their outcomes, in the order of `selection.chosen`. At depth 2 what
/// the first level's entities (and those walked through) mention is chosen too.
async fn resolve_levels(
    resolver: &Arc<Resolver>,
    world: &World,
    selection: &mut Selection<'_>,
    payload: &Map<String, Value>,
) -> Vec<Outcome> {
    let mut found = Extraction::default();
    found.walk_object(payload);
    selection.consider(&found.candidates, &found.present, 1);
    let level_one: Vec<EntityId> = selection.chosen.iter().map(|(c, _)| c.id).collect();
    let mut fetch = level_one.clone();
    fetch.extend(&selection.through);
    let mut outcomes = resolve::resolve_all(resolver, world, &fetch).await;
    let traversed = outcomes.split_off(level_one.len());

    if selection.opts.depth >= 2 {
        let before = found.candidates.len();
        let walked = level_one.iter().zip(&outcomes);
        for (id, outcome) in walked.chain(selection.through.iter().zip(&traversed)) {
            if let Outcome::Resolved { data, .. } = outcome {
                found.walk_entity(*id, data);
            }
        }
        for id in &level_one {
            found.present.insert(*id);
        }
        let start = selection.chosen.len();
        selection.consider(&found.candidates[before..], &found.present, 2);
        let level_two: Vec<EntityId> = selection.chosen[start..]
            .iter()
            .map(|(c, _)| c.id)
            .collect();
        outcomes.extend(resolve::resolve_all(resolver, world, &level_two).await);
    }
    outcomes
}

/// The map entry of one chosen reference (found at `depth`), counted in `tally`; `None`
/// for a failed one that is left out of the map. A failure is logged either way.
fn reference_entry(
    (candidate, depth): &(Candidate, u8),
    outcome: Outcome,
    opts: &ReferenceOptions,
    metadata: Metadata,
    tally: &mut Tally,
) -> Option<Map<String, Value>> {
    let id = candidate.id;
    let mut entry = Map::new();
    entry.insert("reference_type".into(), json!(id.kind.name()));
    let failure = match &outcome {
        Outcome::Resolved { .. } => {
            tally.resolved += 1;
            None
        }
        Outcome::Failed { code, message } => {
            tally.failed_ids.push(id);
            log_failure(candidate, code, message);
            if opts.on_error == OnError::Omit || metadata == Metadata::None {
                tally.omitted += 1;
                return None;
            }
            Some((code.as_str(), message))
        }
    };
    if metadata == Metadata::Full || failure.is_some() {
        add_provenance(&mut entry, candidate, *depth, failure, metadata);
    }
    if let Outcome::Resolved { data, cached: hit } = outcome {
        tally.cached += usize::from(hit);
        merge_entity(&mut entry, &data);
    }
    Some(entry)
}

/// Logs a reference that could not be read, with where it was mentioned.
fn log_failure(candidate: &Candidate, code: &ErrorCode, message: &str) {
    let id = candidate.id;
    crate::context::log::log(
        crate::context::log::Level::Warning,
        "structs.references",
        json!({"message": format!("reference {id} (from {}) could not be read: {message}", candidate.from),
            "id": id.to_string(), "referenced_from": candidate.from, "error_code": code.as_str()}),
    );
}

/// Adds an entry's bookkeeping: its id, its status (and, for a failed one, its error
/// and code), where it was mentioned and, in `full`, its depth.
fn add_provenance(
    entry: &mut Map<String, Value>,
    candidate: &Candidate,
    depth: u8,
    failure: Option<(&str, &String)>,
    metadata: Metadata,
) {
    entry.insert("id".into(), json!(candidate.id.to_string()));
    match failure {
        Some((code, message)) => {
            entry.insert("status".into(), json!("failed"));
            entry.insert("error".into(), json!(message));
            entry.insert("error_code".into(), json!(code));
        }
        None => {
            entry.insert("status".into(), json!("success"));
        }
    }
    entry.insert("referenced_from".into(), json!(candidate.from));
    match candidate.referenced_in {
        Some(by) => entry.insert("referenced_in".into(), json!(by.to_string())),
        None if metadata == Metadata::Full => entry.insert("referenced_in".into(), Value::Null),
        None => None,
    };
    if metadata == Metadata::Full {
        entry.insert("depth".into(), json!(depth));
    }
}

/// The summary's status: complete unless a limit left something out.
fn status(left_out: &[(EntityId, Limit)]) -> &'static str {
    if left_out.is_empty() {
        "complete"
    } else {
        "partial"
    }
}

/// How many references `limit` left out.
fn left_out_by(left_out: &[(EntityId, Limit)], limit: Limit) -> usize {
    left_out.iter().filter(|(_, l)| *l == limit).count()
}

/// The lean summary (`failures`, `none`): only when it says something the map does
/// not, and then only what is not zero.
fn lean_summary(selection: &Selection<'_>, included: usize, tally: &Tally) -> Option<Value> {
    let left_out = selection.left_out();
    if left_out.is_empty() && tally.failed_ids.is_empty() {
        return None;
    }
    let mut summary = Map::new();
    summary.insert("status".into(), json!(status(&left_out)));
    summary.insert("included".into(), json!(included));
    if !tally.failed_ids.is_empty() {
        summary.insert("failed".into(), json!(tally.failed_ids.len()));
        if tally.omitted > 0 {
            summary.insert("failed_omitted".into(), json!(tally.omitted));
        }
        summary.insert(
            "failed_ids".into(),
            json!(shown_ids(tally.failed_ids.iter().copied())),
        );
    }
    if !left_out.is_empty() {
        summary.insert("left_out".into(), json!(left_out.len()));
        let mut limits = Map::new();
        for (name, limit) in [
            ("max_references", Limit::Total),
            ("max_references_per_entity", Limit::PerEntity),
        ] {
            if left_out_by(&left_out, limit) > 0 {
                limits.insert(name.into(), json!(left_out_by(&left_out, limit)));
            }
        }
        summary.insert("left_out_by".into(), Value::Object(limits));
        summary.insert(
            "left_out_ids".into(),
            json!(shown_ids(left_out.iter().map(|(id, _)| *id))),
        );
    }
    Some(Value::Object(summary))
}

/// The `full` summary: every count, always.
fn full_summary(selection: &Selection<'_>, included: usize, tally: &Tally) -> Value {
    let left_out = selection.left_out();
    let opts = selection.opts;
    json!({
        "status": status(&left_out),
        "mode": opts.mode.as_str(),
        "depth": opts.depth,
        "included": included,
        "resolved": tally.resolved,
        "failed": tally.failed_ids.len(),
        "failed_omitted": tally.omitted,
        "from_cache": tally.cached,
        "traversed": selection.through.len(),
        "left_out": left_out.len(),
        "left_out_by": {
            "max_references": left_out_by(&left_out, Limit::Total),
            "max_references_per_entity": left_out_by(&left_out, Limit::PerEntity),
        },
        "left_out_ids": shown_ids(left_out.iter().map(|(id, _)| *id)),
    })
}

/// The first ids of a list the summary names, as text.
fn shown_ids(ids: impl Iterator<Item = EntityId>) -> Vec<String> {
    ids.take(LEFT_OUT_IDS_SHOWN)
        .map(|id| id.to_string())
        .collect()
}

/// Adds an entity's data (its chain JSON) after the reference's own fields. A field the
/// entry already has (a flat entity's `id`) keeps the entry's value.
fn merge_entity(entry: &mut Map<String, Value>, data: &Arc<Value>) {
    match data.as_ref() {
        Value::Object(fields) => {
            for (k, v) in fields {
                if !entry.contains_key(k) {
                    entry.insert(k.clone(), v.clone());
                }
            }
        }
        other => {
            entry.insert("data".into(), other.clone());
        }
    }
}
