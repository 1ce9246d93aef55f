//! JSON Schemas (Draft 7) of every entity kind in the chain's REST shape, embedded from
//! `data/schemas/`, and the tool that checks JSON against them:
//! `structs_validate_schema`.
//!
//! The schemas refer to shared definitions in `structs://schemas/formats.json`; those
//! references are resolved from the embedded text, never over the network.

use std::collections::HashMap;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use serde::Serialize;
use serde_json::{Value, json};

use super::{Env, Hints, Registry, ToolSpec, output};
use super::{id_arg, id_schema, opt_str};
use crate::entity::EntityKind;
use crate::error::{ErrorCode, ToolError};
use crate::handles::Shaping;
use crate::references::Support;

/// The URI of the shared definitions the entity schemas refer to.
pub const FORMATS_URI: &str = "structs://schemas/formats.json";

/// The MIME type schemas are served with.
pub const MIME_TYPE: &str = "application/schema+json";

const FORMATS: &str = include_str!("../../data/schemas/formats.json");

/// Each kind's schema: its URI (its `$id`) and text, in code order (the order of
/// [`EntityKind::ALL`]).
const ENTITIES: [(EntityKind, &str, &str); 12] = [
    (
        EntityKind::Guild,
        "structs://schemas/entities/guild.json",
        include_str!("../../data/schemas/entities/guild.json"),
    ),
    (
        EntityKind::Player,
        "structs://schemas/entities/player.json",
        include_str!("../../data/schemas/entities/player.json"),
    ),
    (
        EntityKind::Planet,
        "structs://schemas/entities/planet.json",
        include_str!("../../data/schemas/entities/planet.json"),
    ),
    (
        EntityKind::Reactor,
        "structs://schemas/entities/reactor.json",
        include_str!("../../data/schemas/entities/reactor.json"),
    ),
    (
        EntityKind::Substation,
        "structs://schemas/entities/substation.json",
        include_str!("../../data/schemas/entities/substation.json"),
    ),
    (
        EntityKind::Struct,
        "structs://schemas/entities/struct.json",
        include_str!("../../data/schemas/entities/struct.json"),
    ),
    (
        EntityKind::Allocation,
        "structs://schemas/entities/allocation.json",
        include_str!("../../data/schemas/entities/allocation.json"),
    ),
    (
        EntityKind::Infusion,
        "structs://schemas/entities/infusion.json",
        include_str!("../../data/schemas/entities/infusion.json"),
    ),
    (
        EntityKind::Address,
        "structs://schemas/entities/address.json",
        include_str!("../../data/schemas/entities/address.json"),
    ),
    (
        EntityKind::Fleet,
        "structs://schemas/entities/fleet.json",
        include_str!("../../data/schemas/entities/fleet.json"),
    ),
    (
        EntityKind::Provider,
        "structs://schemas/entities/provider.json",
        include_str!("../../data/schemas/entities/provider.json"),
    ),
    (
        EntityKind::Agreement,
        "structs://schemas/entities/agreement.json",
        include_str!("../../data/schemas/entities/agreement.json"),
    ),
];

/// One problem found by a schema, in the Draft 7 output style.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaError {
    /// Where in the checked JSON, as a JSON Pointer (`/Player/planetId`; `""` is the root).
    pub instance_path: String,
    /// Where in the schema, as a JSON Pointer through any `$ref` followed
    /// (`/properties/Player/properties/planetId/$ref/pattern`).
    pub schema_path: String,
    /// The keyword that failed (`pattern`, `required`, `type`, `additionalProperties`, ...).
    pub keyword: String,
    pub message: String,
    /// The failing keyword's absolute location, in the document that holds it
    /// (`structs://schemas/formats.json#/definitions/structTypeId/pattern`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absolute_keyword_location: Option<String>,
}

/// The embedded schemas, compiled once.
pub struct Schemas {
    validators: HashMap<EntityKind, jsonschema::Validator>,
}

/// Serves the embedded documents to the validator's reference resolution and refuses
/// every other URI, so compiling a schema never reaches the network or the disk.
struct Embedded;

impl jsonschema::Retrieve for Embedded {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let text = Schemas::text(uri.as_str())
            .ok_or_else(|| format!("{} is not an embedded schema", uri.as_str()))?;
        Ok(serde_json::from_str(text)?)
    }
}

/// The URI of `kind`'s schema, e.g. `structs://schemas/entities/player.json`.
pub fn entity_uri(kind: EntityKind) -> &'static str {
    ENTITIES[usize::from(kind.code())].1
}

