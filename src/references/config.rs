//! What a call asks for and what the server allows: the reference options of a tool's
//! arguments, the server-wide configuration they override, and the JSON Schema that
//! every reference-capable tool gains.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};

use crate::entity::EntityKind;
use crate::error::{ErrorCode, ToolError};
use crate::json::whole_number as whole;

/// How a tool takes part in references.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// The tool never carries references (validation, clock control, the endpoint map).
    None,
    /// A tool about one entity or one result: `include_references: true` means all.
    Single,
    /// A list tool: `include_references: true` means primary, and the per-entity limit
    /// applies to each item by default.
    List,
}

/// The value of `include_references`, in arguments and in the configuration:
/// `false`, `true`, `"all"` or `"primary"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Include {
    Off,
    /// `true`: the tool's usual mode (all for single results, primary for lists).
    On,
    All,
    Primary,
}

impl Include {
    pub fn from_json(v: &Value) -> Option<Include> {
        match v {
            Value::Bool(false) => Some(Include::Off),
            Value::Bool(true) => Some(Include::On),
            Value::String(s) => match s.as_str() {
                "all" => Some(Include::All),
                "primary" => Some(Include::Primary),
                _ => None,
            },
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Include {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Include, D::Error> {
        let v = Value::deserialize(d)?;
        Include::from_json(&v).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "include_references must be false, true, \"all\" or \"primary\", not {v}"
            ))
        })
    }
}

/// Which references a call collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every entity id the payload mentions.
    All,
    /// Only direct relationships held in plain fields (owner, guild, planet, fleet,
    /// reactor, substation, ...), not the contents of slot arrays; at depth 2, what
    /// those entities hold (the structs in their slots, a fleet's command ship), not
    /// their own relationships.
    Primary,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::All => "all",
            Mode::Primary => "primary",
        }
    }
}

/// What happens to a reference that could not be resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// It appears with `status: "failed"` and its error (the default).
    Indicate,
    /// It is left out of `references` (and counted in the summary).
    Omit,
}

/// How much bookkeeping a `references` map carries beside the records
/// (`reference_metadata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metadata {
    /// An entry is its `reference_type` and the record; a failed reference is left out
    /// of the map. `references_summary` appears only when something failed or was left
    /// out, and names those ids.
    None,
    /// An entry is its `reference_type` and the record; a failed one also says
    /// `status`, `error`, `error_code`, `referenced_from` and `referenced_in`.
    /// `references_summary` appears only when something failed or was left out.
    Failures,
    /// Every entry says `status`, `referenced_from`, `referenced_in` and `depth`, and
    /// `references_summary` always appears with every count.
    Full,
}

impl Metadata {
    pub fn parse(s: &str) -> Option<Metadata> {
        match s {
            "none" => Some(Metadata::None),
            "failures" => Some(Metadata::Failures),
            "full" => Some(Metadata::Full),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Metadata::None => "none",
            Metadata::Failures => "failures",
            Metadata::Full => "full",
        }
    }
}

/// Per-tool settings in the configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolReferenceConfig {
    /// False turns references off for this tool whatever a call asks.
    pub enabled: Option<bool>,
    /// What a call of this tool gets when it does not say.
    pub include_references: Option<Include>,
}

/// The server-wide reference settings: the `[references]` table of the configuration
/// file, adjusted by command-line flags. A call's arguments override the defaults, within
/// the bounds set here.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReferenceConfig {
    /// False turns references off for every tool (a tool's own `enabled = true` does
    /// not turn them back on).
    pub enabled: bool,
    /// What a call gets when it does not pass `include_references` (default off).
    pub include_references: Include,
    /// Default depth, 1 or 2.
    pub reference_depth: u8,
    /// Default cap on the entries of one response's `references`.
    pub max_references: usize,
    /// The largest `max_references` a call may ask for.
    pub max_references_limit: usize,
    /// Default cap on new references one entity may contribute (always for list items;
    /// for single results only when a call sets it).
    pub max_references_per_entity: usize,
    /// Reference fetches in flight at once, across every call the server is serving
    /// (so a rate-limited node sees at most this many, however many agents ask).
    pub max_parallel_queries: usize,
    /// Time allowed for one reference, retries included, in milliseconds.
    pub reference_timeout_ms: u64,
    /// How long a resolved entity is reused, in seconds (the cache is also emptied
    /// whenever the source's block height moves).
    pub cache_ttl_secs: u64,
    /// Most entities the cache holds.
    pub cache_capacity: usize,
    /// Retries of a fetch that was refused with a rate-limit error.
    pub rate_limit_retries: u32,
    /// First backoff after a rate-limit error, doubled on each retry, in milliseconds.
    pub backoff_ms: u64,
    /// Error indicators (default) or omission for failed references.
    pub on_error: OnError,
    /// Per-tool settings, by tool name.
    pub tools: BTreeMap<String, ToolReferenceConfig>,
}

