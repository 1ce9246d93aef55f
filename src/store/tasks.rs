//! Tasks' records, as the handle store keeps them.
//!
//! The MCP server runs long calls as tasks (the Tasks extension, in
//! `mcp::server::tasks`) and keeps each as a record beside the result handles: the
//! task as `tasks/get` answers it (`taskId`, `status`, `statusMessage`, `createdAt`,
//! `lastUpdatedAt`, `ttlMs`, `pollIntervalMs`, and `result` or `error` once it ends)
//! plus the `tool` it runs, the `server` running it ([`this_server`]) and the `owner`
//! whose call made it ([`crate::context::caller`]; a caller lists and stops its own). Every server and console sharing the store reads the same
//! records, so this module is where their shape, their keys and the rules for reading
//! them live: the catalog's task tools read them here, and the server writes them.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::HandleStore;
use crate::context::Principal;
use crate::error::{ErrorCode, ToolError};

/// Whether `who` may list, read or stop the task of `record`: its owner, the operator,
/// or (`None`) the console itself.
pub fn visible(record: &Value, who: Option<&Principal>) -> bool {
    who.is_none_or(|p| p.owns(record["owner"].as_str()))
}

/// How long a task is kept from its creation (its `ttlMs`): its result can be fetched
/// until then.
pub const TTL: Duration = Duration::from_secs(600);

/// A `working` record not rewritten for this long belongs to a server that stopped.
pub const STALE_AFTER: Duration = Duration::from_secs(15);

/// Where tasks' records start in the store: `task:{id}`, and `task:{id}:cancel` for
/// the flag asking one to stop.
pub const PREFIX: &str = "task:";
const CANCEL_SUFFIX: &str = ":cancel";

/// Most tasks one listing reads.
pub const LIST_MAX: usize = 100;

/// The key of task `id`'s record.
pub fn key(id: &str) -> String {
    format!("{PREFIX}{id}")
}

/// Where the index of each owner's tasks starts: `task-owner:{owner}:{id}`, so that a
/// caller's listing reads its own tasks, however many other callers have.
const OWNER_PREFIX: &str = "task-owner:";

/// The key that lists task `id` under its `owner`.
pub fn owner_key(owner: &str, id: &str) -> String {
    format!("{OWNER_PREFIX}{owner}:{id}")
}

/// Where an answer to a question of task `id` waits for the server running it:
/// `task:{id}:input:{key}`.
const INPUT_INFIX: &str = ":input:";

/// The key of the answer to task `id`'s question `question`, given on another server.
pub fn input_key(id: &str, question: &str) -> String {
    format!("{PREFIX}{id}{INPUT_INFIX}{question}")
}

/// The key of the flag asking task `id` to stop, read by the server running it.
pub fn cancel_key(id: &str) -> String {
    format!("{PREFIX}{id}{CANCEL_SUFFIX}")
}

/// Whether a record still says `working` though its server has not rewritten it for
/// over [`STALE_AFTER`]: that server stopped, and the task will never end.
pub fn went_quiet(record: &Value, now: DateTime<Utc>) -> bool {
    if record["status"] != "working" && record["status"] != "input_required" {
        return false;
    }
    let beat = record["lastUpdatedAt"]
        .as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok());
    beat.is_none_or(|t| (now - t.with_timezone(&Utc)).to_std().unwrap_or_default() > STALE_AFTER)
}

/// This process as a task record names the server running it: `host:pid`.
pub fn this_server() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".to_string());
        format!("{host}:{}", std::process::id())
    })
}

/// What a stopped server's task is said to have ended with; `server` as its record
/// names it (empty for a record that does not).
pub fn quiet_message(server: &str) -> String {
    let which = if server.is_empty() {
        String::new()
    } else {
        format!(" ({server})")
    };
    format!(
        "the server running this task{which} stopped: no word from it for over {} s",
        STALE_AFTER.as_secs()
    )
}

/// One task as a listing shows it: its fields, its tool, and one line on how it ended.
pub fn summary(record: &Value, now: DateTime<Utc>) -> Value {
    let quiet = went_quiet(record, now);
    let status = if quiet {
        "failed"
    } else {
        record["status"].as_str().unwrap_or("unknown")
    };
    let message = if quiet {
        Some(quiet_message(record["server"].as_str().unwrap_or_default()))
    } else {
        record["statusMessage"].as_str().map(str::to_string)
    };
    json!({
        "task_id": record["taskId"],
        "tool": record["tool"],
        "status": status,
        "status_message": message,
        "created_at": record["createdAt"],
        "last_updated_at": record["lastUpdatedAt"],
        "ttl_ms": record["ttlMs"],
        "outcome": outcome(record, quiet),
        // A tool's refusal completes its task: the result says so.
        "tool_error": !quiet && record["status"] == "completed" && record["result"]["isError"] == true,
        "server": record["server"],
        "owner": record["owner"],
    })
}

