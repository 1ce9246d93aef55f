//! Answers about what an agent works with beside the game: the docs, plans and
//! workflows, stored results, subscriptions.

use serde_json::{Value, json};

use super::*;

// ------------------------------------------------------------------------- docs

/// A doc's card: what search hits, index entries and related docs show.
fn card(more: Value) -> Value {
    let mut props = json!({
        "doc_id": about(string(), "Read it with structs_docs_get."),
        "title": string(),
        "summary": string(),
        "type": string(),
        "tags": array(string()),
    });
    if let (Some(p), Value::Object(more)) = (props.as_object_mut(), more) {
        p.extend(more);
    }
    object(&["doc_id", "title", "summary", "type", "tags"], props)
}

/// A doc reached through a link.
fn related_doc() -> Value {
    let mut c = card(json!({
        "relation": string(),
        "direction": one_of(&["out", "in"]),
        "origin": one_of(&["explicit", "inferred"]),
        "depth": count(),
        "via": string(),
    }));
    c["required"] = json!(["doc_id", "title", "relation", "direction", "origin"]);
    c
}

/// Where a link starts.
fn link_source() -> Value {
    object(
        &["kind", "id", "label"],
        json!({"kind": one_of(&["doc", "entity", "entity_kind", "struct_type"]),
               "id": string(), "label": string()}),
    )
}

fn warning() -> Value {
    object(
        &["kind", "message"],
        json!({"kind": string(), "file": string(), "message": string()}),
    )
}

/// `structs_docs_search`.
pub fn docs_search() -> Value {
    answer(
        &["query", "count", "hits", "docs_indexed"],
        json!({
            "query": string(),
            "count": count(),
            "hits": about(array(card(json!({"uri": string(), "score": number(),
                "snippet": about(string(), "The matched words in **bold**.")}))), "Best first."),
            "docs_indexed": count(),
            "hint": about(string(), "What to try when nothing matched."),
        }),
    )
}

/// `structs_docs_get`.
pub fn docs_get() -> Value {
    let link = object(
        &["doc_id", "relation", "origin", "exists"],
        json!({"doc_id": string(), "title": nullable(string()), "relation": string(),
               "origin": string(), "exists": boolean()}),
    );
    let mut props = json!({
        "uri": string(),
        "type_inferred": boolean(),
        "path": string(),
        "bytes": count(),
        "est_tokens": count(),
        "content": about(string(), "Markdown, from content_range.offset."),
        "content_range": object(&["offset", "end", "total_chars", "next_offset"], json!({
            "offset": count(), "end": count(), "total_chars": count(),
            "next_offset": about(nullable(count()), "The offset to read on from; null at the end.")})),
        "links": object(&["out", "in", "out_total", "in_total"], json!({
            "out": array(link.clone()), "in": array(link), "out_total": count(), "in_total": count()})),
        "informs": about(array(json!({"type": "object"})), "The entities, kinds and struct types it informs."),
        "related": array(related_doc()),
        "related_truncated": boolean(),
        "warnings": array(warning()),
    });
    let c = card(json!({}));
    if let (Some(p), Some(card_props)) = (props.as_object_mut(), c["properties"].as_object()) {
        p.extend(card_props.clone());
    }
    answer(
        &[
            "doc_id",
            "title",
            "summary",
            "type",
            "tags",
            "uri",
            "path",
            "bytes",
            "content",
            "content_range",
            "links",
            "informs",
        ],
        props,
    )
}

/// `structs_docs_get_related`.
pub fn docs_related() -> Value {
    answer(
        &[
            "doc_id",
            "uri",
            "depth",
            "direction",
            "count",
            "related",
            "truncated",
        ],
        json!({
            "doc_id": string(),
            "uri": string(),
            "depth": count(),
            "direction": one_of(&["out", "in", "both"]),
            "count": count(),
            "related": array(related_doc()),
            "truncated": boolean(),
        }),
    )
}