impl Schemas {
    /// The registry, compiled on first use.
    pub fn global() -> &'static Schemas {
        static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
        SCHEMAS.get_or_init(Schemas::compile)
    }

    /// Finds an embedded text by URI without compiling anything.
    fn text(uri: &str) -> Option<&'static str> {
        if uri == FORMATS_URI {
            return Some(FORMATS);
        }
        ENTITIES
            .iter()
            .find(|(_, u, _)| *u == uri)
            .map(|(_, _, text)| *text)
    }

    fn compile() -> Schemas {
        let mut validators = HashMap::new();
        for (kind, uri, text) in ENTITIES {
            let schema: Value = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("the embedded {kind} schema is not JSON: {e}"));
            assert_eq!(schema["$id"], uri, "the {kind} schema's $id");
            let validator = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft7)
                .with_retriever(Embedded)
                .build(&schema)
                .unwrap_or_else(|e| panic!("the embedded {kind} schema does not compile: {e}"));
            validators.insert(kind, validator);
        }
        Schemas { validators }
    }

    /// Every schema's URI: the entity schemas in kind order, then the shared formats.
    pub fn uris(&self) -> Vec<&'static str> {
        let mut uris = self.entity_uris();
        uris.push(FORMATS_URI);
        uris
    }

    /// The entity schemas' URIs, in kind order: the ones JSON can be validated against.
    pub fn entity_uris(&self) -> Vec<&'static str> {
        ENTITIES.iter().map(|(_, uri, _)| *uri).collect()
    }

    /// A schema's raw text by exact URI.
    pub fn get(&self, uri: &str) -> Option<&'static str> {
        Schemas::text(uri)
    }

    /// The kind whose entity schema `uri_or_kind` names: its URI, or the bare kind name
    /// (`player`, case-insensitive, plural allowed). `None` for anything else, including
    /// the shared formats, which describe no entity, and kind codes.
    pub fn kind_of(&self, uri_or_kind: &str) -> Option<EntityKind> {
        let t = uri_or_kind.trim();
        if let Some((kind, _, _)) = ENTITIES.iter().find(|(_, uri, _)| *uri == t) {
            return Some(*kind);
        }
        if t.is_empty() || t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        EntityKind::parse_name_or_code(t)
    }

    /// Checks `data` against `kind`'s schema; empty when it conforms.
    pub fn validate(&self, kind: EntityKind, data: &Value) -> Vec<SchemaError> {
        let validator = &self.validators[&kind];
        validator
            .iter_errors(data)
            .map(|e| SchemaError {
                instance_path: e.instance_path().as_str().to_string(),
                schema_path: e.evaluation_path().as_str().to_string(),
                keyword: e.kind().keyword().to_string(),
                message: match e.kind() {
                    // The crate's message names only the first two choices.
                    ValidationErrorKind::Enum { options } => {
                        format!("{} is not one of {options}", e.instance())
                    }
                    _ => e.to_string(),
                },
                absolute_keyword_location: e
                    .absolute_keyword_location()
                    .map(|u| u.as_str().to_string()),
            })
            .collect()
    }
}

pub fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_validate_schema",
            description: "Check JSON against the schema of an entity kind in the chain's REST \
                shape (e.g. {\"Player\": {...}, \"gridAttributes\": {...}}): required fields, \
                integers as digit strings, ids of the right kind, known enums, no misspelt \
                fields where a record is closed. Give `data` with `schema_uri` \
                (structs://schemas/entities/{kind}.json, or just the kind name), or \
                `entity_id` to fetch an entity and check it against its kind's schema. \
                Returns {valid, errors: [{instance_path, schema_path, keyword, message}], \
                schema_uri}. The schemas are readable as MCP resources.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "data": {
                        "description": "The JSON to check (any JSON value), e.g. an entity as a query tool returned it."
                    },
                    "schema_uri": {
                        "type": "string", "maxLength": 200,
                        "description": "The schema: structs://schemas/entities/{kind}.json or a kind name (player, struct, ...). Defaults to the entity's kind with entity_id."
                    },
                    "entity_id": id_schema("Instead of data: an entity to fetch and check, e.g. \"1-1\".")
                },
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Check JSON against an entity schema",
            hints: Hints::READ,
            output_schema: output::game::validate_schema(),
        },
        validate_schema,
    );
}

fn unknown_schema(given: &str, schemas: &Schemas) -> ToolError {
    let available = schemas.entity_uris();
    let mut e = ToolError::field(
        ErrorCode::ResourceNotFound,
        "schema_uri",
        format!(
            "no entity schema {given:?}; use one of {} or a kind name",
            available.join(", ")
        ),
    )
    .with_message(format!(
        "no entity schema {given:?}; the schemas are {}",
        available.join(", ")
    ))
    .with_extra(
        "available",
        Value::Array(
            available
                .iter()
                .map(|u| Value::String((*u).to_string()))
                .collect(),
        ),
    );
    if given == FORMATS_URI {
        e.reason = Some(format!(
            "{FORMATS_URI} holds shared definitions, not an entity; use one of {}",
            available.join(", ")
        ));
    }
    e
}

