//! How the Server tab shows what a server sends back, as styled lines: a resource's
//! contents (text as it is, JSON as a tree, a binary as its size and type) and a
//! prompt's messages; and RFC 6570 URI templates, their variables and expansion.

use std::collections::HashMap;

use serde_json::Value;

use crate::tui::theme::Role;

/// The variables of an RFC 6570 URI template: `{id}`, `{+path}`, `{?a,b}`.
pub(super) fn template_vars(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let inner = &rest[open + 1..open + close];
        let inner = inner.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for name in inner.split(',') {
            let name = name.trim_end_matches('*');
            let name = name.split(':').next().unwrap_or(name);
            if !name.is_empty() && !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        }
        rest = &rest[open + close + 1..];
    }
    out
}

/// A URI template with its variables filled in (simple, reserved `+`, and query `?`
/// and `&` expressions; an empty variable is left out of a query).
pub(super) fn expand(template: &str, values: &HashMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push_str(&rest[..open]);
        let inner = &rest[open + 1..open + close];
        let (op, names) = match inner.chars().next() {
            Some(c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(c), &inner[1..]),
            _ => (None, inner),
        };
        let given: Vec<(&str, &str)> = names
            .split(',')
            .map(|n| n.trim_end_matches('*'))
            .filter_map(|n| {
                values
                    .get(n)
                    .filter(|v| !v.is_empty())
                    .map(|v| (n, v.as_str()))
            })
            .collect();
        match op {
            Some(q @ ('?' | '&')) => {
                for (k, (name, value)) in given.iter().enumerate() {
                    let sep = if k == 0 { q } else { '&' };
                    out.push_str(&format!("{sep}{name}={}", encode(value, false)));
                }
            }
            Some('+' | '#') => {
                let joined: Vec<String> = given.iter().map(|(_, v)| encode(v, true)).collect();
                if op == Some('#') && !joined.is_empty() {
                    out.push('#');
                }
                out.push_str(&joined.join(","));
            }
            Some(c @ ('.' | '/')) => {
                for (_, v) in &given {
                    out.push(c);
                    out.push_str(&encode(v, false));
                }
            }
            _ => {
                let joined: Vec<String> = given.iter().map(|(_, v)| encode(v, false)).collect();
                out.push_str(&joined.join(","));
            }
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// Percent-encodes what a URI template's expression may not carry as is.
fn encode(value: &str, reserved: bool) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (reserved && b"/:?#[]@!$&'()*+,;=".contains(&b));
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What a resource read gave, as lines: text as it is, JSON pretty-printed as a tree
/// of indented lines, a binary as its size and type.
pub(super) fn contents_lines(answer: &Value) -> Vec<(Role, String)> {
    let mut lines = Vec::new();
    let contents = answer["contents"].as_array().cloned().unwrap_or_default();
    if contents.is_empty() {
        lines.push((Role::Muted, "(no contents)".to_string()));
    }
    for (k, item) in contents.iter().enumerate() {
        if k > 0 {
            lines.push((Role::Text, String::new()));
        }
        let mime = item["mimeType"].as_str().unwrap_or("");
        lines.push((
            Role::Title,
            format!(
                "{}{}",
                item["uri"].as_str().unwrap_or("?"),
                if mime.is_empty() {
                    String::new()
                } else {
                    format!(" · {mime}")
                }
            ),
        ));
        if let Some(text) = item["text"].as_str() {
            let json = serde_json::from_str::<Value>(text)
                .ok()
                .filter(|v| v.is_object() || v.is_array());
            match json {
                Some(v) => lines.extend(json_tree(&v)),
                None => lines.extend(text.lines().map(|l| (Role::Text, l.to_string()))),
            }
        } else if let Some(blob) = item["blob"].as_str() {
            let bytes = blob.trim_end_matches('=').len() * 3 / 4;
            lines.push((
                Role::Value,
                format!(
                    "binary: {bytes} bytes of {}",
                    if mime.is_empty() {
                        "unknown type"
                    } else {
                        mime
                    }
                ),
            ));
        } else {
            lines.push((Role::Muted, item.to_string()));
        }
    }
    lines
}

/// A JSON value as a tree of lines: each key on its own line under its parent,
/// containers with their sizes, scalars beside their keys.
pub(super) fn json_tree(value: &Value) -> Vec<(Role, String)> {
    fn walk(label: &str, v: &Value, depth: usize, out: &mut Vec<(Role, String)>) {
        let pad = "  ".repeat(depth);
        let head = if label.is_empty() {
            String::new()
        } else {
            format!("{label}: ")
        };
        match v {
            Value::Object(map) => {
                out.push((Role::Field, format!("{pad}{head}{{{}}}", map.len())));
                for (k, item) in map {
                    walk(k, item, depth + 1, out);
                }
            }
            Value::Array(items) => {
                out.push((Role::Field, format!("{pad}{head}[{}]", items.len())));
                for (i, item) in items.iter().enumerate() {
                    walk(&format!("[{i}]"), item, depth + 1, out);
                }
            }
            Value::String(s) => out.push((Role::Value, format!("{pad}{head}{s:?}"))),
            other => out.push((Role::Value, format!("{pad}{head}{other}"))),
        }
    }
    let mut out = Vec::new();
    walk("", value, 0, &mut out);
    out
}

/// What a prompt gives, as lines: each message under its role; text as it is, an
/// embedded resource with its uri and text, an image or audio as its type and size.
pub(super) fn prompt_lines(answer: &Value) -> Vec<(Role, String)> {
    let mut lines = Vec::new();
    if let Some(d) = answer["description"].as_str() {
        lines.extend(d.lines().map(|l| (Role::Muted, l.to_string())));
        lines.push((Role::Text, String::new()));
    }
    for m in answer["messages"].as_array().cloned().unwrap_or_default() {
        lines.push((
            Role::Title,
            format!("{}:", m["role"].as_str().unwrap_or("?")),
        ));
        lines.extend(block_lines(&m["content"], "  "));
    }
    lines
}

/// A tool's answer as lines. A server that answers in content blocks (the answer is
/// `{"content": [...]}` and nothing else) has its text shown as text, with its own
/// line breaks, and its other blocks described; any other answer is pretty JSON.
pub(super) fn answer_lines(answer: &Value) -> Vec<(Role, String)> {
    let blocks = answer
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get("content"))
        .and_then(Value::as_array);
    let Some(blocks) = blocks else {
        return serde_json::to_string_pretty(answer)
            .unwrap_or_default()
            .lines()
            .map(|l| (Role::Text, l.to_string()))
            .collect();
    };
    let mut lines = Vec::new();
    for (k, block) in blocks.iter().enumerate() {
        if k > 0 {
            lines.push((Role::Text, String::new()));
        }
        lines.extend(block_lines(block, ""));
    }
    if lines.is_empty() {
        lines.push((Role::Muted, "(no content)".to_string()));
    }
    lines
}

/// One content block (of a tool's answer or a prompt's message) as lines, each after
/// `pad`: text as it is, an embedded resource with its uri and text, a link, an image
/// or audio as its type and size, anything else as JSON.
fn block_lines(content: &Value, pad: &str) -> Vec<(Role, String)> {
    let mut lines = Vec::new();
    match content["type"].as_str() {
        Some("text") => {
            let text = content["text"].as_str().unwrap_or("");
            lines.extend(text.lines().map(|l| (Role::Text, format!("{pad}{l}"))));
            if text.is_empty() {
                lines.push((Role::Muted, format!("{pad}(empty text)")));
            }
        }
        Some("resource") => {
            let r = &content["resource"];
            lines.push((
                Role::Field,
                format!(
                    "{pad}embedded resource {} {}",
                    r["uri"].as_str().unwrap_or("?"),
                    r["mimeType"].as_str().unwrap_or("")
                ),
            ));
            if let Some(text) = r["text"].as_str() {
                // JSON (an entity, say) pretty-printed, as a resource read shows it.
                let pretty = serde_json::from_str::<Value>(text)
                    .ok()
                    .filter(|v| v.is_object() || v.is_array())
                    .and_then(|v| serde_json::to_string_pretty(&v).ok());
                let text = pretty.as_deref().unwrap_or(text);
                lines.extend(text.lines().map(|l| (Role::Text, format!("{pad}  {l}"))));
            } else if let Some(blob) = r["blob"].as_str() {
                lines.push((
                    Role::Value,
                    format!("{pad}  binary: {} bytes", blob.len() * 3 / 4),
                ));
            }
        }
        Some("resource_link") => lines.push((
            Role::Field,
            format!("{pad}link to {}", content["uri"].as_str().unwrap_or("?")),
        )),
        Some(kind @ ("image" | "audio")) => lines.push((
            Role::Value,
            format!(
                "{pad}{kind}: {} bytes of {}",
                content["data"].as_str().map_or(0, |d| d.len() * 3 / 4),
                content["mimeType"].as_str().unwrap_or("?")
            ),
        )),
        _ => lines.push((Role::Muted, format!("{pad}{content}"))),
    }
    lines
}

/// Columns a character takes on a terminal.
fn columns(c: char) -> usize {
    if c.is_ascii() {
        1
    } else {
        ratatui::text::Span::raw(c.to_string()).width()
    }
}

/// One line of text in rows of at most `width` columns, broken after a space where it
/// can, inside a word longer than a row; each row after the first indented as the
/// line is (up to half the width), so wrapped JSON and messages keep their shape.
pub(super) fn wrap_line(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let chars: Vec<char> = text.replace('\t', "    ").chars().collect();
    let indent = chars
        .iter()
        .take_while(|c| **c == ' ')
        .count()
        .min(width / 2);
    let mut rows = Vec::new();
    let mut start = 0;
    loop {
        let lead = if rows.is_empty() { 0 } else { indent };
        let room = width - lead;
        let (mut end, mut used) = (start, 0);
        while end < chars.len() && used + columns(chars[end]) <= room {
            used += columns(chars[end]);
            end += 1;
        }
        let mut row: String = " ".repeat(lead);
        if end == chars.len() {
            row.extend(&chars[start..end]);
            rows.push(row);
            return rows;
        }
        // After the last space that leaves something on the row (past the indent).
        let floor = if rows.is_empty() { indent } else { start };
        let cut = (floor + 1..=end)
            .rev()
            .find(|&p| chars[p] == ' ' && chars[p - 1] != ' ');
        let (take, next) = match cut {
            Some(p) => (p, p + 1),
            None => (end.max(start + 1), end.max(start + 1)),
        };
        row.extend(&chars[start..take]);
        rows.push(row);
        start = next;
        while start < chars.len() && chars[start] == ' ' {
            start += 1;
        }
        if start >= chars.len() {
            return rows;
        }
    }
}

/// `text` cut into rows of `width` columns wherever the row ends (compact JSON, which
/// has no spaces to break at).
pub(super) fn cut_rows(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let (mut row, mut used) = (String::new(), 0);
    for c in text.chars() {
        let w = columns(c);
        if used + w > width && used > 0 {
            rows.push(std::mem::take(&mut row));
            used = 0;
        }
        row.push(c);
        used += w;
    }
    rows.push(row);
    rows
}

/// Styled lines wrapped to `width` columns, each row keeping its line's style.
pub(super) fn wrap_lines(lines: &[(Role, String)], width: usize) -> Vec<(Role, String)> {
    let mut out = Vec::new();
    for (role, text) in lines {
        for line in text.split('\n') {
            out.extend(wrap_line(line, width).into_iter().map(|row| (*role, row)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_name_their_variables_and_expand() {
        assert_eq!(template_vars("demo://r/{id}"), ["id"]);
        assert_eq!(
            template_vars("structs://handles/{handle}{?page,page_size}"),
            ["handle", "page", "page_size"]
        );
        let values: HashMap<String, String> = [("handle", "h 1"), ("page", "2"), ("page_size", "")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            expand("structs://handles/{handle}{?page,page_size}", &values),
            "structs://handles/h%201?page=2"
        );
        assert_eq!(
            expand(
                "a/{+path}",
                &[("path".to_string(), "x/y".to_string())].into()
            ),
            "a/x/y"
        );
    }

    #[test]
    fn contents_show_text_json_and_binary() {
        let lines = contents_lines(&json!({"contents": [
            {"uri": "a://1", "mimeType": "text/plain", "text": "hello\nworld"},
            {"uri": "a://2", "mimeType": "application/json", "text": "{\"k\": [1, 2]}"},
            {"uri": "a://3", "mimeType": "image/png", "blob": "AAAA"}
        ]}));
        let text: Vec<&str> = lines.iter().map(|(_, t)| t.as_str()).collect();
        assert!(text.contains(&"hello"));
        assert!(text.contains(&"  k: [2]"), "{text:?}");
        assert!(text.contains(&"    [1]: 2"), "{text:?}");
        assert!(text.contains(&"binary: 3 bytes of image/png"), "{text:?}");
    }

    #[test]
    fn long_lines_wrap_between_words_and_keep_their_indent() {
        assert_eq!(wrap_line("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap_line("short", 10), ["short"]);
        assert_eq!(wrap_line("", 10), [""]);
        assert_eq!(wrap_line("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(
            wrap_line("    \"text\": \"a long string value\"", 16),
            ["    \"text\": \"a", "    long string", "    value\""]
        );
        // Every row fits, and nothing is lost but the spaces broken at.
        let text = "Decide whether it is worth attacking the planet now, given the fleet's \
                    strength, the shields and the charge it has";
        let rows = wrap_line(text, 23);
        assert!(rows.iter().all(|r| r.chars().count() <= 23), "{rows:?}");
        assert_eq!(rows.join(" "), text);
        // Wide characters take two columns.
        assert_eq!(wrap_line("日本語です", 4), ["日本", "語で", "す"]);
        assert_eq!(cut_rows(r#"a {"b":1}"#, 4), ["a {\"", "b\":1", "}"]);
        assert_eq!(cut_rows("", 4), [""]);
        let styled = wrap_lines(&[(Role::Error, "a b\nc".to_string())], 1);
        assert_eq!(
            styled,
            [
                (Role::Error, "a".to_string()),
                (Role::Error, "b".to_string()),
                (Role::Error, "c".to_string())
            ]
        );
    }

    #[test]
    fn a_tool_answered_in_text_shows_the_text() {
        let lines = answer_lines(&json!({"content": [
            {"type": "text", "text": "first line\nsecond \"quoted\""},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        ]}));
        let text: Vec<&str> = lines.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            text,
            [
                "first line",
                "second \"quoted\"",
                "",
                "image: 3 bytes of image/png"
            ]
        );
        // Structured answers stay JSON.
        let lines = answer_lines(&json!({"height": 7, "content": "x"}));
        assert_eq!(lines[0].1, "{");
        assert!(
            lines.iter().any(|(_, t)| t == "  \"height\": 7,"),
            "{lines:?}"
        );
    }

    #[test]
    fn prompts_show_roles_and_embedded_resources() {
        let lines = prompt_lines(&json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "assistant", "content": {"type": "resource",
                "resource": {"uri": "r://1", "mimeType": "text/plain", "text": "body"}}}
        ]}));
        let text: Vec<&str> = lines.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            text,
            [
                "user:",
                "  hi",
                "assistant:",
                "  embedded resource r://1 text/plain",
                "    body"
            ]
        );
    }
}