/// `structs_docs_get_index`: every category, or one category's docs.
pub fn docs_index() -> Value {
    let mut a = answer(
        &[],
        json!({
            "root": string(),
            "total_docs": count(),
            "categories": array(object(&["category", "count", "doc_ids"], json!({
                "category": string(), "count": count(), "doc_ids": array(string())}))),
            "category": string(),
            "count": count(),
            "docs": array(card(json!({}))),
        }),
    );
    a["anyOf"] = json!([
        {"required": ["root", "total_docs", "categories"]},
        {"required": ["category", "count", "docs"]}
    ]);
    a
}

/// `structs_docs_loading_strategy`.
pub fn docs_loading_strategy() -> Value {
    let entry = object(
        &["doc_id", "title", "reason", "est_tokens"],
        json!({"doc_id": string(), "title": string(), "reason": string(),
               "est_tokens": count(), "score": nullable(number()), "order": count()}),
    );
    answer(
        &[
            "task",
            "budget_tokens",
            "total_est_tokens",
            "load",
            "deferred",
            "note",
        ],
        json!({
            "task": string(),
            "budget_tokens": count(),
            "total_est_tokens": count(),
            "load": about(array(entry.clone()), "The docs to read, in order."),
            "deferred": about(array(entry), "What did not fit the budget."),
            "note": string(),
        }),
    )
}

/// `structs_docs_list_references`.
pub fn docs_list_references() -> Value {
    let reference = object(
        &["target_doc_id", "relation", "origin", "target_exists"],
        json!({"target_doc_id": string(), "title": nullable(string()), "relation": string(),
               "origin": string(), "declared_in": nullable(string()), "target_exists": boolean(),
               "via": string()}),
    );
    answer(
        &["source", "count", "references"],
        json!({"source": link_source(), "count": count(), "references": array(reference)}),
    )
}

/// One link written.
fn upserted() -> Value {
    object(
        &["target_doc_id", "relation", "outcome"],
        json!({"target_doc_id": string(), "relation": string(),
               "outcome": one_of(&["created", "updated", "unchanged"]),
               "previous_relation": string(), "previous_origin": string()}),
    )
}

/// `structs_docs_upsert_link`.
pub fn docs_upsert_link() -> Value {
    answer(
        &["source", "link", "written_to", "origin"],
        json!({
            "source": link_source(),
            "link": upserted(),
            "written_to": about(string(), "The file the link was written to."),
            "origin": {"const": "explicit"},
        }),
    )
}

/// `structs_docs_suggest_references`.
pub fn docs_suggest_references() -> Value {
    let candidate = object(
        &["doc_id", "title", "score", "attribution"],
        json!({"doc_id": string(), "title": string(),
               "score": about(count(), "How many related things link to it."),
               "attribution": array(json!({"type": "object"}))}),
    );
    answer(
        &[
            "source",
            "mode",
            "related",
            "min_score",
            "candidate_count",
            "candidates",
        ],
        json!({
            "source": link_source(),
            "mode": one_of(&["preview", "apply"]),
            "related": array(string()),
            "min_score": count(),
            "candidate_count": count(),
            "candidates": array(candidate),
            "applied": about(array(upserted()), "apply: the links written."),
            "not_applied": array(object(&["doc_id", "reason"], json!({"doc_id": string(), "reason": string()}))),
            "written_to": string(),
        }),
    )
}

/// `structs_docs_sync`.
pub fn docs_sync() -> Value {
    let mut props = json!({
        "root": string(),
        "docs": count(),
        "explicit_links": count(),
        "inferred_links": count(),
        "links_before": count(),
        "sidecars": count(),
        "warnings": array(warning()),
        "warnings_total": count(),
        "build_ms": number(),
    });
    for list in ["added", "removed", "changed"] {
        props[list] = array(string());
        props[format!("{list}_total")] = count();
    }
    answer_all(props)
}

// ------------------------------------------------------------ plans, workflows