impl Default for ReferenceConfig {
    fn default() -> ReferenceConfig {
        ReferenceConfig {
            enabled: true,
            include_references: Include::Off,
            reference_depth: 1,
            max_references: 50,
            max_references_limit: 500,
            max_references_per_entity: 5,
            max_parallel_queries: 5,
            reference_timeout_ms: 2000,
            cache_ttl_secs: 30,
            cache_capacity: 10_000,
            rate_limit_retries: 4,
            backoff_ms: 50,
            on_error: OnError::Indicate,
            tools: BTreeMap::new(),
        }
    }
}

/// The hard ceiling on `max_references_limit`, whatever the configuration says.
pub const MAX_REFERENCES_CEILING: usize = 5000;
/// The hard ceiling on `max_references_per_entity`.
pub const MAX_PER_ENTITY_CEILING: usize = 100;

impl ReferenceConfig {
    /// Checks every setting's range; the message names the setting.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_string()) };
        check(
            (1..=2).contains(&self.reference_depth),
            "references.reference_depth must be 1 or 2",
        )?;
        check(
            (1..=MAX_REFERENCES_CEILING).contains(&self.max_references_limit),
            "references.max_references_limit must be 1-5000",
        )?;
        check(
            (1..=self.max_references_limit).contains(&self.max_references),
            "references.max_references must be 1 to max_references_limit",
        )?;
        check(
            (1..=MAX_PER_ENTITY_CEILING).contains(&self.max_references_per_entity),
            "references.max_references_per_entity must be 1-100",
        )?;
        check(
            (1..=64).contains(&self.max_parallel_queries),
            "references.max_parallel_queries must be 1-64",
        )?;
        check(
            (1..=60_000).contains(&self.reference_timeout_ms),
            "references.reference_timeout_ms must be 1-60000",
        )?;
        check(
            self.cache_ttl_secs <= 3600,
            "references.cache_ttl_secs must be 0-3600",
        )?;
        check(
            self.rate_limit_retries <= 10,
            "references.rate_limit_retries must be 0-10",
        )?;
        check(
            self.backoff_ms <= 10_000,
            "references.backoff_ms must be 0-10000",
        )?;
        Ok(())
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.reference_timeout_ms)
    }

    pub fn cache_ttl(&self) -> Duration {
        Duration::from_secs(self.cache_ttl_secs)
    }

    fn tool(&self, name: &str) -> Option<&ToolReferenceConfig> {
        self.tools.get(name)
    }
}

/// The options one call resolves its references with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceOptions {
    pub mode: Mode,
    pub depth: u8,
    /// Only these kinds, when set (a bit per kind code).
    pub types: Option<u16>,
    pub max_references: usize,
    /// Cap on new references per referencing entity, when set.
    pub max_per_entity: Option<usize>,
    pub on_error: OnError,
    /// `reference_metadata` as the call gave it; without it the call's shaping decides
    /// (see [`ReferenceOptions::metadata`]).
    pub metadata: Option<Metadata>,
}

impl ReferenceOptions {
    /// The bookkeeping the map carries: as asked, else lean (`failures`) when the call
    /// asked for a smaller answer (`fields`, or `verbosity` summary or compact), else
    /// `full`, so a call that asks for neither gets what it always got.
    pub fn metadata(&self, lean_shaping: bool) -> Metadata {
        self.metadata.unwrap_or(if lean_shaping {
            Metadata::Failures
        } else {
            Metadata::Full
        })
    }

    pub fn wants(&self, kind: EntityKind) -> bool {
        self.types.is_none_or(|bits| bits & (1 << kind.code()) != 0)
    }
}

/// What a call gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReferencePlan {
    /// No references: the response is exactly the handler's.
    Off,
    /// References were asked for but the server has them turned off for this tool.
    Disabled(String),
    On(ReferenceOptions),
}

