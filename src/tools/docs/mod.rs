//! Reference-doc tools (`structs_docs_*`): search, read, follow links, plan what to
//! load, and author links (written through to the files). All of them read the core's
//! [`Docs`](crate::docs::Docs) snapshot; building it or writing files runs off the
//! async workers.

mod links;
mod read;

use links::*;
use read::*;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Env, Hints, Registry, ToolSpec, output};
use super::{chain_u64, opt_str};
use crate::docs::graph::{Direction, Link, Step};
use crate::docs::links::{Origin, Relation, Source, SourceKind, normalize_doc_id};
use crate::docs::suggest::{self, Related};
use crate::docs::{DOC_URI_PREFIX, Doc, Docs, Snapshot, doc_not_found};
use crate::entity::struct_types::struct_types;
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
use crate::handles::Shaping;
use crate::json::whole_number;
use crate::references::Support;
use crate::references::extract::Extraction;

/// Most links of one direction listed by `structs_docs_get`.
const LINKS_SHOWN: usize = 50;
/// Most warnings one answer lists.
const WARNINGS_SHOWN: usize = 100;
/// Content returned by one `structs_docs_get`, at most (bytes, whatever `max_chars`).
const CONTENT_BYTES: usize = 18_000;

fn relation_schema() -> Value {
    json!({"type": "string", "maxLength": 40,
           "description": "informs, related, history_of, depends_on or see_also (synonyms such as \
                           dependsOn, requires, see-also are accepted)."})
}

fn source_schema() -> (Value, Value) {
    (
        json!({"type": "string", "maxLength": 40,
               "description": "What the link starts from: doc, entity, entity_kind or struct_type."}),
        json!({"type": ["string", "integer"], "maxLength": 400,
               "description": "A doc id, an entity id (\"1-11\"), an entity kind (\"planet\") or a \
                               struct type number or name (14, \"Ore Extractor\")."}),
    )
}

fn doc_id_schema(description: &str) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": crate::docs::links::MAX_DOC_ID,
           "description": description})
}

/// A docs tool's handler, given the docs it reads.
fn with_docs<F, Fut>(docs: &Arc<Docs>, f: F) -> impl Fn(Env, Value) -> Fut + Send + Sync + 'static
where
    F: Fn(Arc<Docs>, Env, Value) -> Fut + Send + Sync + 'static,
{
    let docs = Arc::clone(docs);
    move |env, args| f(Arc::clone(&docs), env, args)
}