/// A step of a plan run, as the report gives it.
fn step_report() -> Value {
    object(
        &[
            "step_index",
            "tool",
            "status",
            "params",
            "resolved_params",
            "success",
            "attempts",
            "started_ms",
            "duration_ms",
        ],
        json!({
            "step_index": count(),
            "id": string(),
            "tool": string(),
            "status": step_status(),
            "params": {"type": "object"},
            "resolved_params": nullable(json!({"type": "object"})),
            "substitutions": array(json!({"type": "object"})),
            "success": boolean(),
            "data": about(json!({}), "The tool's answer."),
            "error": about(json!({"type": "object"}), "The tool's error (its error object's inside)."),
            "skipped_reason": string(),
            "optional": boolean(),
            "attempts": count(),
            "attempt_errors": array(json!({})),
            "started_ms": nullable(number()),
            "duration_ms": nullable(number()),
            "progress": {"type": "object"},
        }),
    )
}

fn step_status() -> Value {
    one_of(&["pending", "running", "succeeded", "failed", "skipped"])
}

/// A plan run's report.
fn report() -> Value {
    let totals = [
        "steps",
        "succeeded",
        "failed",
        "optional_failed",
        "skipped",
        "pending",
        "running",
        "reference_errors",
        "attempts",
        "peak_parallel",
        "max_parallel",
    ];
    let mut props = json!({"duration_ms": number(), "critical_path_ms": number()});
    for k in totals {
        props[k] = count();
    }
    object(
        &["success", "steps", "totals"],
        json!({
            "success": about(boolean(), "Every step that is not optional succeeded."),
            "steps": array(step_report()),
            "totals": object(&totals, props),
        }),
    )
}

/// `structs_plan_execute`.
pub fn plan_execute() -> Value {
    let mut r = report();
    r["additionalProperties"] = json!(false);
    r
}

/// `structs_plan_validate`.
pub fn plan_validate() -> Value {
    let problem = object(
        &["kind", "message"],
        json!({"kind": string(), "step": count(), "step_id": string(), "param": string(),
               "message": string(), "available": array(string())}),
    );
    let step = object(
        &["step_index", "tool", "depends_on", "level"],
        json!({"step_index": count(), "id": nullable(string()), "tool": string(),
               "depends_on": about(array(count()), "The steps it waits for, by index."),
               "reads": array(json!({})), "after": array(json!({})),
               "references": array(json!({"type": "object"})), "optional": boolean(),
               "level": about(count(), "Steps of one level may run at once.")}),
    );
    let mut a = answer(
        &["valid", "problems"],
        json!({
            "valid": boolean(),
            "problems": array(problem),
            "outline": about(object(&["steps", "levels", "max_parallel"], json!({
                "steps": array(step), "levels": count(), "max_parallel": count()})),
                "A valid plan: each step's dependencies and level."),
        }),
    );
    a["anyOf"] = json!([
        {"required": ["outline"], "properties": {"valid": {"const": true}}},
        {"properties": {"valid": {"const": false}}}
    ]);
    a
}

/// `structs_workflow_list`.
pub fn workflow_list() -> Value {
    let workflow = object(
        &[
            "name",
            "description",
            "inputs",
            "uses_proof_of_work",
            "steps",
        ],
        json!({"name": string(), "description": string(),
               "inputs": about(json!({"type": "object"}), "Each input by name: description, required, default, example."),
               "uses_proof_of_work": boolean(),
               "steps": array(object(&["id", "tool"], json!({"id": nullable(string()), "tool": string(),
                   "description": nullable(string())})))}),
    );
    answer(
        &["workflows", "runs"],
        json!({
            "workflows": array(workflow),
            "runs": array(object(&["workflow_id", "workflow", "status"], json!({
                "workflow_id": string(), "workflow": string(), "status": run_status()}))),
        }),
    )
}

fn run_status() -> Value {
    one_of(&["running", "succeeded", "failed", "cancelled"])
}