/// The argument names the reference options use; they are taken out of a call's
/// arguments before its handler sees them.
pub const ARGUMENTS: [&str; 7] = [
    "include_references",
    "reference_depth",
    "reference_types",
    "max_references",
    "max_references_per_entity",
    "on_reference_error",
    "reference_metadata",
];

/// The JSON Schema properties every reference-capable tool gains.
pub fn schema_properties(support: Support) -> Map<String, Value> {
    let kinds: Vec<&str> = EntityKind::ALL.iter().map(|k| k.name()).collect();
    let include_doc = match support {
        Support::List => {
            "Add a top-level `references` map (entity id -> that entity's full data) for \
             the ids the page mentions. true means \"primary\" here (owner, guild, planet, \
             fleet, reactor, substation; not slot contents; at depth 2, the structs those \
             hold); \"all\" adds every id. Default false."
        }
        _ => {
            "Add a top-level `references` map (entity id -> that entity's full data) for \
             every entity id the result mentions, so no follow-up queries are needed. true \
             or \"all\": every id; \"primary\": only direct relationships, not slot \
             contents (at depth 2, the structs those entities hold). Default false."
        }
    };
    let mut p = Map::new();
    p.insert(
        "include_references".into(),
        json!({"enum": [false, true, "all", "primary"], "description": include_doc}),
    );
    p.insert(
        "reference_depth".into(),
        json!({"type": "integer", "minimum": 1, "maximum": 2, "default": 1,
               "description": "1: the entities the result mentions; 2: also the entities those mention."}),
    );
    p.insert(
        "reference_types".into(),
        json!({"type": "array", "minItems": 1, "maxItems": 12,
               "items": {"type": "string", "maxLength": 32},
               "description": format!("Only references of these kinds ({}).", kinds.join(", "))}),
    );
    p.insert(
        "max_references".into(),
        json!({"type": "integer", "minimum": 1, "maximum": MAX_REFERENCES_CEILING,
               "description": "Most entries in `references` (default 50); the summary says how many were left out."}),
    );
    p.insert(
        "max_references_per_entity".into(),
        json!({"type": "integer", "minimum": 1, "maximum": MAX_PER_ENTITY_CEILING,
               "description": "Most new references one entity may add (default 5 for each item of a list)."}),
    );
    p.insert(
        "on_reference_error".into(),
        json!({"enum": ["indicate", "omit"],
               "description": "\"indicate\" (default): a failed reference appears with status \"failed\" and its error; \"omit\": it is left out."}),
    );
    p.insert(
        "reference_metadata".into(),
        json!({"enum": ["none", "failures", "full"],
               "description": "Bookkeeping beside each referenced record. \"full\": every entry says status, referenced_from, referenced_in and depth, and references_summary always comes. \"failures\": an entry is reference_type plus the record; only a failed one says why and where it was mentioned; the summary comes only when something failed or was left out. \"none\": as failures, but failed references are left out of the map (the summary names them). Default: \"failures\" when fields or verbosity summary/compact is given, else \"full\"."}),
    );
    p
}

/// Works out a call's plan from the server configuration, the tool and the call's
/// arguments (already checked against the schema), and removes the reference options
/// from `args` so the handler sees only its own.
pub fn plan(
    config: &ReferenceConfig,
    tool: &str,
    support: Support,
    args: &mut Value,
) -> Result<ReferencePlan, ToolError> {
    if support == Support::None {
        return Ok(ReferencePlan::Off);
    }
    let taken = take_options(args);
    let tool_config = config.tool(tool);
    let include = match taken.get("include_references") {
        Some(v) => Include::from_json(v).ok_or_else(|| {
            ToolError::field(
                ErrorCode::ValidationInvalidValue,
                "include_references",
                "must be false, true, \"all\" or \"primary\"",
            )
        })?,
        None => tool_config
            .and_then(|t| t.include_references)
            .unwrap_or(config.include_references),
    };
    let mode = match (include, support) {
        (Include::Off, _) => return Ok(ReferencePlan::Off),
        (Include::All, _) | (Include::On, Support::Single) => Mode::All,
        _ => Mode::Primary,
    };
    if !config.enabled {
        return Ok(ReferencePlan::Disabled(
            "references are turned off on this server".into(),
        ));
    }
    if tool_config.and_then(|t| t.enabled) == Some(false) {
        return Ok(ReferencePlan::Disabled(format!(
            "references are turned off for {tool} on this server"
        )));
    }
    options(config, support, mode, &taken).map(ReferencePlan::On)
}

