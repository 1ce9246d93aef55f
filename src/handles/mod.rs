//! Result handles: no response leaves the core over 25 KB, and nothing is lost.
//!
//! Every tool result passes through [`Handles::finish`] last (after references):
//!
//! 1. when the call asked for `verbosity` or `fields`, each record is shaped
//!    ([`shape`]);
//! 2. a result of at most [`LIMIT`] bytes (serialized JSON) is returned as it is;
//! 3. a larger one is stored whole in the handle store under a handle
//!    (`structs:{entity}:{unix_time}:{random32}`, [`HandleConfig::ttl_secs`]) and the
//!    response becomes an envelope: `status: "partial"`, a `summary` (records at the
//!    call's verbosity or `compact`, the first rows of each collection, long text cut,
//!    arrays sampled, each marked), the `result_handle`, `page_info` and `metadata`.
//!
//! `structs_handle_fetch` reads a stored result back a page at a time ([`page`]), each
//! page under the limit; `structs_handle_list` lists the live handles.

pub mod page;
pub mod shape;
pub mod table;
pub mod unmatched;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::clock::WallClock;
use crate::error::ToolError;
use crate::store::{self, HandleMeta};
use shape::{Selection, Verbosity, sample_arrays, sample_record_maps, shape, truncate_strings};

/// Where stored results live as resources (`structs://handles/{handle}`).
pub const HANDLE_URI: &str = "structs://handles/";

/// The most bytes of serialized JSON any response may have.
pub const LIMIT: usize = crate::error::RESPONSE_LIMIT;

/// The most bytes of data one fetched page carries (the rest of the limit is the
/// page's own fields).
pub const PAGE_BUDGET: usize = LIMIT - 2_600;

/// Rows per fetched page unless the call says.
pub const DEFAULT_PAGE_SIZE: usize = 20;

/// The pattern of a handle (`structs:{entity}:{unix_time}:{random32}`). A handle made
/// before handles carried 128 bits has 8 hex digits last; a store shared with an older
/// server may still hold one until it expires.
pub const HANDLE_PATTERN: &str = "^structs:[a-z_]+:[0-9]+:([0-9a-f]{32}|[0-9a-f]{8})$";

/// Handle settings: the `[handles]` table of the configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HandleConfig {
    /// How long a stored result stays fetchable, in seconds.
    pub ttl_secs: u64,
    /// How often expired results are cleaned out, in seconds.
    pub cleanup_interval_secs: u64,
    /// Where results are kept: `memory` (this process) or a Redis URL
    /// (`redis://host:port/db`), which several servers can share.
    pub store: String,
    /// The prefix of every Redis key the store writes.
    pub redis_prefix: String,
    /// The most the memory store holds, in MB of stored JSON; past it the oldest
    /// results are dropped first.
    pub memory_limit_mb: u64,
    /// The most the Redis store holds, in MB of stored JSON, for every server sharing
    /// its prefix; past it the oldest results are dropped first.
    pub redis_limit_mb: u64,
}

impl Default for HandleConfig {
    fn default() -> HandleConfig {
        HandleConfig {
            ttl_secs: 900,
            cleanup_interval_secs: 60,
            store: "memory".into(),
            redis_prefix: store::redis::DEFAULT_PREFIX.into(),
            memory_limit_mb: store::DEFAULT_MEMORY_LIMIT_MB,
            redis_limit_mb: store::DEFAULT_MEMORY_LIMIT_MB,
        }
    }
}

impl HandleConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=7 * 24 * 3600).contains(&self.ttl_secs) {
            return Err("handles.ttl_secs must be 1-604800".into());
        }
        if !(1..=3600).contains(&self.cleanup_interval_secs) {
            return Err("handles.cleanup_interval_secs must be 1-3600".into());
        }
        if !(1..=1_048_576).contains(&self.memory_limit_mb) {
            return Err("handles.memory_limit_mb must be 1-1048576".into());
        }
        if !(1..=1_048_576).contains(&self.redis_limit_mb) {
            return Err("handles.redis_limit_mb must be 1-1048576".into());
        }
        if self.store != "memory" && !self.store.starts_with("redis://") {
            return Err(format!(
                "handles.store must be \"memory\" or a redis:// URL, not {:?}",
                self.store
            ));
        }
        if self.redis_prefix.is_empty()
            || !self
                .redis_prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_:.".contains(c))
        {
            return Err(
                "handles.redis_prefix must be letters, digits, '-', '_', ':' or '.'".into(),
            );
        }
        Ok(())
    }

    /// The memory store with this configuration's limit.
    pub fn memory_store(&self) -> store::MemoryStore {
        store::MemoryStore::with_limit(self.memory_limit_mb.saturating_mul(1 << 20) as usize)
    }

    /// Opens the configured store; a Redis store must answer now.
    pub async fn open_store(&self) -> Result<Arc<dyn store::HandleStore>, String> {
        if self.store == "memory" {
            return Ok(Arc::new(self.memory_store()));
        }
        let redis = store::redis::RedisStore::connect(&self.store, &self.redis_prefix)
            .await?
            .with_limit(self.redis_limit_mb.saturating_mul(1 << 20) as usize);
        Ok(Arc::new(redis))
    }
}

