//! Reference-doc tools (`structs_docs_*`): search, read, follow links, plan what to
//! load, and author links (written through to the files). All of them read the core's
//! [`Docs`](crate::docs::Docs) snapshot; building it or writing files runs off the
//! async workers.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Env, Registry, ToolSpec};
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

async fn search(docs: Arc<Docs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let query = opt_str(&args, "query").unwrap_or_default();
    let limit = whole(&args, "limit", 10);
    // A type as written, or its singular (`schemas` for `schema`, as the tool
    // catalog writes its categories).
    let has_type = |t: &str| snap.docs().values().any(|d| d.doc_type == t);
    let doc_type: Option<String> = opt_str(&args, "type")
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty())
        .map(|t| match t.strip_suffix('s') {
            Some(one) if !has_type(&t) && has_type(one) => one.to_string(),
            _ => t,
        });
    let doc_type = doc_type.as_deref();
    if let Some(t) = doc_type
        && !has_type(t)
    {
        let types = snap.categories();
        return Err(bad(
            "type",
            format!(
                "no doc has type {t:?}; types are {}",
                types.keys().copied().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let tag = opt_str(&args, "tag")
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let hits = snap.search(query, doc_type, tag, limit).map_err(|e| {
        ToolError::new(
            ErrorCode::ToolExecutionFailed,
            format!("search failed: {e}"),
        )
    })?;
    let hits: Vec<Value> = hits
        .into_iter()
        .map(|h| {
            let mut m = card(h.doc);
            m.insert("uri".into(), json!(h.doc.uri()));
            m.insert("score".into(), json!(round(h.score)));
            m.insert("snippet".into(), json!(h.snippet));
            Value::Object(m)
        })
        .collect();
    let mut out = json!({
        "query": query,
        "count": hits.len(),
        "hits": hits,
        "docs_indexed": snap.docs().len(),
    });
    if out["count"] == 0 {
        out["hint"] = json!(
            "no doc matches these words; try other words, drop the type or tag filter, or \
             browse structs_docs_get_index"
        );
    }
    Ok(out)
}

/// The piece of `text` from character `offset`, at most `max_chars` characters and
/// [`CONTENT_BYTES`] bytes, ending at a line end when one is near.
fn piece(text: &str, offset: usize, max_chars: usize) -> (String, usize, Option<usize>, usize) {
    let total = text.chars().count();
    let start = text
        .char_indices()
        .nth(offset)
        .map_or(text.len(), |(i, _)| i);
    let rest = &text[start..];
    let end = rest
        .char_indices()
        .enumerate()
        .find(|(n, (i, c))| *n == max_chars || i + c.len_utf8() > CONTENT_BYTES)
        .map_or(rest.len(), |(_, (i, _))| i);
    let mut end = end;
    if end < rest.len() {
        // Back to the last line end in the second half, so a piece ends on a line.
        if let Some(nl) = rest[..end].rfind('\n')
            && nl + 1 >= end / 2
        {
            end = nl + 1;
        }
    }
    let piece = &rest[..end];
    let taken = piece.chars().count();
    let next = (offset + taken < total).then_some(offset + taken);
    (piece.to_string(), offset.min(total) + taken, next, total)
}

fn link_json(snap: &Snapshot, l: &Link, other: &str) -> Value {
    json!({
        "doc_id": other,
        "title": snap.doc(other).map(|d| d.title.as_str()),
        "relation": l.relation,
        "origin": l.origin,
        "exists": snap.doc(other).is_some(),
    })
}

async fn get(docs: Arc<Docs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let doc = doc_arg(
        &snap,
        opt_str(&args, "doc_id").unwrap_or_default(),
        "doc_id",
    )?;
    let offset = whole(&args, "offset", 0);
    let max_chars = whole(&args, "max_chars", 12_000);
    let (content, end, next_offset, total) = piece(&doc.body, offset, max_chars);
    if offset > total {
        return Err(ToolError::field(
            ErrorCode::ValidationOutOfRange,
            "offset",
            format!("the content has {total} characters"),
        ));
    }
    let graph = snap.graph();
    let source = Source::doc(&doc.id);
    let out_links: Vec<&Link> = graph.from(&source).collect();
    let in_links: Vec<&Link> = graph
        .into(&doc.id)
        .filter(|l| l.source.kind == SourceKind::Doc)
        .collect();
    let informs: Vec<Value> = graph
        .into(&doc.id)
        .filter(|l| l.source.kind != SourceKind::Doc)
        .map(|l| {
            json!({"source_kind": l.source_kind, "source_id": l.source_id,
                   "label": l.source.label(), "relation": l.relation, "origin": l.origin})
        })
        .collect();
    let mut m = card(doc);
    m.insert("uri".into(), json!(doc.uri()));
    m.insert("type_inferred".into(), json!(doc.type_inferred));
    m.insert("path".into(), json!(doc.path));
    m.insert("bytes".into(), json!(doc.bytes));
    m.insert("est_tokens".into(), json!(doc.est_tokens()));
    m.insert("content".into(), json!(content));
    m.insert(
        "content_range".into(),
        json!({"offset": offset, "end": end, "total_chars": total, "next_offset": next_offset}),
    );
    m.insert(
        "links".into(),
        json!({
            "out": out_links.iter().take(LINKS_SHOWN).map(|l| link_json(&snap, l, &l.target_doc_id)).collect::<Vec<_>>(),
            "in": in_links.iter().take(LINKS_SHOWN).map(|l| link_json(&snap, l, &l.source_id)).collect::<Vec<_>>(),
            "out_total": out_links.len(),
            "in_total": in_links.len(),
        }),
    );
    m.insert("informs".into(), json!(informs));
    if args.get("include_related") == Some(&Value::Bool(true)) {
        let walk = graph.walk(&doc.id, 1, Direction::Both, LINKS_SHOWN);
        let related: Vec<Value> = walk
            .docs
            .iter()
            .filter_map(|step| related_card(&snap, step, false))
            .collect();
        m.insert("related".into(), json!(related));
        m.insert("related_truncated".into(), json!(walk.truncated));
    }
    let warnings: Vec<_> = snap.warnings_for(&doc.path).take(WARNINGS_SHOWN).collect();
    if !warnings.is_empty() {
        m.insert("warnings".into(), json!(warnings));
    }
    Ok(Value::Object(m))
}

async fn get_related(docs: Arc<Docs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let id_text = match (opt_str(&args, "doc_id"), opt_str(&args, "resource_uri")) {
        (Some(id), None) => id.to_string(),
        (None, Some(uri)) => match uri.strip_prefix(DOC_URI_PREFIX) {
            Some(id) => id.to_string(),
            None => {
                return Err(ToolError::field(
                    ErrorCode::ValidationInvalidFormat,
                    "resource_uri",
                    format!("a doc's URI is {DOC_URI_PREFIX}{{doc_id}}"),
                ));
            }
        },
        (Some(_), Some(_)) => {
            return Err(bad("doc_id", "give doc_id or resource_uri, not both"));
        }
        (None, None) => {
            return Err(ToolError::field(
                ErrorCode::ValidationMissingField,
                "doc_id",
                "give doc_id or resource_uri",
            ));
        }
    };
    let field = if args.get("doc_id").is_some() {
        "doc_id"
    } else {
        "resource_uri"
    };
    let doc = doc_arg(&snap, &id_text, field)?;
    let depth = whole(&args, "depth", 1);
    let limit = whole(&args, "limit", 25);
    let direction = match opt_str(&args, "direction").unwrap_or("both") {
        "out" => Direction::Out,
        "in" => Direction::In,
        _ => Direction::Both,
    };
    let walk = snap.graph().walk(&doc.id, depth, direction, limit);
    let related: Vec<Value> = walk
        .docs
        .iter()
        .filter_map(|step| related_card(&snap, step, true))
        .collect();
    Ok(json!({
        "doc_id": doc.id,
        "uri": doc.uri(),
        "depth": depth,
        "direction": opt_str(&args, "direction").unwrap_or("both"),
        "count": related.len(),
        "related": related,
        "truncated": walk.truncated,
    }))
}

async fn get_index(docs: Arc<Docs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let categories = snap.categories();
    match opt_str(&args, "category").map(|c| c.trim().to_lowercase()) {
        Some(category) => {
            // As written, or its singular (`schemas`, as the tool catalog writes it).
            let category = match category.strip_suffix('s') {
                Some(one)
                    if !categories.contains_key(category.as_str())
                        && categories.contains_key(one) =>
                {
                    one.to_string()
                }
                _ => category,
            };
            let Some(docs) = categories.get(category.as_str()) else {
                return Err(bad(
                    "category",
                    format!(
                        "no category {category:?}; categories are {}",
                        categories.keys().copied().collect::<Vec<_>>().join(", ")
                    ),
                ));
            };
            Ok(json!({
                "category": category,
                "count": docs.len(),
                "docs": docs.iter().map(|d| Value::Object(card(d))).collect::<Vec<_>>(),
            }))
        }
        None => Ok(json!({
            "root": snap.root().describe(),
            "total_docs": snap.docs().len(),
            "categories": categories.iter().map(|(name, docs)| json!({
                "category": name,
                "count": docs.len(),
                "doc_ids": docs.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })),
    }
}

/// Struct types, entity ids and the link sources the task names.
fn named_subjects(task: &str) -> Vec<Source> {
    let lower = task.to_lowercase();
    let mut out = Vec::new();
    for t in struct_types() {
        if lower.contains(&t.name.to_lowercase()) {
            out.push(Source {
                kind: SourceKind::StructType,
                id: t.id.to_string(),
            });
        }
    }
    for word in task.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        if word.contains('-')
            && let Ok(id) = EntityId::parse(word)
        {
            out.push(Source {
                kind: SourceKind::Entity,
                id: id.to_string(),
            });
        }
    }
    out
}

async fn loading_strategy(docs: Arc<Docs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let task = opt_str(&args, "task").unwrap_or_default();
    let budget = whole(&args, "max_tokens", 8000);
    let max_docs = whole(&args, "max_docs", 6);
    let hits = snap.search(task, None, None, max_docs * 2).map_err(|e| {
        ToolError::new(
            ErrorCode::ToolExecutionFailed,
            format!("search failed: {e}"),
        )
    })?;
    let best = hits.first().map_or(0.0, |h| h.score);
    // (doc id, reason, score) in the order they should be read.
    let mut chosen: Vec<(String, String, Option<f64>)> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut add = |chosen: &mut Vec<(String, String, Option<f64>)>,
                   id: &str,
                   reason: String,
                   score: Option<f64>| {
        if seen.insert(id.to_string()) {
            chosen.push((id.to_string(), reason, score));
        }
    };
    // Docs linked to what the task names come first: they are about exactly that.
    for subject in named_subjects(task) {
        for link in snap
            .graph()
            .from(&subject)
            .filter(|l| l.target_exists)
            .take(2)
        {
            add(
                &mut chosen,
                &link.target_doc_id,
                format!("{} {}", link.relation, subject.label()),
                None,
            );
        }
    }
    for hit in hits.iter().filter(|h| h.score >= best * 0.4).take(max_docs) {
        add(
            &mut chosen,
            &hit.doc.id,
            "matches the task".to_string(),
            Some(round(hit.score)),
        );
    }
    chosen.truncate(max_docs);
    // What each chosen doc depends on is read before it (one hop): added in front of
    // it, or moved there when it was chosen for itself but came later.
    let mut i = 0;
    while i < chosen.len() {
        let id = chosen[i].0.clone();
        let deps: Vec<String> = snap
            .graph()
            .from(&Source::doc(&id))
            .filter(|l| l.rel == Relation::DependsOn && l.target_exists)
            .map(|l| l.target_doc_id.clone())
            .collect();
        for dep in deps {
            match chosen.iter().position(|(d, _, _)| *d == dep) {
                Some(j) if j < i => {}
                Some(j) => {
                    let entry = chosen.remove(j);
                    chosen.insert(i, entry);
                    i += 1;
                }
                None if chosen.len() < max_docs * 2 => {
                    chosen.insert(i, (dep, format!("{id} depends on it"), None));
                    i += 1;
                }
                None => {}
            }
        }
        i += 1;
    }
    let mut load = Vec::new();
    let mut deferred = Vec::new();
    let mut total = 0;
    for (id, reason, score) in chosen {
        let Some(doc) = snap.doc(&id) else { continue };
        let tokens = doc.est_tokens();
        let entry = json!({
            "doc_id": id, "title": doc.title, "reason": reason,
            "est_tokens": tokens, "score": score,
        });
        if total + tokens <= budget {
            total += tokens;
            load.push(entry);
        } else {
            deferred.push(entry);
        }
    }
    for (order, entry) in load.iter_mut().enumerate() {
        entry["order"] = json!(order + 1);
    }
    Ok(json!({
        "task": task,
        "budget_tokens": budget,
        "total_est_tokens": total,
        "load": load,
        "deferred": deferred,
        "note": if load.is_empty() && deferred.is_empty() {
            "no doc matches the task; try other words or browse structs_docs_get_index"
        } else {
            "read them in order with structs_docs_get; deferred ones did not fit the budget"
        },
    }))
}

/// A struct's type number, read through the source.
async fn struct_type_of(env: &Env, id: EntityId) -> Option<String> {
    let v = env.source().get(id).await.ok()??;
    chain_u64(&v, &["Struct", "type"]).map(|t| t.to_string())
}

async fn list_references(docs: Arc<Docs>, env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let source = source_arg(&args)?;
    let mut sources = vec![(source.clone(), None::<String>)];
    if args.get("include_kind_links") == Some(&Value::Bool(true))
        && source.kind == SourceKind::Entity
        && let Ok(id) = EntityId::parse(&source.id)
    {
        // The more specific first: a struct's type, then the kind.
        if id.kind == EntityKind::Struct
            && let Some(t) = struct_type_of(&env, id).await
        {
            let s = Source {
                kind: SourceKind::StructType,
                id: t,
            };
            let label = s.label();
            sources.push((s, Some(format!("its {label}"))));
        }
        sources.push((
            Source {
                kind: SourceKind::EntityKind,
                id: id.kind.name().to_string(),
            },
            Some(format!("its kind {}", id.kind.name())),
        ));
    }
    let mut references = Vec::new();
    let mut seen = BTreeSet::new();
    for (s, via) in &sources {
        for l in snap.graph().from(s) {
            if !seen.insert(l.target_doc_id.clone()) {
                continue;
            }
            let mut r = json!({
                "target_doc_id": l.target_doc_id,
                "title": snap.doc(&l.target_doc_id).map(|d| d.title.as_str()),
                "relation": l.relation,
                "origin": l.origin,
                "declared_in": l.declared_in,
                "target_exists": l.target_exists,
            });
            if let Some(via) = via {
                r["via"] = json!(via);
            }
            references.push(r);
        }
    }
    Ok(json!({
        "source": source_json(&source),
        "count": references.len(),
        "references": references,
    }))
}

/// Writes links through [`Docs::upsert`] off the async workers.
async fn write_links(
    docs: &Arc<Docs>,
    source: Source,
    changes: Vec<(String, Relation)>,
) -> Result<(String, Vec<crate::docs::Upserted>), ToolError> {
    let docs = Arc::clone(docs);
    tokio::task::spawn_blocking(move || docs.upsert(&source, &changes))
        .await
        .map_err(|e| {
            ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!("writing links failed: {e}"),
            )
        })?
}

async fn upsert_link(docs: Arc<Docs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let source = source_arg(&args)?;
    let target = doc_arg(
        &snap,
        opt_str(&args, "target_doc_id").unwrap_or_default(),
        "target_doc_id",
    )?
    .id
    .clone();
    let relation = relation_arg(&args, source.kind.default_relation())?;
    let (file, mut outcomes) = write_links(&docs, source.clone(), vec![(target, relation)]).await?;
    let outcome = outcomes.pop().map(|o| json!(o)).unwrap_or(Value::Null);
    Ok(json!({
        "source": source_json(&source),
        "link": outcome,
        "written_to": file,
        "origin": Origin::Explicit.as_str(),
    }))
}

/// The things related to `source` that suggestions count.
async fn related_of(
    env: &Env,
    snap: &Snapshot,
    source: &Source,
) -> Result<Vec<Related>, ToolError> {
    match source.kind {
        SourceKind::Entity => {
            let id = EntityId::parse(&source.id).map_err(|e| {
                ToolError::field(
                    ErrorCode::ValidationInvalidFormat,
                    "source_id",
                    e.to_string(),
                )
            })?;
            let entity = super::fetch(env, id, "source_id").await?;
            let mut found = Extraction::default();
            found.walk_entity(id, &entity);
            let mut related = Vec::new();
            let mut seen = BTreeSet::new();
            for c in found.candidates {
                if c.id == id || !seen.insert(c.id) || related.len() == 100 {
                    continue;
                }
                let mut via = vec![
                    Source {
                        kind: SourceKind::Entity,
                        id: c.id.to_string(),
                    },
                    Source {
                        kind: SourceKind::EntityKind,
                        id: c.id.kind.name().to_string(),
                    },
                ];
                if c.id.kind == EntityKind::Struct
                    && let Some(t) = struct_type_of(env, c.id).await
                {
                    via.push(Source {
                        kind: SourceKind::StructType,
                        id: t,
                    });
                }
                related.push(Related {
                    label: format!("{} {}", c.id.kind.name(), c.id),
                    via,
                });
            }
            Ok(related)
        }
        SourceKind::Doc => {
            if snap.doc(&source.id).is_none() {
                return Err(doc_not_found(snap, &source.id, "source_id"));
            }
            Ok(snap
                .graph()
                .walk(&source.id, 1, Direction::Both, 200)
                .docs
                .into_iter()
                .map(|step| Related {
                    label: format!("doc {}", step.doc_id),
                    via: vec![Source::doc(&step.doc_id)],
                })
                .collect())
        }
        SourceKind::EntityKind | SourceKind::StructType => Err(bad(
            "source_kind",
            "suggestions work from an entity (its related entities) or a doc (its linked docs); \
             link kinds and struct types with structs_docs_upsert_link",
        )),
    }
}

async fn suggest_references(docs: Arc<Docs>, env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let source = source_arg(&args)?;
    let related = related_of(&env, &snap, &source).await?;
    let min_score = whole(&args, "min_score", 1);
    let limit = whole(&args, "limit", 20);
    let candidates: Vec<suggest::Candidate> = suggest::suggest(&snap, &source, &related)
        .into_iter()
        .filter(|c| c.score >= min_score)
        .collect();
    let mode = opt_str(&args, "mode").unwrap_or("preview");
    let mut out = json!({
        "source": source_json(&source),
        "mode": mode,
        "related": related.iter().map(|r| r.label.as_str()).collect::<Vec<_>>(),
        "min_score": min_score,
        "candidate_count": candidates.len(),
        "candidates": candidates.iter().take(limit).collect::<Vec<_>>(),
    });
    if mode != "apply" {
        return Ok(out);
    }
    let relation = relation_arg(&args, source.kind.default_relation())?;
    let max_apply = whole(&args, "max_apply", 10);
    let mut not_applied = Vec::new();
    let chosen: Vec<&suggest::Candidate> = match args
        .get("selected_doc_ids")
        .and_then(Value::as_array)
    {
        Some(selected) => {
            let mut wanted = Vec::new();
            for s in selected.iter().filter_map(Value::as_str) {
                let id = normalize_doc_id(s).unwrap_or_else(|_| s.to_string());
                if wanted.contains(&id) {
                    continue;
                }
                if !candidates.iter().any(|c| c.doc_id == id) {
                    not_applied.push(json!({"doc_id": id, "reason": "not a candidate (no related thing links to it, it is already linked, or its score is under min_score)"}));
                }
                wanted.push(id);
            }
            candidates
                .iter()
                .filter(|c| wanted.contains(&c.doc_id))
                .collect()
        }
        None => candidates.iter().collect(),
    };
    for c in chosen.iter().skip(max_apply) {
        not_applied
            .push(json!({"doc_id": c.doc_id, "reason": format!("over max_apply ({max_apply})")}));
    }
    let changes: Vec<(String, Relation)> = chosen
        .iter()
        .take(max_apply)
        .map(|c| (c.doc_id.clone(), relation))
        .collect();
    if changes.is_empty() {
        out["applied"] = json!([]);
        out["not_applied"] = json!(not_applied);
        return Ok(out);
    }
    let (file, outcomes) = write_links(&docs, source, changes).await?;
    out["applied"] = json!(outcomes);
    out["not_applied"] = json!(not_applied);
    out["written_to"] = json!(file);
    Ok(out)
}

async fn sync(docs: Arc<Docs>, _env: Env, _args: Value) -> Result<Value, ToolError> {
    let docs = Arc::clone(&docs);
    let (_, report) = tokio::task::spawn_blocking(move || docs.sync())
        .await
        .map_err(|e| ToolError::new(ErrorCode::ToolExecutionFailed, format!("sync failed: {e}")))?;
    let mut out = json!(report);
    let total = report.warnings.len();
    out["warnings"] = json!(
        report
            .warnings
            .iter()
            .take(WARNINGS_SHOWN)
            .collect::<Vec<_>>()
    );
    out["warnings_total"] = json!(total);
    for list in ["added", "removed", "changed"] {
        if let Some(items) = out[list].as_array_mut() {
            let n = items.len();
            items.truncate(200);
            out[format!("{list}_total")] = json!(n);
        }
    }
    Ok(out)
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