/// Takes the reference options ([`ARGUMENTS`]) out of a call's arguments.
fn take_options(args: &mut Value) -> Map<String, Value> {
    let mut taken = Map::new();
    if let Some(obj) = args.as_object_mut() {
        for name in ARGUMENTS {
            if let Some(v) = obj.remove(name) {
                taken.insert(name.to_string(), v);
            }
        }
    }
    taken
}

/// The options of a call that collects references in `mode`: as its reference options
/// (`taken`) say, else as the configuration's defaults.
fn options(
    config: &ReferenceConfig,
    support: Support,
    mode: Mode,
    taken: &Map<String, Value>,
) -> Result<ReferenceOptions, ToolError> {
    let depth = match taken.get("reference_depth") {
        Some(v) => reference_depth(v)?,
        None => config.reference_depth,
    };
    let types = match taken.get("reference_types") {
        None => None,
        Some(v) => Some(reference_types(v)?),
    };
    let max_references = match taken.get("max_references").and_then(whole) {
        Some(n) if n as usize > config.max_references_limit => {
            return Err(ToolError::field(
                ErrorCode::ValidationOutOfRange,
                "max_references",
                format!(
                    "must be at most {} on this server, got {n}",
                    config.max_references_limit
                ),
            ));
        }
        Some(n) => n as usize,
        None => config.max_references,
    };
    let max_per_entity = match taken.get("max_references_per_entity").and_then(whole) {
        Some(n) => Some(n as usize),
        None if support == Support::List => Some(config.max_references_per_entity),
        None => None,
    };
    let on_error = match taken.get("on_reference_error").and_then(Value::as_str) {
        Some("omit") => OnError::Omit,
        Some(_) => OnError::Indicate,
        None => config.on_error,
    };
    let metadata = taken
        .get("reference_metadata")
        .and_then(Value::as_str)
        .and_then(Metadata::parse);
    Ok(ReferenceOptions {
        mode,
        depth,
        types,
        max_references,
        max_per_entity,
        on_error,
        metadata,
    })
}

/// A call's `reference_depth`: 1 or 2.
fn reference_depth(v: &Value) -> Result<u8, ToolError> {
    match whole(v) {
        Some(d @ 1..=2) => Ok(d as u8),
        _ => Err(ToolError::field(
            ErrorCode::ValidationOutOfRange,
            "reference_depth",
            format!("must be 1 or 2, got {v}"),
        )),
    }
}

