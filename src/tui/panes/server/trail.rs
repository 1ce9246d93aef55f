//! A call's trail as the Server tab shows it: each round of input the server asked
//! for and what was answered, each status of the task the server ran the call as, and
//! an answer taken from the cache. The events are the ones the client reports
//! ([`crate::mcp::client::rounds`], [`crate::mcp::client::tasks`]); each becomes one
//! line here, and the History marks a call by its last.

use serde_json::Value;

use crate::tui::theme::Role;

/// One line per event of the trail, oldest first.
pub(super) fn trail_lines(trail: &[Value]) -> Vec<(Role, String)> {
    let mut out = Vec::new();
    for event in trail {
        if let Some(round) = event.get("input_required") {
            let number = round["round"].as_u64().unwrap_or(0);
            for (key, request) in round["inputRequests"].as_object().into_iter().flatten() {
                let answer = &round["inputResponses"][key];
                out.push((
                    Role::Info,
                    format!(
                        "round {number} · asked {} · answered {}",
                        asked(request),
                        answered(request, answer)
                    ),
                ));
            }
        } else if let Some(task) = event.get("task") {
            let id = short(task["taskId"].as_str().unwrap_or("?"));
            if let Some(requests) = task["inputRequests"].as_object() {
                for (key, request) in requests {
                    let answer = &task["inputResponses"][key];
                    out.push((
                        Role::Info,
                        format!(
                            "task {id} · asked {} · answered {} (tasks/update)",
                            asked(request),
                            answered(request, answer)
                        ),
                    ));
                }
            } else {
                let status = task["status"].as_str().unwrap_or("?");
                let message = task["statusMessage"]
                    .as_str()
                    .map(|m| format!(" · {m}"))
                    .unwrap_or_default();
                let role = match status {
                    "failed" | "cancelled" => Role::Error,
                    _ => Role::Info,
                };
                out.push((role, format!("task {id} · {status}{message}")));
            }
        } else if let Some(cache) = event.get("cache") {
            out.push((Role::Muted, cache_line(cache)));
        }
    }
    out
}

/// A few words for the History row: how many rounds, the task's last status, or that
/// the answer came from the cache; empty for a plain call.
pub(super) fn trail_mark(trail: &[Value]) -> String {
    let rounds = trail
        .iter()
        .filter(|e| e.get("input_required").is_some())
        .count();
    let status = trail
        .iter()
        .rev()
        .find_map(|e| e["task"]["status"].as_str());
    let mut words = Vec::new();
    if rounds > 0 {
        words.push(format!(
            "{rounds} round{}",
            if rounds == 1 { "" } else { "s" }
        ));
    }
    if let Some(status) = status {
        words.push(format!("task {status}"));
    }
    if trail.iter().any(|e| e["cache"]["hit"] == true) {
        words.push("cached".into());
    }
    words.join(", ")
}

/// A cache event: the answer reused and how long it still holds, or the hints a fresh
/// answer came with.
pub(super) fn cache_line(cache: &Value) -> String {
    let scope = cache["cacheScope"].as_str().unwrap_or("private");
    let ms = cache["ttlMs"].as_u64().unwrap_or(0);
    if cache["hit"] == true {
        format!("from the cache · {} left · {scope}", span(ms))
    } else if ms == 0 {
        format!("the server says not to keep it · {scope}")
    } else {
        format!("the server says keep it {} · {scope}", span(ms))
    }
}

/// Milliseconds as a person reads them: `250 ms`, `12 s`, `59 min`, `1 h`.
fn span(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{} s", ms / 1_000),
        60_000..3_600_000 => format!("{} min", ms / 60_000),
        _ => format!("{} h", ms / 3_600_000),
    }
}

/// What an input request asks: the method and its message, if it has one.
fn asked(request: &Value) -> String {
    let method = request["method"].as_str().unwrap_or("?");
    let params = &request["params"];
    match method {
        "elicitation/create" => format!(
            "{method} \"{}\"",
            params["message"].as_str().unwrap_or_default()
        ),
        "sampling/createMessage" => {
            let said = params["messages"]
                .as_array()
                .and_then(|m| m.last())
                .and_then(|m| m["content"]["text"].as_str())
                .unwrap_or_default();
            format!("{method} \"{said}\"")
        }
        _ => method.to_string(),
    }
}

/// What was answered to `request`, in brief.
fn answered(request: &Value, answer: &Value) -> String {
    match request["method"].as_str() {
        Some("elicitation/create") => {
            let action = answer["action"].as_str().unwrap_or("?");
            match answer.get("content").filter(|c| !c.is_null()) {
                Some(content) => format!("{action} {content}"),
                None => action.to_string(),
            }
        }
        Some("sampling/createMessage") => answer["content"]["text"]
            .as_str()
            .map_or_else(|| answer.to_string(), |t| format!("\"{t}\"")),
        Some("roots/list") => {
            let n = answer["roots"].as_array().map_or(0, Vec::len);
            format!("{n} root{}", if n == 1 { "" } else { "s" })
        }
        _ => answer.to_string(),
    }
}

/// A task id cut to its first eight characters (ids are long and random).
fn short(id: &str) -> String {
    if id.chars().count() > 10 {
        format!("{}…", id.chars().take(8).collect::<String>())
    } else {
        id.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rounds_and_task_statuses_read_as_lines() {
        let trail = vec![
            json!({"input_required": {"method": "tools/call", "round": 1,
                "inputRequests": {"confirm": {"method": "elicitation/create",
                    "params": {"message": "Delete x?"}}},
                "inputResponses": {"confirm": {"action": "accept",
                    "content": {"confirm": true}}}}}),
            json!({"task": {"method": "tools/call", "taskId": "0123456789abcdef",
                "status": "working", "statusMessage": "running"}}),
            json!({"task": {"method": "tools/call", "taskId": "0123456789abcdef",
                "status": "completed", "statusMessage": null}}),
        ];
        let lines: Vec<String> = trail_lines(&trail).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            lines,
            [
                "round 1 · asked elicitation/create \"Delete x?\" · answered accept {\"confirm\":true}",
                "task 01234567… · working · running",
                "task 01234567… · completed",
            ]
        );
        assert_eq!(trail_mark(&trail), "1 round, task completed");
        assert_eq!(trail_mark(&[]), "");
    }

    #[test]
    fn a_cache_hit_says_how_long_it_still_holds() {
        let hit = json!({"hit": true, "ttlMs": 3_540_000, "cacheScope": "public"});
        assert_eq!(cache_line(&hit), "from the cache · 59 min left · public");
        let fresh = json!({"hit": false, "ttlMs": 0, "cacheScope": "private"});
        assert_eq!(
            cache_line(&fresh),
            "the server says not to keep it · private"
        );
        let hour = json!({"hit": false, "ttlMs": 3_600_000, "cacheScope": "public"});
        assert_eq!(cache_line(&hour), "the server says keep it 1 h · public");
        assert_eq!(trail_mark(&[json!({"cache": hit})]), "cached");
    }
}