/// Registers the docs tools, each reading `docs`.
///
/// A declarative table: one registration a tool.
pub fn register(registry: &mut Registry, docs: &Arc<Docs>) {
    let (kind_schema, id_schema) = source_schema();
    registry.add(
        ToolSpec {
            name: "structs_docs_search",
            description: "Search the reference docs (game mechanics, entities, the tools, \
                guides) by words or a question. Ranked by BM25 with title and tags weighted \
                highest. Returns light hits (doc_id, title, summary, type, tags, score, a \
                snippet with the matched words in **bold**), never the full content: read one \
                with structs_docs_get.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": 500,
                              "description": "Words or a question, e.g. \"how is ore refined\"."},
                    "type": {"type": "string", "maxLength": 40,
                             "description": "Only docs of this type (mechanics, guide, api, schema, entity, ...; structs_docs_get_index lists them)."},
                    "tag": {"type": "string", "maxLength": 60, "description": "Only docs with this tag."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Search the docs",
            hints: Hints::LOCAL,
            output_schema: output::agent::docs_search(),
        },
        with_docs(docs, search),
    );
    registry.add(
        ToolSpec {
            name: "structs_docs_get",
            description: "Read one reference doc: its metadata, Markdown content (in pieces of \
                at most max_chars; next_offset reads on), its links out and in, and the \
                entities, kinds and struct types it informs. include_related adds one hop of \
                related docs (metadata only, each once, never the doc itself).",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "doc_id": doc_id_schema("The doc's id: its path under the docs root without .md, e.g. \"knowledge/mechanics/mining\" (or its structs://docs/ URI)."),
                    "include_related": {"type": "boolean", "default": false},
                    "offset": {"type": "integer", "minimum": 0, "maximum": 100_000_000, "default": 0,
                               "description": "Character offset of the content to start at (the previous answer's next_offset)."},
                    "max_chars": {"type": "integer", "minimum": 500, "maximum": 16_000, "default": 12_000,
                                  "description": "Most characters of content in this answer."}
                },
                "required": ["doc_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Read a doc",
            hints: Hints::LOCAL,
            output_schema: output::agent::docs_get(),
        },
        with_docs(docs, get),
    );
    registry.add(
        ToolSpec {
            name: "structs_docs_get_related",
            description: "Docs related to one doc through explicit and inferred links, with \
                the relation, direction (out: it links to them; in: they link to it) and \
                hops. Bounded: depth 1 by default (at most 3), each doc once, cycles safe.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "doc_id": doc_id_schema("The doc's id."),
                    "resource_uri": {"type": "string", "maxLength": 420,
                                     "description": "Or the doc's resource URI, structs://docs/{doc_id}."},
                    "depth": {"type": "integer", "minimum": 1, "maximum": 3, "default": 1},
                    "direction": {"type": "string", "enum": ["out", "in", "both"], "default": "both"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 25}
                },
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Docs related to a doc",
            hints: Hints::LOCAL,
            output_schema: output::agent::docs_related(),
        },
        with_docs(docs, get_related),
    );
    registry.add(
        ToolSpec {
            name: "structs_docs_get_index",
            description: "The index of the reference docs by category (doc type). Without a \
                category: every category with its count and doc ids; with one: its docs with \
                title, summary and tags.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "category": {"type": "string", "maxLength": 40,
                                 "description": "A doc type: mechanics, guide, api, schema, entity, ..."}
                },
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Index of the docs",
            hints: Hints::LOCAL,
            output_schema: output::agent::docs_index(),
        },
        with_docs(docs, get_index),
    );
    registry.add(
        ToolSpec {
            name: "structs_docs_loading_strategy",
            description: "Which docs to load for a task, in what order, and about how many \
                tokens they cost: the best search matches for the task, the docs they depend \
                on (read first), and the docs linked to struct types or entities the task \
                names; what does not fit max_tokens is listed as deferred.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "task": {"type": "string", "minLength": 1, "maxLength": 1000,
                             "description": "What the agent is about to do, e.g. \"build an Ore Extractor and start mining\"."},
                    "max_tokens": {"type": "integer", "minimum": 500, "maximum": 200_000, "default": 8000,
                                   "description": "Context budget for the docs (about 4 bytes a token)."},
                    "max_docs": {"type": "integer", "minimum": 1, "maximum": 20, "default": 6}
                },
                "required": ["task"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Docs to load for a task",
            hints: Hints::LOCAL,
            output_schema: output::agent::docs_loading_strategy(),
        },
        with_docs(docs, loading_strategy),
    );
    registry.add(
        ToolSpec {
            name: "structs_docs_list_references",
            description: "The docs a source links to directly (no traversal): the docs that \
                inform player 1-11, entity kind planet, struct type 14, or that a doc links to. \
                include_kind_links adds, for an entity, the links of its kind and (a struct) \
                its struct type, each marked with `via`.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "source_kind": kind_schema.clone(),
                    "source_id": id_schema.clone(),
                    "include_kind_links": {"type": "boolean", "default": false}
                },
                "required": ["source_kind", "source_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Docs a source links to",
            hints: Hints::READ,
            output_schema: output::agent::docs_list_references(),
        },
        with_docs(docs, list_references),
    );
    registry.add(
        ToolSpec {
            name: "structs_docs_upsert_link",
            description: "Create or update an explicit link from a source (doc, entity, \
                entity_kind, struct_type) to a doc. Written through to the files first (a \
                doc's front matter `links`, legacy spellings merged; a `.meta.yaml` sidecar \
                under _links/ for other sources), so it survives any rebuild of the index. \
                The target must exist. RESOURCE_READ_ONLY on the embedded docs.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "source_kind": kind_schema.clone(),
                    "source_id": id_schema.clone(),
                    "target_doc_id": doc_id_schema("The doc the link points to."),
                    "relation": relation_schema()
                },
                "required": ["source_kind", "source_id", "target_doc_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Write a doc link",
            hints: Hints::CHANGES.closed(),
            output_schema: output::agent::docs_upsert_link(),
        },
        with_docs(docs, upsert_link),
    );
    registry.add(
        ToolSpec {
            name: "structs_docs_suggest_references",
            description: "Suggest docs for an entity or a doc from what its related things \
                already link to: for an entity, the entities it references (directly, through \
                their kind, or a struct's type); for a doc, its linked docs. Each candidate's \
                score is how many related things link to it, with attribution; docs already \
                linked explicitly are left out. mode apply writes the chosen ones \
                (selected_doc_ids, min_score, max_apply) as explicit links, best first.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "source_kind": kind_schema,
                    "source_id": id_schema,
                    "mode": {"type": "string", "enum": ["preview", "apply"], "default": "preview"},
                    "selected_doc_ids": {"type": "array", "maxItems": 50,
                                         "items": {"type": "string", "maxLength": crate::docs::links::MAX_DOC_ID},
                                         "description": "Apply only these candidates."},
                    "max_apply": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                    "min_score": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 1},
                    "relation": relation_schema(),
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,
                              "description": "Most candidates shown."}
                },
                "required": ["source_kind", "source_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Suggest doc links",
            hints: Hints::CHANGES,
            output_schema: output::agent::docs_suggest_references(),
        },
        with_docs(docs, suggest_references),
    );
    registry.add(
        ToolSpec {
            name: "structs_docs_sync",
            description: "Read the docs root again (after files changed outside the tools) \
                and rebuild the index: docs added, removed and changed, links by origin \
                (explicit always wins over inferred for the same pair), and every warning \
                (bad front matter, links to missing docs). Idempotent.",
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Re-read the docs",
            hints: Hints::CHANGES.closed(),
            output_schema: output::agent::docs_sync(),
        },
        with_docs(docs, sync),
    );
}