async fn validate_schema(env: Env, args: Value) -> Result<Value, ToolError> {
    let schemas = Schemas::global();
    let given_uri = opt_str(&args, "schema_uri");
    let requested = given_uri
        .map(|u| schemas.kind_of(u).ok_or_else(|| unknown_schema(u, schemas)))
        .transpose()?;
    let data = args.get("data");
    let (kind, value, entity_id) = match (data, args.get("entity_id")) {
        (Some(_), Some(_)) => {
            return Err(ToolError::field(
                ErrorCode::ValidationInvalidValue,
                "entity_id",
                "give data or entity_id, not both",
            ));
        }
        (None, None) => {
            return Err(ToolError::field(
                ErrorCode::ValidationMissingField,
                "data",
                "is required: the JSON to check (with schema_uri), or entity_id instead",
            ));
        }
        (Some(data), None) => {
            let kind = requested.ok_or_else(|| {
                ToolError::field(
                    ErrorCode::ValidationMissingField,
                    "schema_uri",
                    "is required with data: structs://schemas/entities/{kind}.json or a kind name",
                )
            })?;
            (kind, data.clone(), None)
        }
        (None, Some(_)) => {
            let id = id_arg(&args, "entity_id", None)?;
            let entity = super::fetch(&env, id, "entity_id").await?;
            (requested.unwrap_or(id.kind), entity, Some(id))
        }
    };
    let errors = schemas.validate(kind, &value);
    let mut out = json!({
        "valid": errors.is_empty(),
        "errors": errors,
        "schema_uri": entity_uri(kind),
    });
    if let Some(id) = entity_id {
        out["entity_id"] = Value::String(id.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_draft_7_with_its_id_and_compiles() {
        let s = Schemas::global();
        assert_eq!(s.uris().len(), 13);
        for uri in s.uris() {
            let doc: Value = serde_json::from_str(s.get(uri).unwrap()).unwrap();
            assert_eq!(doc["$schema"], "http://json-schema.org/draft-07/schema#");
            assert_eq!(doc["$id"], uri);
        }
        for kind in EntityKind::ALL {
            assert_eq!(
                entity_uri(kind),
                format!("structs://schemas/entities/{}.json", kind.name())
            );
            assert_eq!(s.kind_of(entity_uri(kind)), Some(kind));
            assert_eq!(s.kind_of(kind.name()), Some(kind));
        }
        assert_eq!(s.kind_of("PLAYERS"), Some(EntityKind::Player));
        assert_eq!(s.kind_of(FORMATS_URI), None);
        assert_eq!(s.kind_of("1"), None, "codes are not schema names");
        assert_eq!(s.kind_of("structs://schemas/entities/ship.json"), None);
        assert_eq!(s.get("structs://schemas/entities/ship.json"), None);
    }

    /// The served schemas describe the records of `entity::records`, field for field:
    /// the chain's records are defined there once, and the schemas say the same.
    #[test]
    fn every_schema_names_exactly_the_chains_fields() {
        use crate::entity::records::{self, Ty};
        let props = |schema: &Value| -> Vec<String> {
            schema["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        };
        let names = |m: &records::Message| -> Vec<String> {
            m.fields.iter().map(|f| f.name.to_string()).collect()
        };
        let formats: Value = serde_json::from_str(FORMATS).unwrap();
        let resolve = |v: &Value| -> Value {
            match v.get("$ref").and_then(Value::as_str) {
                Some(r) if r.contains("formats.json#/definitions/") => {
                    let name = r.rsplit('/').next().unwrap();
                    formats["definitions"][name].clone()
                }
                _ => v.clone(),
            }
        };
        for (kind, _, text) in ENTITIES {
            let schema: Value = serde_json::from_str(text).unwrap();
            let answer = records::single_response(kind);
            let record = records::record_of(kind);
            match kind.rest_key() {
                None => assert_eq!(props(&schema), names(record), "{kind}"),
                Some(key) => {
                    assert_eq!(props(&schema["properties"][key]), names(record), "{kind}");
                    // The blocks beside the record, and what each holds.
                    let blocks: Vec<String> =
                        answer.fields.iter().map(|f| f.name.to_string()).collect();
                    assert_eq!(props(&schema), blocks, "{kind}'s answer");
                    for field in answer.fields.iter().filter(|f| f.name != key) {
                        if let Ty::Msg(m) = field.ty {
                            let block = resolve(&schema["properties"][field.name]);
                            assert_eq!(props(&block), names(m), "{kind}.{}", field.name);
                            assert_eq!(
                                block["required"].as_array().map_or(0, Vec::len),
                                m.fields.len(),
                                "{kind}.{}: every field required",
                                field.name
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn references_resolve_offline_and_paths_are_pointers() {
        let s = Schemas::global();
        let errors = s.validate(
            EntityKind::Address,
            &json!({"address": "structs1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq",
                    "playerId": "2-1", "permissions": 7}),
        );
        let paths: Vec<&str> = errors.iter().map(|e| e.instance_path.as_str()).collect();
        assert_eq!(paths, ["/playerId", "/permissions"], "{errors:?}");
        assert_eq!(errors[0].keyword, "pattern");
        assert_eq!(errors[1].keyword, "type");
        assert!(errors[0].schema_path.ends_with("/pattern"), "{errors:?}");
    }
}