/// How a task ended, in one line: a proof's nonce and hash, a run's status and step
/// count, a tool error's message, a protocol error's; nothing while it runs.
fn outcome(record: &Value, quiet: bool) -> Value {
    if quiet {
        return json!("the server running it stopped");
    }
    match record["status"].as_str() {
        Some("failed") => json!(format!(
            "error {}: {}",
            record["error"]["code"],
            record["error"]["message"].as_str().unwrap_or("")
        )),
        Some("cancelled") => json!("cancelled before it ended"),
        Some("completed") => {
            let result = &record["result"];
            if result["isError"] == true {
                let text = result["content"][0]["text"].as_str().unwrap_or("");
                let parsed: Value = serde_json::from_str(text).unwrap_or(Value::Null);
                let error = match &result["structuredContent"] {
                    Value::Null => &parsed,
                    structured => structured,
                };
                let said = error["error"]["message"].as_str().unwrap_or(text);
                return json!(format!("tool error: {}", first_line(said)));
            }
            let data = &result["structuredContent"];
            let data = if data.is_null() { result } else { data };
            json!(answer_line(data))
        }
        _ => Value::Null,
    }
}

/// One line for a completed answer.
fn answer_line(data: &Value) -> String {
    if let Some(nonce) = data.get("nonce").filter(|n| !n.is_null()) {
        let nonce = nonce
            .as_str()
            .map_or_else(|| nonce.to_string(), str::to_string);
        return match data["hash"].as_str() {
            Some(hash) => format!("proof found: nonce {nonce}, hash {hash}"),
            None => format!("nonce {nonce}"),
        };
    }
    if data.get("valid") == Some(&json!(false)) {
        return "no proof found in the iterations given".into();
    }
    if let Some(steps) = data["steps"].as_array() {
        let status = data["status"].as_str().unwrap_or("ended");
        let n = steps.len();
        return format!("{status}: {n} step{}", if n == 1 { "" } else { "s" });
    }
    if let Some(status) = data["status"].as_str() {
        return status.to_string();
    }
    match data.as_object() {
        Some(map) if !map.is_empty() => format!(
            "answered: {}",
            map.keys().take(6).cloned().collect::<Vec<_>>().join(", ")
        ),
        _ => "answered".into(),
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut cut: String = line.chars().take(160).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    cut
}

/// Reads the tasks in `store` that `who` may see ([`visible`]), newest first: the
/// records of the tools named in `tools` (every tool when empty), at most `limit`.
/// Answers the shown summaries and how many matched in all.
///
/// # Errors
///
/// The store's, when it cannot be read.
pub async fn list(
    store: &dyn HandleStore,
    tools: &[String],
    limit: usize,
    now: DateTime<Utc>,
    who: Option<&Principal>,
) -> Result<(Vec<Value>, usize), ToolError> {
    let records = match who {
        // A caller reads its own, through the index of its tasks.
        Some(p) if !p.is_operator() => {
            let mine = format!("{OWNER_PREFIX}{}:", p.id());
            let mut records = Vec::new();
            for (index, _) in store.list_records(&mine, LIST_MAX * 2).await? {
                let id = &index[mine.len()..];
                if let Some(record) = store.get_record(&key(id)).await? {
                    records.push((key(id), record));
                }
            }
            records
        }
        // Each task may have a cancel flag beside its record.
        _ => store.list_records(PREFIX, LIST_MAX * 2).await?,
    };
    let mut found: Vec<Value> = records
        .into_iter()
        .filter(|(key, _)| !key.ends_with(CANCEL_SUFFIX) && !key.contains(INPUT_INFIX))
        .map(|(_, record)| record)
        .filter(|r| r["taskId"].is_string())
        .filter(|r| visible(r, who))
        .filter(|r| tools.is_empty() || tools.iter().any(|t| r["tool"] == t.as_str()))
        .collect();
    found.sort_by(|a, b| {
        b["createdAt"]
            .as_str()
            .cmp(&a["createdAt"].as_str())
            .then_with(|| a["taskId"].as_str().cmp(&b["taskId"].as_str()))
    });
    let total = found.len();
    let shown = found.iter().take(limit).map(|r| summary(r, now)).collect();
    Ok((shown, total))
}

/// What asking a task to stop did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancel {
    /// The flag is set; the server running it stops it within a heartbeat.
    Asked,
    /// It had already ended (with this status); nothing was changed.
    Ended(&'static str),
}

/// Asks task `id` to stop, through the flag the server running it reads.
///
/// # Errors
///
/// `RESOURCE_NOT_FOUND` for a task the store does not hold, or that is not `who`'s
/// ([`visible`]: another caller's task is not there for it); the store's own error
/// when it cannot be read or written.
pub async fn ask_cancel(
    store: &dyn HandleStore,
    id: &str,
    now: DateTime<Utc>,
    who: Option<&Principal>,
) -> Result<Cancel, ToolError> {
    let record = store
        .get_record(&key(id))
        .await?
        .filter(|r| visible(r, who));
    let Some(record) = record else {
        return Err(ToolError::new(
            ErrorCode::ResourceNotFound,
            format!(
                "no task {id:?} in the {} store: it was never made, or it is past its {} s",
                store.name(),
                TTL.as_secs()
            ),
        )
        .with_extra("task_id", json!(id)));
    };
    if went_quiet(&record, now) {
        return Ok(Cancel::Ended("failed"));
    }
    if let Some(status) = ["completed", "failed", "cancelled"]
        .into_iter()
        .find(|s| record["status"] == *s)
    {
        return Ok(Cancel::Ended(status));
    }
    store.put_record(&cancel_key(id), json!(true), TTL).await?;
    Ok(Cancel::Asked)
}

/// Whether task `id` has been asked to stop.
pub async fn cancel_asked(store: &dyn HandleStore, id: &str) -> bool {
    matches!(store.get_record(&cancel_key(id)).await, Ok(Some(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    fn record(id: &str, tool: &str, status: &str, at: &str) -> Value {
        json!({"taskId": id, "tool": tool, "status": status, "createdAt": at,
               "lastUpdatedAt": at, "ttlMs": 600000, "owner": "caller:alice"})
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_working_record_gone_quiet_reads_as_failed() {
        let r = record("a", "t", "working", "2026-11-28T10:00:00Z");
        assert!(!went_quiet(&r, at("2026-11-28T10:00:10Z")));
        assert!(went_quiet(&r, at("2026-11-28T10:00:16Z")));
        let s = summary(&r, at("2026-11-28T10:00:16Z"));
        assert_eq!(s["status"], "failed");
        assert!(s["status_message"].as_str().unwrap().contains("stopped"));
        let done = record("b", "t", "completed", "2026-11-28T10:00:00Z");
        assert!(!went_quiet(&done, at("2026-11-28T11:00:00Z")));
    }

    #[test]
    fn outcomes_say_how_a_task_ended_in_one_line() {
        let mut pow = record("a", "pow", "completed", "2026-11-28T10:00:00Z");
        pow["result"] = json!({"structuredContent": {"nonce": "11578", "hash": "0000d9"}});
        assert_eq!(
            outcome(&pow, false),
            json!("proof found: nonce 11578, hash 0000d9")
        );
        let mut run = record("b", "plan", "completed", "2026-11-28T10:00:00Z");
        run["result"] =
            json!({"structuredContent": {"status": "succeeded", "steps": [{}, {}, {}]}});
        assert_eq!(outcome(&run, false), json!("succeeded: 3 steps"));
        let mut refused = record("c", "plan", "completed", "2026-11-28T10:00:00Z");
        refused["result"] = json!({"isError": true, "content": [{"type": "text",
            "text": "{\"error\":{\"code\":\"VALIDATION_FAILED\",\"message\":\"no plan\"}}"}]});
        assert_eq!(outcome(&refused, false), json!("tool error: no plan"));
        refused["result"]["structuredContent"] =
            json!({"error": {"code": "TOOL_CANCELLED", "message": "stopped\nat once"}});
        assert_eq!(outcome(&refused, false), json!("tool error: stopped"));
        let now = at("2026-11-28T10:00:01Z");
        assert_eq!(summary(&refused, now)["tool_error"], true);
        assert_eq!(summary(&run, now)["tool_error"], false);
        let mut failed = record("d", "plan", "failed", "2026-11-28T10:00:00Z");
        failed["error"] = json!({"code": -32603, "message": "boom"});
        assert_eq!(outcome(&failed, false), json!("error -32603: boom"));
        let working = record("e", "plan", "working", "2026-11-28T10:00:00Z");
        assert_eq!(outcome(&working, false), Value::Null);
    }

    #[tokio::test]
    async fn a_listing_filters_by_tool_and_shows_the_newest_first() {
        let store = MemoryStore::default();
        let ttl = Duration::from_secs(60);
        for (id, tool, t) in [
            ("a", "pow", "2026-11-28T10:00:01Z"),
            ("b", "plan", "2026-11-28T10:00:02Z"),
            ("c", "pow", "2026-11-28T10:00:03Z"),
        ] {
            store
                .put_record(&key(id), record(id, tool, "working", t), ttl)
                .await
                .unwrap();
        }
        store
            .put_record(&cancel_key("a"), json!(true), ttl)
            .await
            .unwrap();
        let now = at("2026-11-28T10:00:04Z");
        for id in ["a", "b", "c"] {
            store
                .put_record(&owner_key("caller:alice", id), json!(true), ttl)
                .await
                .unwrap();
        }
        // Another caller's many tasks do not crowd hers out of her listing.
        for i in 0..(LIST_MAX * 3) {
            let id = format!("other{i}");
            let mut r = record(&id, "pow", "working", "2026-11-28T10:00:00Z");
            r["owner"] = json!("caller:bob");
            store.put_record(&key(&id), r, ttl).await.unwrap();
            store
                .put_record(&owner_key("caller:bob", &id), json!(true), ttl)
                .await
                .unwrap();
        }
        let alice = Principal::named("alice");
        let (mine, total) = list(&store, &[], 10, at("2026-11-28T10:00:04Z"), Some(&alice))
            .await
            .unwrap();
        assert_eq!((mine.len(), total), (3, 3));
        for i in 0..(LIST_MAX * 3) {
            let id = format!("other{i}");
            store
                .put_record(&key(&id), json!(null), Duration::from_millis(1))
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        let (all, total) = list(&store, &[], 10, now, None).await.unwrap();
        let ids: Vec<&str> = all.iter().map(|t| t["task_id"].as_str().unwrap()).collect();
        assert_eq!((ids, total), (vec!["c", "b", "a"], 3));
        assert_eq!(all[0]["owner"], "caller:alice");
        // Their owner lists them, and the operator; another caller, none.
        let alice = Principal::named("alice");
        let operator = Principal::operator();
        let bob = Principal::named("bob");
        assert_eq!(list(&store, &[], 10, now, Some(&alice)).await.unwrap().1, 3);
        assert_eq!(
            list(&store, &[], 10, now, Some(&operator)).await.unwrap().1,
            3
        );
        assert_eq!(list(&store, &[], 10, now, Some(&bob)).await.unwrap().1, 0);
        let (pow, total) = list(&store, &["pow".to_string()], 1, now, None)
            .await
            .unwrap();
        assert_eq!((pow.len(), total), (1, 2));
        assert_eq!(pow[0]["task_id"], "c");
    }

    #[tokio::test]
    async fn cancelling_sets_the_flag_once_and_leaves_ended_tasks_alone() {
        let store = MemoryStore::default();
        let ttl = Duration::from_secs(60);
        let t = "2026-11-28T10:00:00Z";
        store
            .put_record(&key("w"), record("w", "pow", "working", t), ttl)
            .await
            .unwrap();
        store
            .put_record(&key("d"), record("d", "pow", "completed", t), ttl)
            .await
            .unwrap();
        let now = at("2026-11-28T10:00:05Z");
        assert!(!cancel_asked(&store, "w").await);
        // Another caller's task is not there for this one; the owner's is.
        let bob = Principal::named("bob");
        let missing = ask_cancel(&store, "w", now, Some(&bob)).await.unwrap_err();
        assert_eq!(missing.code, ErrorCode::ResourceNotFound);
        assert!(!cancel_asked(&store, "w").await);
        let alice = Principal::named("alice");
        assert_eq!(
            ask_cancel(&store, "w", now, Some(&alice)).await.unwrap(),
            Cancel::Asked
        );
        assert!(cancel_asked(&store, "w").await);
        assert_eq!(
            ask_cancel(&store, "d", now, None).await.unwrap(),
            Cancel::Ended("completed")
        );
        assert!(!cancel_asked(&store, "d").await);
        let missing = ask_cancel(&store, "zz", now, None).await.unwrap_err();
        assert_eq!(missing.code, ErrorCode::ResourceNotFound);
    }
}