/// Whether the core shapes a tool's results or the tool does it itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shaping {
    /// The tool takes `verbosity` and `fields` from the core (added to its schema).
    Standard,
    /// The tool has its own `verbosity` and `fields` (the handle tools); the core still
    /// holds it to the size limit.
    Own,
}

/// The key of the report of `fields` paths that matched nothing
/// ([`unmatched::unmatched_fields`]): beside a shaped answer's own fields, or in an
/// envelope's or a fetched page's `metadata`.
pub const UNMATCHED_KEY: &str = "fields_unmatched";

/// The argument names of the shaping options the core takes out of a call (`format`
/// only where a tool's schema offers it: the lists).
pub const ARGUMENTS: [&str; 3] = ["verbosity", "fields", "format"];

/// The JSON Schema of `verbosity`.
pub fn verbosity_schema(default: &str) -> Value {
    json!({"enum": ["summary", "compact", "detailed", "raw"],
           "description": format!("Fields per record: summary 5, compact 15, detailed 50, raw all (default {default}). The most useful fields of each kind come first.")})
}

/// The JSON Schema of `fields`.
pub fn fields_schema() -> Value {
    json!({"type": "string", "maxLength": 2000,
           "description": "Comma-separated field paths to return for each record, dotted for nesting (\"id,owner,gridAttributes.ore\"); overrides verbosity."})
}

/// The JSON Schema of `format`, which the list tools offer.
pub fn format_schema() -> Value {
    json!({"enum": ["records", "table"],
           "description": "records (default): each entity as the chain's JSON; table: the page as {columns, rows}, each field's name once and each entity one row of values, the smallest form for scans (with fields)."})
}

/// The shaping a call asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// `fields` if given, else `verbosity` if given.
    pub selection: Option<Selection>,
    pub verbosity: Option<Verbosity>,
    /// `format: "table"`: arrays of records become `{columns, rows}`.
    pub table: bool,
}

impl Request {
    /// True when the call asked for a smaller answer than the whole: `fields`, or
    /// verbosity summary or compact. References are then lean by default.
    pub fn is_lean(&self) -> bool {
        match &self.selection {
            Some(Selection::Fields { .. }) => true,
            Some(Selection::Verbosity(v)) => matches!(v, Verbosity::Summary | Verbosity::Compact),
            None => false,
        }
    }

    /// True when `fields` names the fields each record keeps.
    pub fn has_fields(&self) -> bool {
        matches!(self.selection, Some(Selection::Fields { .. }))
    }

    /// Takes the shaping options out of `args` (already checked by the schema).
    pub fn take(args: &mut Value) -> Request {
        let Some(obj) = args.as_object_mut() else {
            return Request::default();
        };
        let verbosity = obj
            .remove("verbosity")
            .and_then(|v| v.as_str().and_then(Verbosity::parse));
        let table = obj.remove("format").is_some_and(|f| f == "table");
        let fields = obj.remove("fields");
        let selection = match fields.as_ref().and_then(Value::as_str) {
            Some(text) => Some(Selection::fields_or(
                text,
                verbosity.unwrap_or(Verbosity::Summary),
            )),
            None => verbosity.map(Selection::Verbosity),
        };
        Request {
            selection,
            verbosity,
            table,
        }
    }
}

fn size_of(v: &Value) -> usize {
    crate::json::encoded_len(v)
}

/// The result-handle service of one core: its settings, its store, and when expired
/// handles were last cleaned out.
pub struct Handles {
    config: HandleConfig,
    store: Arc<dyn store::HandleStore>,
    wall: WallClock,
    last_cleanup: std::sync::Mutex<Option<chrono::DateTime<chrono::Utc>>>,
}

impl Handles {
    pub fn new(
        config: HandleConfig,
        store: Arc<dyn store::HandleStore>,
        wall: WallClock,
    ) -> Handles {
        Handles {
            config,
            store,
            wall,
            last_cleanup: std::sync::Mutex::new(None),
        }
    }