/// The current snapshot, built off the async workers when it is the first use.
pub(crate) async fn snapshot(docs: &Arc<Docs>) -> Result<Arc<Snapshot>, ToolError> {
    let docs = Arc::clone(docs);
    if let Some(s) = docs.current() {
        return Ok(s);
    }
    tokio::task::spawn_blocking(move || docs.snapshot())
        .await
        .map_err(|e| {
            ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!("building the docs index failed: {e}"),
            )
        })
}

fn whole(args: &Value, field: &str, default: usize) -> usize {
    args.get(field)
        .and_then(whole_number)
        .map_or(default, |n| n as usize)
}

fn bad(field: &str, reason: impl Into<String>) -> ToolError {
    ToolError::field(ErrorCode::ValidationInvalidValue, field, reason)
}

/// A doc id argument, checked (it cannot leave the root) and found.
fn doc_arg<'a>(snap: &'a Snapshot, text: &str, field: &str) -> Result<&'a Doc, ToolError> {
    let id = normalize_doc_id(text)
        .map_err(|e| ToolError::field(ErrorCode::ValidationInvalidFormat, field, e))?;
    snap.doc(&id).ok_or_else(|| doc_not_found(snap, &id, field))
}

fn round(score: f64) -> f64 {
    (score * 1000.0).round() / 1000.0
}

/// A doc's light description: what a hit or a related doc shows.
fn card(doc: &Doc) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("doc_id".into(), json!(doc.id));
    m.insert("title".into(), json!(doc.title));
    m.insert("summary".into(), json!(doc.summary));
    m.insert("type".into(), json!(doc.doc_type));
    m.insert("tags".into(), json!(doc.tags));
    m
}

/// A doc a walk reached: its card, how it is linked, and (for deeper walks) how far
/// and through which doc.
fn related_card(snap: &Snapshot, step: &Step, with_path: bool) -> Option<Value> {
    let mut c = card(snap.doc(&step.doc_id)?);
    c.insert("relation".into(), json!(step.relation));
    c.insert("direction".into(), json!(step.direction));
    c.insert("origin".into(), json!(step.origin));
    if with_path {
        c.insert("depth".into(), json!(step.depth));
        c.insert("via".into(), json!(step.via));
    }
    Some(Value::Object(c))
}

fn source_arg(args: &Value) -> Result<Source, ToolError> {
    let kind_text = opt_str(args, "source_kind").unwrap_or_default();
    let kind = SourceKind::parse(kind_text).map_err(|e| bad("source_kind", e))?;
    let id_text = match args.get("source_id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    Source::new(kind, &id_text)
        .map_err(|e| ToolError::field(ErrorCode::ValidationInvalidFormat, "source_id", e))
}

fn source_json(source: &Source) -> Value {
    json!({"kind": source.kind.as_str(), "id": source.id, "label": source.label()})
}

fn relation_arg(args: &Value, default: Relation) -> Result<Relation, ToolError> {
    match opt_str(args, "relation") {
        Some(text) => Relation::parse(text).map_err(|e| bad("relation", e)),
        None => Ok(default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cut_at_lines_and_read_on() {
        let text = "line one\nline two\nline three\n";
        let (p, end, next, total) = piece(text, 0, 15);
        assert_eq!(p, "line one\n");
        assert_eq!(end, 9);
        assert_eq!(next, Some(9));
        assert_eq!(total, 29);
        let (p, _, next, _) = piece(text, 9, 100);
        assert_eq!(p, "line two\nline three\n");
        assert_eq!(next, None);
        let (p, _, next, _) = piece("ééé", 1, 1);
        assert_eq!((p.as_str(), next), ("é", Some(2)));
        let (p, _, next, _) = piece("abc", 5, 10);
        assert_eq!((p.as_str(), next), ("", None));
    }

    #[test]
    fn tasks_name_struct_types_and_entities() {
        let s = named_subjects("Build an Ore Extractor on planet 2-1 for player 1-11");
        let labels: Vec<String> = s.iter().map(ToString::to_string).collect();
        assert!(labels.contains(&"entity:2-1".to_string()), "{labels:?}");
        assert!(labels.contains(&"entity:1-11".to_string()));
        assert!(labels.iter().any(|l| l.starts_with("struct_type:")));
    }
}
