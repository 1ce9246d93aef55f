//! Drawing the Replay pane: the list of recorded calls, and the selected call's
//! recorded and fresh answers pretty-printed with each line's JSON Pointer, so lines
//! at or under a changed path take the change's colour.

use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Widget};
use serde_json::Value;

use super::{Focus, ReplayPane, Verdict};
use crate::record::diff::{Change, ChangeKind};
use crate::tui::pane::Ui;
use crate::tui::theme::Role;
use crate::tui::widgets::text::{SELECTED_MARK, fit_pad as fit, grouped, wrap_words};

impl ReplayPane {
    pub(super) fn render_list(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some(log) = &self.log else { return };
        let p = log.index.progress();
        let mut title = vec![
            Span::styled(format!(" {}", log.file_name), theme.style(Role::Title)),
            Span::styled(
                format!(
                    " · {} call{} · {} session{}",
                    grouped(p.calls),
                    if p.calls == 1 { "" } else { "s" },
                    p.sessions,
                    if p.sessions == 1 { "" } else { "s" }
                ),
                theme.style(Role::Muted),
            ),
        ];
        if !p.done {
            let pct = (p.bytes_read * 100)
                .checked_div(p.total_bytes)
                .unwrap_or(100);
            title.push(Span::styled(
                format!(" · reading {pct} %"),
                theme.style(Role::Muted),
            ));
        }
        title.push(Span::styled(" ", theme.style(Role::Title)));
        let mut footer = Vec::new();
        if let Some(run) = &log.run {
            footer.push(format!("re-running {}/{}", log.verdicts.len(), run.total));
        } else if !log.verdicts.is_empty() {
            footer.push(format!("{} run again", grouped(log.verdicts.len())));
        }
        if !log.verdicts.is_empty() {
            footer.push(format!("{} differ", grouped(log.different)));
        }
        if log.skipped > 0 {
            footer.push(format!("{} skipped", grouped(log.skipped)));
        }
        if p.notifications > 0 {
            footer.push(format!(
                "{} notifications",
                grouped(p.notifications as usize)
            ));
        }
        if p.problems > 0 {
            footer.push(format!(
                "{} bad line{}",
                p.problems,
                if p.problems == 1 { "" } else { "s" }
            ));
        }
        if let Some(e) = &p.error {
            footer.push(format!("read error: {e}"));
        }
        let focused = self.focus == Focus::Calls;
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(if focused {
                Role::BorderFocused
            } else {
                Role::Border
            }))
            .title(Line::from(title))
            .title_bottom(
                Line::from(Span::styled(
                    if footer.is_empty() {
                        String::new()
                    } else {
                        format!(" {} ", footer.join(" · "))
                    },
                    theme.style(Role::Muted),
                ))
                .right_aligned(),
            );
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height < 2 || inner.width < 10 {
            return;
        }
        let rows = usize::from(inner.height - 1);
        self.cursor.scroll(rows);
        let width = usize::from(inner.width);
        // # at ms tool rec again
        let num_w = grouped(p.calls.max(1)).len().max(1);
        let fixed = 2 + num_w + 1 + 8 + 1 + 1 + 7 + 1 + 4 + 1 + 6;
        let tool_w = width.saturating_sub(fixed).max(4);
        let head = format!(
            "  {:>num_w$} {:>8} {} {:>7} {:<4} {}",
            "#",
            "at s",
            fit("tool", tool_w),
            "ms",
            "rec",
            "re-run"
        );
        buf.set_stringn(inner.x, inner.y, &head, width, theme.style(Role::Muted));
        for (k, (call, tool, _session)) in log
            .index
            .window(self.cursor.top, rows)
            .into_iter()
            .enumerate()
        {
            let row = self.cursor.top + k;
            let at = call
                .at_ms
                .map_or("—".to_string(), |ms| format!("{:.3}", ms / 1e3));
            let ms = call
                .duration_ms
                .map_or("—".to_string(), |d| format!("{d:.1}"));
            let rec = match (call.response, call.failed) {
                (None, _) => "—",
                (Some(_), false) => "ok",
                (Some(_), true) => "err",
            };
            let (again, again_role) = match log.verdicts.get(&row) {
                None if log.single.values().any(|r| *r == row) => ("…".to_string(), Role::Muted),
                None => ("".to_string(), Role::Muted),
                Some(v) if v.skipped.is_some() => ("skip".to_string(), Role::Muted),
                Some(v) if v.total == 0 => ("same".to_string(), Role::Info),
                Some(v) => (format!("≠ {}", v.total), Role::Prompt),
            };
            let mark = if row == self.cursor.selected {
                SELECTED_MARK
            } else {
                "  "
            };
            let text = format!(
                "{mark}{:>num_w$} {at:>8} {} {ms:>7} {rec:<4} ",
                grouped(row + 1),
                fit(tool.trim_start_matches("structs_"), tool_w),
            );
            let y = inner.y + 1 + k as u16;
            let role = if row == self.cursor.selected {
                if focused {
                    Role::Selected
                } else {
                    Role::SelectedInactive
                }
            } else if call.failed {
                Role::Error
            } else {
                Role::Text
            };
            buf.set_style(
                Rect::new(inner.x, y, inner.width, 1),
                theme.style(if row == self.cursor.selected {
                    role
                } else {
                    Role::Base
                }),
            );
            let (x, _) = buf.set_stringn(inner.x, y, &text, width, theme.style(role));
            let left = width.saturating_sub(usize::from(x - inner.x));
            let again_style = if row == self.cursor.selected {
                theme.style(role)
            } else {
                theme.style(again_role)
            };
            buf.set_stringn(x, y, &again, left, again_style);
        }
        if p.calls == 0 {
            let text = if p.done {
                "no calls in this log"
            } else {
                "reading…"
            };
            buf.set_stringn(
                inner.x + 2,
                inner.y + 1,
                text,
                width.saturating_sub(2),
                theme.style(Role::Muted),
            );
        }
    }

    pub(super) fn render_detail(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let focused = self.focus == Focus::Detail;
        let Some(log) = &mut self.log else { return };
        // The fresh answer is printed again only when it is another one.
        let fresh = log
            .shown
            .as_ref()
            .and_then(|shown| log.fresh.iter().find(|(r, _)| *r == shown.row))
            .map(|(_, v)| Arc::clone(v));
        if let Some(shown) = &mut log.shown {
            match &fresh {
                Some(v)
                    if shown
                        .fresh_lines
                        .as_ref()
                        .is_none_or(|(old, _)| !Arc::ptr_eq(old, v)) =>
                {
                    shown.fresh_lines = Some((Arc::clone(v), pretty(v)));
                }
                Some(_) => {}
                None => shown.fresh_lines = None,
            }
        }
        let log = &*log;
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(if focused {
                Role::BorderFocused
            } else {
                Role::Border
            }));
        let Some(shown) = &log.shown else {
            block
                .title(Span::styled(" Call ", theme.style(Role::Title)))
                .render(area, buf);
            return;
        };
        let title = Line::from(vec![
            Span::styled(
                format!(" call {} · {}", shown.row + 1, shown.tool),
                theme.style(Role::Title),
            ),
            Span::styled(
                format!(" · {} #{} ", short_session(&shown.session), shown.call.call),
                theme.style(Role::Muted),
            ),
        ]);
        let block = block.title(title);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 || inner.width < 4 {
            return;
        }
        let mut top: Vec<Line<'_>> = Vec::new();
        if let Some(e) = &shown.error {
            top.push(Line::from(Span::styled(
                e.clone(),
                theme.style(Role::Error),
            )));
        }
        let req = shown.request.as_ref();
        let mut facts = vec![format!("line {}", shown.call.request.line)];
        if let Some(d) = shown.call.duration_ms {
            facts.push(format!("{d:.2} ms"));
        }
        if let Some(r) = req {
            if let Some(s) = &r.source {
                facts.push(s.clone());
            }
            if let Some(h) = r.block_height {
                facts.push(format!("block {h}"));
            }
        }
        facts.push(
            match (shown.call.response, shown.call.failed) {
                (None, _) => "no response recorded",
                (Some(_), false) => "answered",
                (Some(_), true) => "failed",
            }
            .to_string(),
        );
        top.push(Line::from(Span::styled(
            facts.join(" · "),
            theme.style(Role::Muted),
        )));
        let args = req
            .and_then(|r| r.arguments.as_ref())
            .map_or("—".to_string(), Value::to_string);
        top.push(Line::from(vec![
            Span::styled("arguments ", theme.style(Role::Field)),
            Span::styled(args, theme.style(Role::Value)),
        ]));
        let verdict = log.verdicts.get(&shown.row);
        match verdict {
            None => top.push(Line::from(Span::styled(
                "not run again yet (r: this call, a: every call)",
                theme.style(Role::Muted),
            ))),
            Some(Verdict {
                skipped: Some(why), ..
            }) => {
                let text = format!("not run again: {}", why.reason());
                for piece in wrap_words(&text, usize::from(inner.width)) {
                    top.push(Line::from(Span::styled(piece, theme.style(Role::Muted))));
                }
            }
            Some(v) if v.total == 0 && v.shape.is_empty() => top.push(Line::from(Span::styled(
                "run again: the same answer as recorded (volatile fields aside)",
                theme.style(Role::Info),
            ))),
            Some(v) if v.total == 0 => {
                // An older recording: the shapes changed, the game did not.
                let text = format!(
                    "run again: the same answer, recorded in older chain shapes ({})",
                    v.shape.join("; ")
                );
                for piece in wrap_words(&text, usize::from(inner.width)) {
                    top.push(Line::from(Span::styled(piece, theme.style(Role::Info))));
                }
            }
            Some(v) => {
                top.push(Line::from(Span::styled(
                    format!(
                        "run again: {} difference{}",
                        v.total,
                        if v.total == 1 { "" } else { "s" }
                    ),
                    theme.style(Role::Prompt),
                )));
                let room = usize::from(inner.height / 4).max(1);
                for c in v.changes.iter().take(room) {
                    top.push(change_line(c, ui));
                }
                if v.total > room {
                    top.push(Line::from(Span::styled(
                        format!("… and {} more", v.total - room),
                        theme.style(Role::Muted),
                    )));
                }
            }
        }
        let top_h = (top.len() as u16).min(inner.height);
        let [head, body] =
            Layout::vertical([Constraint::Length(top_h), Constraint::Fill(1)]).areas(inner);
        Paragraph::new(top).render(head, buf);
        if body.height < 2 {
            return;
        }
        let changes: &[Change] = verdict.map_or(&[], |v| &v.changes);
        let rec = &shown.recorded_lines;
        // Both answers scroll together, as far as the longer one goes.
        let len = rec.len().max(
            shown
                .fresh_lines
                .as_ref()
                .map_or(0, |(_, lines)| lines.len()),
        );
        let scroll = self
            .detail_scroll
            .shown(usize::from(body.height.saturating_sub(1)), len);
        match (&shown.fresh_lines, verdict) {
            (Some((_, new)), _) => {
                let [left, right] =
                    Layout::horizontal([Constraint::Percentage(50), Constraint::Fill(1)])
                        .areas(body);
                render_json(
                    left,
                    buf,
                    ui,
                    scroll,
                    "recorded",
                    rec,
                    changes,
                    Side::Recorded,
                );
                render_json(right, buf, ui, scroll, "fresh", new, changes, Side::Fresh);
            }
            (
                None,
                Some(Verdict {
                    skipped: Some(_), ..
                }),
            ) => render_json(
                body,
                buf,
                ui,
                scroll,
                "recorded (what the agent got)",
                rec,
                &[],
                Side::Recorded,
            ),
            (None, Some(_)) => render_json(
                body,
                buf,
                ui,
                scroll,
                "recorded (the fresh answer is no longer kept: r runs it again)",
                rec,
                changes,
                Side::Recorded,
            ),
            (None, None) => {
                render_json(body, buf, ui, scroll, "recorded", rec, &[], Side::Recorded)
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn render_json(
    area: Rect,
    buf: &mut Buffer,
    ui: &Ui<'_>,
    scroll: usize,
    label: &str,
    lines: &[(String, String)],
    changes: &[Change],
    side: Side,
) {
    let theme = ui.theme;
    buf.set_stringn(
        area.x,
        area.y,
        fit(label, usize::from(area.width)),
        usize::from(area.width),
        theme.style(Role::Field),
    );
    let height = usize::from(area.height.saturating_sub(1));
    let scroll = scroll.min(lines.len().saturating_sub(1));
    for (k, (text, path)) in lines.iter().skip(scroll).take(height).enumerate() {
        let y = area.y + 1 + k as u16;
        let role = highlight(path, changes, side).unwrap_or(Role::Text);
        buf.set_stringn(
            area.x,
            y,
            text,
            usize::from(area.width.saturating_sub(1)),
            theme.style(role),
        );
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Recorded,
    Fresh,
}

/// The role a line at `path` is drawn in: a change's colour when the line is at a
/// changed path or inside one, on the side where that change shows.
fn highlight(path: &str, changes: &[Change], side: Side) -> Option<Role> {
    changes.iter().find_map(|c| {
        let inside = path == c.path
            || (path.starts_with(c.path.as_str())
                && path.as_bytes().get(c.path.len()) == Some(&b'/'));
        if !inside {
            return None;
        }
        match (c.kind, side) {
            (ChangeKind::Changed, _) => Some(Role::Prompt),
            (ChangeKind::Added, Side::Fresh) => Some(Role::Info),
            (ChangeKind::Removed, Side::Recorded) => Some(Role::Error),
            _ => None,
        }
    })
}

fn change_line<'a>(c: &Change, ui: &Ui<'_>) -> Line<'a> {
    let role = match c.kind {
        ChangeKind::Added => Role::Info,
        ChangeKind::Removed => Role::Error,
        ChangeKind::Changed => Role::Prompt,
    };
    let path = if c.path.is_empty() {
        "(the whole answer)".to_string()
    } else {
        c.path.clone()
    };
    let short = |v: &Option<Value>| {
        let t = v.as_ref().map_or("—".to_string(), Value::to_string);
        if t.chars().count() > 40 {
            format!("{}…", t.chars().take(39).collect::<String>())
        } else {
            t
        }
    };
    Line::from(vec![
        Span::styled(format!("{} {path}", c.kind.mark()), ui.theme.style(role)),
        Span::styled(
            format!("  {} → {}", short(&c.before), short(&c.after)),
            ui.theme.style(Role::Muted),
        ),
    ])
}

/// The session id's distinguishing tail (`s-…-2`).
fn short_session(s: &str) -> String {
    match s.rsplit_once('-') {
        Some((_, n)) if s.len() > 12 => format!("session …-{n}"),
        _ => format!("session {s}"),
    }
}

/// Pretty JSON, one entry per line, each with the JSON Pointer of the value it shows.
pub(crate) fn pretty(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    pretty_into(v, "", 0, None, false, &mut out);
    out
}

fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn pretty_into(
    v: &Value,
    path: &str,
    depth: usize,
    key: Option<&str>,
    comma: bool,
    out: &mut Vec<(String, String)>,
) {
    const MAX_LINES: usize = 20_000;
    if out.len() >= MAX_LINES {
        return;
    }
    let indent = "  ".repeat(depth);
    let label = key.map_or(String::new(), |k| format!("{}: ", Value::from(k)));
    let tail = if comma { "," } else { "" };
    match v {
        Value::Object(map) if !map.is_empty() => {
            out.push((format!("{indent}{label}{{"), path.to_string()));
            let n = map.len();
            for (i, (k, child)) in map.iter().enumerate() {
                let p = format!("{path}/{}", pointer_escape(k));
                pretty_into(child, &p, depth + 1, Some(k), i + 1 < n, out);
            }
            out.push((format!("{indent}}}{tail}"), path.to_string()));
        }
        Value::Array(items) if !items.is_empty() => {
            out.push((format!("{indent}{label}["), path.to_string()));
            let n = items.len();
            for (i, child) in items.iter().enumerate() {
                let p = format!("{path}/{i}");
                pretty_into(child, &p, depth + 1, None, i + 1 < n, out);
            }
            out.push((format!("{indent}]{tail}"), path.to_string()));
        }
        scalar => out.push((format!("{indent}{label}{scalar}{tail}"), path.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pretty_lines_carry_their_pointers() {
        let v = json!({"a": {"b/c": [1, {"d": true}]}, "e": []});
        let lines = pretty(&v);
        let find = |text: &str| {
            lines
                .iter()
                .find(|(t, _)| t.trim() == text)
                .map(|(_, p)| p.clone())
        };
        assert_eq!(find("\"a\": {").as_deref(), Some("/a"));
        assert_eq!(find("\"b/c\": [").as_deref(), Some("/a/b~1c"));
        assert_eq!(find("1,").as_deref(), Some("/a/b~1c/0"));
        assert_eq!(find("\"d\": true").as_deref(), Some("/a/b~1c/1/d"));
        assert_eq!(find("\"e\": []").as_deref(), Some("/e"));
        // Valid JSON again once joined.
        let text: String = lines.iter().map(|(t, _)| format!("{t}\n")).collect();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }

    #[test]
    fn lines_inside_a_change_are_highlighted_on_its_side() {
        let changed = Change {
            path: "/a/b".into(),
            kind: ChangeKind::Changed,
            before: Some(json!(1)),
            after: Some(json!(2)),
        };
        let added = Change {
            path: "/n".into(),
            kind: ChangeKind::Added,
            before: None,
            after: Some(json!(1)),
        };
        let changes = [changed, added];
        assert_eq!(
            highlight("/a/b", &changes, Side::Recorded),
            Some(Role::Prompt)
        );
        assert_eq!(
            highlight("/a/b/0", &changes, Side::Fresh),
            Some(Role::Prompt)
        );
        assert_eq!(highlight("/a/bc", &changes, Side::Fresh), None);
        assert_eq!(highlight("/a", &changes, Side::Fresh), None);
        assert_eq!(highlight("/n", &changes, Side::Fresh), Some(Role::Info));
        assert_eq!(highlight("/n", &changes, Side::Recorded), None);
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(100_000), "100,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }
}