fn workflow_id() -> Value {
    json!({"type": "string", "pattern": "^wf_[0-9]+$"})
}

/// `structs_workflow_execute`.
pub fn workflow_execute() -> Value {
    answer(
        &[
            "workflow_id",
            "workflow",
            "status",
            "inputs",
            "steps",
            "uses_proof_of_work",
            "monitor",
            "started_at",
        ],
        json!({
            "workflow_id": about(workflow_id(), "Follow it with structs_workflow_monitor."),
            "workflow": string(),
            "status": {"const": "running"},
            "inputs": {"type": "object"},
            "steps": count(),
            "uses_proof_of_work": boolean(),
            "monitor": object(&["tool", "arguments"], json!({"tool": string(), "arguments": {"type": "object"}})),
            "started_at": timestamp(),
        }),
    )
}

/// `structs_workflow_monitor`.
pub fn workflow_monitor() -> Value {
    let step = object(
        &["step_index", "tool", "status", "attempts"],
        json!({"step_index": count(), "id": nullable(string()), "tool": string(),
               "status": step_status(), "attempts": count(), "duration_ms": count(),
               "error": object(&["code", "message"], json!({})), "skipped_reason": string(),
               "progress": {"type": "object"}}),
    );
    let progress = [
        "steps_done",
        "steps_total",
        "percent",
        "succeeded",
        "failed",
        "skipped",
        "running",
    ];
    let mut progress_props =
        json!({"percent": json!({"type": "number", "minimum": 0, "maximum": 100})});
    for k in progress.iter().filter(|k| **k != "percent") {
        progress_props[*k] = count();
    }
    answer(
        &[
            "workflow_id",
            "workflow",
            "inputs",
            "status",
            "progress",
            "current",
            "steps",
            "started_at",
            "ended_at",
            "elapsed_ms",
        ],
        json!({
            "workflow_id": workflow_id(),
            "workflow": string(),
            "inputs": {"type": "object"},
            "status": run_status(),
            "progress": object(&progress, progress_props),
            "current": about(array(object(&["step_index", "tool"], json!({}))), "The steps running now."),
            "steps": array(step),
            "started_at": timestamp(),
            "ended_at": nullable(timestamp()),
            "elapsed_ms": count(),
            "report": about(report(), "Once the run ended (include_results): the plan's whole report."),
        }),
    )
}

/// `structs_workflow_cancel`.
pub fn workflow_cancel() -> Value {
    answer(
        &["workflow_id", "was", "cancelled"],
        json!({
            "workflow_id": workflow_id(),
            "was": about(run_status(), "The run's status when asked."),
            "cancelled": about(boolean(), "It was running and is being stopped."),
        }),
    )
}

// ------------------------------------------------------ handles, subscriptions

fn handle() -> Value {
    json!({"type": "string", "pattern": handles::HANDLE_PATTERN})
}

/// A stored result's facts.
fn handle_meta() -> Value {
    object(
        &[
            "handle",
            "tool_name",
            "size_bytes",
            "rows",
            "created",
            "expires",
        ],
        json!({"handle": handle(), "tool_name": string(), "size_bytes": count(), "rows": count(),
               "created": timestamp(), "expires": timestamp(), "age_sec": count(),
               "expires_in_sec": count(), "hits": count(), "verbosity": string(),
               "fields_unmatched": crate::handles::unmatched::unmatched_schema()}),
    )
}

/// `structs_handle_fetch`.
pub fn handle_fetch() -> Value {
    answer(
        &["handle", "data", "page_info", "metadata", "timestamp"],
        json!({
            "handle": handle(),
            "data": about(json!({"type": "object"}), "This page of the stored result, in its shape."),
            "page_info": object(&["has_more", "total", "current_page", "total_pages", "rows"], json!({
                "has_more": boolean(), "total": count(), "current_page": count(),
                "total_pages": count(),
                "rows": about(array(count()), "The rows on this page: [start, end)."),
                "cut": boolean()})),
            "metadata": handle_meta(),
            "timestamp": timestamp(),
        }),
    )
}