    /// Handle settings.
    pub fn config(&self) -> &HandleConfig {
        &self.config
    }

    /// Where results over the size limit are kept.
    pub fn store(&self) -> &Arc<dyn store::HandleStore> {
        &self.store
    }

    /// Cleans expired handles out of the store when the cleanup interval has passed
    /// since the last time. Called as handles are stored, fetched and listed, so the
    /// cleanup runs periodically while the server is used, with no timer of its own.
    pub async fn maybe_clean(&self) {
        let now = self.wall.now();
        let every = chrono::Duration::seconds(self.config.cleanup_interval_secs as i64);
        {
            let mut last = self.last_cleanup.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|at| now - at < every) {
                return;
            }
            *last = Some(now);
        }
        match self.store.cleanup(now).await {
            Ok(0) => {}
            Ok(n) => tracing::debug!(removed = n, "expired handles cleaned"),
            Err(e) => tracing::warn!("handle cleanup failed: {}", e.message),
        }
    }

    /// The last step of every call: shapes the result as asked, and turns one over the
    /// limit into an envelope with a handle.
    pub async fn finish(
        &self,
        tool: &str,
        request: &Request,
        mut value: Value,
    ) -> Result<Value, ToolError> {
        let mut unmatched = None;
        let full = match &request.selection {
            Some(selection) => {
                let full = value.clone();
                unmatched = unmatched::unmatched_fields(&value, selection);
                shape(&mut value, selection);
                Some(full)
            }
            None => None,
        };
        if request.table {
            table::tabulate(&mut value);
        }
        // Field paths that named nothing are said, never silently dropped.
        if let (Some(report), Value::Object(obj)) = (&unmatched, &mut value) {
            obj.insert(UNMATCHED_KEY.into(), report.clone());
        }
        if size_of(&value) <= LIMIT {
            return Ok(value);
        }
        let mut out = envelope(self, tool, request, full.unwrap_or(value)).await?;
        if let Some(report) = unmatched
            && let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.insert(UNMATCHED_KEY.into(), report);
        }
        Ok(out)
    }
}

/// The kind of the first record in a result, for the handle's name.
fn entity_of(v: &Value) -> Option<&'static str> {
    match v {
        Value::Object(obj) => shape::kind_of_record(obj)
            .map(|kind| kind.name())
            .or_else(|| obj.values().find_map(entity_of)),
        Value::Array(items) => items.iter().find_map(entity_of),
        _ => None,
    }
}

/// `structs:{entity}:{unix_time}:{random}`, the last part 128 bits from the kernel: a
/// caller that sees its own handles cannot guess another's, and handles from several
/// servers sharing a store do not collide.
fn new_handle(entity: &str, unix: i64) -> String {
    format!("structs:{entity}:{unix}:{}", crate::random::hex128())
}

/// Rows shown in a summary: items of its top-level collections.
fn shown_rows(summary: &Value) -> usize {
    let Value::Object(obj) = summary else {
        return 0;
    };
    obj.values()
        .map(|v| match v {
            Value::Array(items) => items.len(),
            Value::Object(o) if o.get("sampled") == Some(&Value::Bool(true)) => {
                match &o["sample"] {
                    Value::Array(items) => items.len(),
                    Value::Object(map) => map.len(),
                    _ => 0,
                }
            }
            Value::Object(map) if shape::is_record_map(map) => map.len(),
            _ => 0,
        })
        .sum()
}