/// A call's `reference_types` as a bit per kind code; each item names a kind.
fn reference_types(v: &Value) -> Result<u16, ToolError> {
    let Value::Array(items) = v else {
        return Err(ToolError::field(
            ErrorCode::ValidationWrongType,
            "reference_types",
            format!("expected an array of kind names, got {v}"),
        ));
    };
    let mut bits = 0u16;
    for (i, item) in items.iter().enumerate() {
        let kind = item
            .as_str()
            .and_then(EntityKind::parse_name_or_code)
            .ok_or_else(|| {
                let names: Vec<&str> = EntityKind::ALL.iter().map(|k| k.name()).collect();
                ToolError::field(
                    ErrorCode::ValidationInvalidValue,
                    format!("reference_types[{i}]"),
                    format!(
                        "{item} is not an entity kind; use one of {}",
                        names.join(", ")
                    ),
                )
            })?;
        bits |= 1 << kind.code();
    }
    Ok(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(plan: ReferencePlan) -> ReferenceOptions {
        match plan {
            ReferencePlan::On(o) => o,
            other => panic!("expected references on, got {other:?}"),
        }
    }

    #[test]
    fn true_means_all_for_single_results_and_primary_for_lists() {
        let c = ReferenceConfig::default();
        let mut args = json!({"player_id": "1-1", "include_references": true});
        let o = on(plan(&c, "structs_query_player", Support::Single, &mut args).unwrap());
        assert_eq!(o.mode, Mode::All);
        assert_eq!(o.max_per_entity, None);
        assert_eq!(args, json!({"player_id": "1-1"}), "options are taken out");

        let mut args = json!({"include_references": true});
        let o = on(plan(&c, "structs_list_planets", Support::List, &mut args).unwrap());
        assert_eq!(o.mode, Mode::Primary);
        assert_eq!(o.max_per_entity, Some(5));

        let mut args = json!({"include_references": "all"});
        let o = on(plan(&c, "structs_list_planets", Support::List, &mut args).unwrap());
        assert_eq!(o.mode, Mode::All);
    }

    #[test]
    fn off_by_default_and_false_wins_over_a_configured_default() {
        let mut c = ReferenceConfig::default();
        let mut args = json!({"player_id": "1-1", "reference_depth": 2});
        assert_eq!(
            plan(&c, "structs_query_player", Support::Single, &mut args).unwrap(),
            ReferencePlan::Off
        );
        c.include_references = Include::All;
        let mut args = json!({});
        assert!(matches!(
            plan(&c, "structs_query_player", Support::Single, &mut args).unwrap(),
            ReferencePlan::On(_)
        ));
        let mut args = json!({"include_references": false});
        assert_eq!(
            plan(&c, "structs_query_player", Support::Single, &mut args).unwrap(),
            ReferencePlan::Off
        );
    }

    #[test]
    fn per_tool_configuration_disables_and_sets_defaults() {
        let c: ReferenceConfig = toml::from_str(
            r#"
            [tools.structs_list_structs]
            enabled = false
            [tools.structs_query_planet]
            include_references = "primary"
            "#,
        )
        .unwrap();
        let mut args = json!({"include_references": true});
        assert!(matches!(
            plan(&c, "structs_list_structs", Support::List, &mut args).unwrap(),
            ReferencePlan::Disabled(m) if m.contains("structs_list_structs")
        ));
        let mut args = json!({"planet_id": "2-1"});
        let o = on(plan(&c, "structs_query_planet", Support::Single, &mut args).unwrap());
        assert_eq!(o.mode, Mode::Primary);
        let mut args = json!({"player_id": "1-1"});
        assert_eq!(
            plan(&c, "structs_query_player", Support::Single, &mut args).unwrap(),
            ReferencePlan::Off
        );
    }

    #[test]
    fn bad_options_are_validation_errors_naming_the_argument() {
        let c = ReferenceConfig {
            max_references_limit: 100,
            ..ReferenceConfig::default()
        };
        let cases = [
            (
                json!({"include_references": true, "reference_depth": 3}),
                "reference_depth",
                ErrorCode::ValidationOutOfRange,
            ),
            (
                json!({"include_references": true, "reference_types": ["planet", "moon"]}),
                "reference_types[1]",
                ErrorCode::ValidationInvalidValue,
            ),
            (
                json!({"include_references": true, "max_references": 101}),
                "max_references",
                ErrorCode::ValidationOutOfRange,
            ),
            (
                json!({"include_references": "some"}),
                "include_references",
                ErrorCode::ValidationInvalidValue,
            ),
        ];
        for (mut args, field, code) in cases {
            let e = plan(&c, "structs_query_player", Support::Single, &mut args).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{args}");
            assert_eq!(e.code, code, "{args}");
        }
    }

    #[test]
    fn whole_number_floats_count_as_integers() {
        let c = ReferenceConfig::default();
        let mut args = json!({"include_references": true, "reference_depth": 2.0,
                              "max_references": 10.0, "max_references_per_entity": 2.0});
        let o = on(plan(&c, "t", Support::Single, &mut args).unwrap());
        assert_eq!(
            (o.depth, o.max_references, o.max_per_entity),
            (2, 10, Some(2))
        );
    }

    #[test]
    fn type_filter_accepts_names_plurals_and_codes() {
        let c = ReferenceConfig::default();
        let mut args =
            json!({"include_references": true, "reference_types": ["Guild", "planets", "9"]});
        let o = on(plan(&c, "t", Support::Single, &mut args).unwrap());
        assert!(o.wants(EntityKind::Guild));
        assert!(o.wants(EntityKind::Planet));
        assert!(o.wants(EntityKind::Fleet));
        assert!(!o.wants(EntityKind::Player));
    }

    #[test]
    fn configuration_ranges_are_checked() {
        assert!(ReferenceConfig::default().validate().is_ok());
        let c = ReferenceConfig {
            reference_depth: 3,
            ..ReferenceConfig::default()
        };
        assert!(c.validate().unwrap_err().contains("reference_depth"));
        let bad: Result<ReferenceConfig, _> = toml::from_str("max_refs = 3");
        assert!(bad.is_err(), "unknown settings are refused");
    }
}