/// `structs_handle_list`.
pub fn handle_list() -> Value {
    answer(
        &[
            "handles",
            "total",
            "store",
            "scope",
            "ttl_secs",
            "timestamp",
        ],
        json!({
            "handles": about(array(handle_meta()), "Newest first."),
            "total": count(),
            "store": string(),
            "scope": one_of(&["this client", "all"]),
            "ttl_secs": count(),
            "timestamp": timestamp(),
        }),
    )
}

/// `structs_task_list`.
pub fn task_list() -> Value {
    let task = object(
        &[
            "task_id",
            "tool",
            "status",
            "status_message",
            "created_at",
            "last_updated_at",
            "ttl_ms",
            "outcome",
            "tool_error",
            "server",
        ],
        json!({
            "task_id": string(),
            "tool": string(),
            "status": one_of(&["working", "input_required", "completed", "failed", "cancelled", "unknown"]),
            "status_message": nullable(string()),
            "created_at": timestamp(),
            "last_updated_at": timestamp(),
            "ttl_ms": nullable(count()),
            "outcome": about(nullable(string()), "How it ended, in one line; null while it runs."),
            "tool_error": about(boolean(), "It completed with the tool's error result (isError)."),
            "server": about(nullable(string()), "The server process that runs or ran it (host:pid)."),
            "owner": about(nullable(string()), "The caller whose call made it (caller:NAME, key:DIGEST, anonymous, local); null for the console's own."),
        }),
    );
    answer(
        &["tasks", "total", "store", "ttl_secs", "timestamp"],
        json!({
            "tasks": about(array(task), "Newest first."),
            "total": about(count(), "How many tasks matched, shown or not."),
            "store": string(),
            "ttl_secs": count(),
            "timestamp": timestamp(),
        }),
    )
}

/// `structs_task_cancel`.
pub fn task_cancel() -> Value {
    answer(
        &["task_id", "asked", "status", "timestamp"],
        json!({
            "task_id": string(),
            "asked": about(boolean(), "Whether the task was asked to stop; false when it had already ended."),
            "status": one_of(&["working", "completed", "failed", "cancelled"]),
            "timestamp": timestamp(),
        }),
    )
}

fn subscription_id() -> Value {
    json!({"type": "string", "pattern": "^sub_[0-9]+$"})
}

fn subscription_props() -> Value {
    json!({
        "subscription_id": subscription_id(),
        "entity_type": string(),
        "entity_id": entity_id(None),
        "resource_uri": about(string(), "Updates arrive as notifications/resources/updated for it."),
        "created_at": timestamp(),
        "via": one_of(&["tool", "resource"]),
    })
}

const SUBSCRIPTION: [&str; 6] = [
    "subscription_id",
    "entity_type",
    "entity_id",
    "resource_uri",
    "created_at",
    "via",
];

/// `structs_subscription_subscribe`.
pub fn subscribe() -> Value {
    let mut props = subscription_props();
    props["status"] = json!({"const": "active"});
    props["message"] = string();
    let mut required = SUBSCRIPTION.to_vec();
    required.extend(["status", "message"]);
    answer(&required, props)
}

/// `structs_subscription_unsubscribe`.
pub fn unsubscribe() -> Value {
    answer(
        &["subscription_id", "entity_id", "status", "message"],
        json!({
            "subscription_id": subscription_id(),
            "entity_id": entity_id(None),
            "status": {"const": "unsubscribed"},
            "message": string(),
        }),
    )
}

/// `structs_subscription_list`.
pub fn subscriptions() -> Value {
    answer(
        &["subscriptions", "total", "limit"],
        json!({
            "subscriptions": array(object(&SUBSCRIPTION, subscription_props())),
            "total": count(),
            "limit": about(count(), "The most one client may hold."),
        }),
    )
}