async fn envelope(
    handles: &Handles,
    tool: &str,
    request: &Request,
    full: Value,
) -> Result<Value, ToolError> {
    let config = &handles.config;
    let now = handles.wall.now();
    let size_bytes = size_of(&full);
    let entity = entity_of(&full).unwrap_or("result");
    let handle = new_handle(entity, now.timestamp());
    let ttl = chrono::Duration::seconds(config.ttl_secs as i64);
    let data = Arc::new(full);
    let rows = page::row_count(&data);
    let total_pages =
        page::page(&data, 1, DEFAULT_PAGE_SIZE, PAGE_BUDGET).map_or(1, |p| p.total_pages);
    let meta = HandleMeta {
        handle: handle.clone(),
        tool: tool.to_string(),
        size_bytes,
        rows,
        created: now,
        expires: now + ttl,
        hits: 0,
        owner: crate::context::CallContext::current().owner_id(),
    };
    handles.store
        .put(meta, Arc::clone(&data))
        .await
        .map_err(|e| {
            ToolError::new(
                e.code,
                format!(
                    "the result of {tool} is {size_bytes} bytes, over the {LIMIT}-byte limit, and \
                     could not be stored for fetching: {}. Ask for less (verbosity, fields, page_size).",
                    e.message
                ),
            )
        })?;
    if let Some(mine) = crate::context::CallContext::current().handles() {
        mine.add(&handle);
    }
    handles.maybe_clean().await;

    let verbosity = request.verbosity.unwrap_or(Verbosity::Compact);
    let selection = match &request.selection {
        Some(fields @ Selection::Fields { .. }) => fields.clone(),
        _ => Selection::Verbosity(verbosity),
    };
    // Smaller and smaller summaries until the envelope fits.
    let attempts = [
        (selection.clone(), 5, 200),
        (Selection::Verbosity(verbosity.smaller()), 5, 200),
        (Selection::Verbosity(Verbosity::Summary), 3, 100),
        (Selection::Verbosity(Verbosity::Summary), 1, 60),
    ];
    for (selection, keep, text) in attempts {
        let mut summary = (*data).clone();
        let shaped = shape(&mut summary, &selection);
        sample_record_maps(&mut summary, keep);
        sample_arrays(&mut summary, keep);
        truncate_strings(&mut summary, text);
        let verbosity_name = match &selection {
            Selection::Fields { .. } => "fields",
            Selection::Verbosity(v) => v.as_str(),
        };
        let out = envelope_json(EnvelopeParts {
            summary,
            handle: &handle,
            rows,
            total_pages,
            verbosity: verbosity_name,
            size_bytes,
            field_count: shaped.max_fields,
            ttl_secs: config.ttl_secs,
            tool,
            timestamp: handles.wall.timestamp(),
        });
        if size_of(&out) <= LIMIT {
            return Ok(out);
        }
    }
    // Nothing of the data fits: name its fields and point at the handle.
    let keys: Vec<Value> = data
        .as_object()
        .map(|o| o.keys().take(200).map(|k| json!(k)).collect())
        .unwrap_or_default();
    Ok(envelope_json(EnvelopeParts {
        summary: json!({"fields": keys, "note": "too large to summarise; fetch it by handle"}),
        handle: &handle,
        rows,
        total_pages,
        verbosity: "summary",
        size_bytes,
        field_count: 0,
        ttl_secs: config.ttl_secs,
        tool,
        timestamp: handles.wall.timestamp(),
    }))
}

struct EnvelopeParts<'a> {
    summary: Value,
    handle: &'a str,
    rows: usize,
    total_pages: usize,
    verbosity: &'a str,
    size_bytes: usize,
    field_count: usize,
    ttl_secs: u64,
    tool: &'a str,
    timestamp: String,
}

/// The JSON Schema of the envelope `tool` answers with when its result is over the
/// limit ([`envelope_json`]); `summary` is the result cut down (its shape is the
/// result's). Short, as every tool's output schema holds it.
pub fn envelope_schema(tool: &str) -> Value {
    json!({
        "type": "object",
        "description": "Over 25 KB: summary is cut down; read the whole with structs_handle_fetch.",
        "required": ["status", "summary", "result_handle", "page_info", "metadata", "resource_uri"],
        "properties": {
            "status": {"const": "partial"},
            "summary": {"type": "object"},
            "result_handle": {"type": "string", "pattern": HANDLE_PATTERN},
            "page_info": {"type": "object", "required": ["has_more", "total", "current_page", "total_pages"]},
            "metadata": {"type": "object", "required": ["tool_name", "size_bytes", "expires_in_sec"],
                         "properties": {"tool_name": {"const": tool}}},
            "resource_uri": {"type": "string"}
        },
        "additionalProperties": false
    })
}

fn envelope_json(p: EnvelopeParts<'_>) -> Value {
    let row_count = shown_rows(&p.summary);
    let mut out = Map::new();
    out.insert("status".into(), json!("partial"));
    out.insert("summary".into(), p.summary);
    out.insert("result_handle".into(), json!(p.handle));
    out.insert(
        "page_info".into(),
        json!({"has_more": true, "total": p.rows, "current_page": 1, "total_pages": p.total_pages}),
    );
    out.insert(
        "metadata".into(),
        json!({
            "verbosity": p.verbosity,
            "size_bytes": p.size_bytes,
            "field_count": p.field_count,
            "row_count": row_count,
            "expires_in_sec": p.ttl_secs,
            "tool_name": p.tool,
            "timestamp": p.timestamp,
        }),
    );
    out.insert(
        "resource_uri".into(),
        json!(format!("structs://handles/{}", p.handle)),
    );
    Value::Object(out)
}
