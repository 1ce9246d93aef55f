//! Handle tools: read back a result that was too large to return
//! (`structs_handle_fetch`), and list the live handles (`structs_handle_list`).

use serde_json::{Value, json};

use super::opt_str;
use super::{Env, Hints, Registry, ToolSpec, output};
use crate::error::{ErrorCode, ToolError};
use crate::handles::shape::{Selection, Verbosity, shape};
use crate::handles::{
    DEFAULT_PAGE_SIZE, PAGE_BUDGET, Shaping, fields_schema, page, verbosity_schema,
};
use crate::json::whole_number;
use crate::references::Support;

pub use crate::handles::HANDLE_PATTERN;

/// Most handles one list shows.
const LIST_MAX: usize = 100;

pub fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_handle_fetch",
            description: "Read back a result that was over the 25 KB limit, by the \
                result_handle its envelope gave, a page at a time (each page under the \
                limit; merge pages in order to rebuild the whole: arrays extend, maps merge). \
                Optional fields and verbosity shape each record. Says the handle's age, expiry \
                and size. An unknown handle is RESOURCE_NOT_FOUND, an expired one \
                RESOURCE_EXPIRED (run the tool again); RESOURCE_UNAVAILABLE means the shared \
                store cannot be reached right now (retry in a few seconds).",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "handle": {"type": "string", "pattern": HANDLE_PATTERN, "maxLength": 120,
                               "description": "The result_handle, e.g. \"structs:player:1763726400:1a2b3c4d5e6f708192a3b4c5d6e7f809\"."},
                    "fields": fields_schema(),
                    "verbosity": verbosity_schema("raw"),
                    "page": {"type": "integer", "minimum": 1, "maximum": 1_000_000, "default": 1,
                             "description": "Which page, from 1."},
                    "page_size": {"type": "integer", "minimum": 1, "maximum": 100,
                                  "default": DEFAULT_PAGE_SIZE,
                                  "description": "Rows per page (1-100, default 20); a page also stops before 23 KB of data."}
                },
                "required": ["handle"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Read a stored result",
            hints: Hints::LOCAL,
            output_schema: output::agent::handle_fetch(),
        },
        fetch,
    );
    registry.add(
        ToolSpec {
            name: "structs_handle_list",
            description: "The live result handles, newest first (at most 100): tool, size, \
                rows, age, time to expiry and hits of each. An MCP client sees the handles it \
                made in this session; scope \"all\" lists every handle its caller made, through \
                any session or server sharing the store. A caller (its bearer token) lists and \
                fetches its own handles only; the operator's token, every caller's.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "scope": {"type": "string", "enum": ["mine", "all"],
                        "description": "mine (the default): the handles this session made; all: every live handle this caller made (the operator: every handle in the store)."}
                },
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "List stored results",
            hints: Hints::LOCAL,
            output_schema: output::agent::handle_list(),
        },
        list,
    );
}

fn whole(args: &Value, field: &str) -> Option<usize> {
    args.get(field).and_then(whole_number).map(|n| n as usize)
}

fn bad_page(page: usize, total: usize) -> ToolError {
    ToolError::field(
        ErrorCode::ValidationOutOfRange,
        "page",
        format!("must be 1-{total}, got {page}"),
    )
}

async fn fetch(env: Env, args: Value) -> Result<Value, ToolError> {
    let handle = opt_str(&args, "handle").unwrap_or_default().to_string();
    env.maybe_clean_handles().await;
    let now = env.now();
    let stored = env
        .handle_store()
        .get(&handle, now)
        .await?
        .map_err(|missing| missing.to_error(&handle))?;
    // Another caller's result is not there for this one: it hears what it would of a
    // handle never made, so a handle's existence says nothing either.
    if !crate::context::CallContext::current().sees(stored.meta.owner.as_deref()) {
        return Err(crate::store::Missing::Unknown.to_error(&handle));
    }
    let verbosity = opt_str(&args, "verbosity")
        .and_then(Verbosity::parse)
        .unwrap_or(Verbosity::Raw);
    let selection = match opt_str(&args, "fields") {
        Some(text) => Selection::fields_or(
            text,
            opt_str(&args, "verbosity")
                .and_then(Verbosity::parse)
                .unwrap_or(Verbosity::Summary),
        ),
        None => Selection::Verbosity(verbosity),
    };
    let page_no = whole(&args, "page").unwrap_or(1);
    let page_size = whole(&args, "page_size").unwrap_or(DEFAULT_PAGE_SIZE);
    let unmatched = crate::handles::unmatched::unmatched_fields(&stored.data, &selection);
    let shaped;
    let data = if selection == Selection::Verbosity(Verbosity::Raw) {
        stored.data.as_ref()
    } else {
        let mut copy = (*stored.data).clone();
        shape(&mut copy, &selection);
        shaped = copy;
        &shaped
    };
    let Some(p) = page::page(data, page_no, page_size, PAGE_BUDGET) else {
        let total = page::page(data, 1, page_size, PAGE_BUDGET).map_or(1, |p| p.total_pages);
        return Err(bad_page(page_no, total));
    };
    let mut metadata = stored.meta.to_json(now);
    metadata["verbosity"] = json!(match &selection {
        Selection::Fields { .. } => "fields",
        Selection::Verbosity(v) => v.as_str(),
    });
    if let Some(report) = unmatched {
        metadata[crate::handles::UNMATCHED_KEY] = report;
    }
    Ok(json!({
        "handle": handle,
        "data": p.data,
        "page_info": {
            "has_more": p.page < p.total_pages,
            "total": p.total_rows,
            "current_page": p.page,
            "total_pages": p.total_pages,
            "rows": [p.rows.start, p.rows.end],
            "cut": p.cut,
        },
        "metadata": metadata,
        "timestamp": env.timestamp(),
    }))
}

async fn list(env: Env, args: Value) -> Result<Value, ToolError> {
    let now = env.now();
    let store = env.handle_store();
    store.cleanup(now).await?;
    let mut all = store.list(now).await?;
    // A caller sees its own handles only (the operator and the console, all); an MCP
    // session sees, by default, those it made itself.
    let ctx = crate::context::CallContext::current();
    all.retain(|m| ctx.sees(m.owner.as_deref()));
    let mine = match opt_str(&args, "scope") {
        Some("all") => None,
        _ => ctx.handles(),
    };
    if let Some(mine) = &mine {
        all.retain(|m| mine.contains(&m.handle));
    }
    let shown: Vec<Value> = all.iter().take(LIST_MAX).map(|m| m.to_json(now)).collect();
    Ok(json!({
        "handles": shown,
        "total": all.len(),
        "store": store.name(),
        "scope": if mine.is_some() { "this client" } else { "all" },
        "ttl_secs": env.handle_config().ttl_secs,
        "timestamp": env.timestamp(),
    }))
}
