//! Drawing the Replay pane: the list of recorded calls, and the selected call's
//! recorded and fresh answers pretty-printed with each line's JSON Pointer, so lines
//! at or under a changed path take the change's colour.

use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Widget};
use serde_json::Value;

use super::{Focus, OpenLog, ReplayPane, Shown, Verdict};
use crate::record::diff::{Change, ChangeKind};
use crate::record::index::{Call, Progress};
use crate::tui::pane::Ui;
use crate::tui::theme::{Role, Theme};
use crate::tui::widgets::text::{SELECTED_MARK, fit_pad as fit, grouped, wrap_words};

impl ReplayPane {
    /// The log's calls, a row each, with what running them again gave.
    pub(super) fn render_list(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some(log) = &self.log else { return };
        let p = log.index.progress();
        let focused = self.focus == Focus::Calls;
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.style(if focused {
                Role::BorderFocused
            } else {
                Role::Border
            }))
            .title(list_title(log, &p, &self.filter, theme))
            .title_bottom(
                Line::from(Span::styled(list_footer(log, &p), theme.style(Role::Muted)))
                    .right_aligned(),
            );
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height < 2 || inner.width < 10 {
            return;
        }
        let rows = usize::from(inner.height - 1);
        self.cursor.scroll(rows);
        if let Some(matched) = &self.filter.rows {
            let at = matched.partition_point(|&r| r < self.cursor.selected);
            self.filter.cursor.selected = at.min(matched.len().saturating_sub(1));
            self.filter.cursor.scroll(rows);
        }
        let width = usize::from(inner.width);
        self.render_calls(log, &Columns::new(p.calls, width), inner, buf, theme);
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

    /// The heading and the calls in view under it, the selected one marked.
    fn render_calls(
        &self,
        log: &OpenLog,
        columns: &Columns,
        inner: Rect,
        buf: &mut Buffer,
        theme: &Theme,
    ) {
        let focused = self.focus == Focus::Calls;
        let rows = usize::from(inner.height - 1);
        let width = usize::from(inner.width);
        buf.set_stringn(
            inner.x,
            inner.y,
            columns.head(),
            width,
            theme.style(Role::Muted),
        );
        // The rows on show: the filter's, else the log's in order.
        let shown: Vec<(usize, Call, String)> = match &self.filter.rows {
            Some(matched) => matched
                .iter()
                .skip(self.filter.cursor.top)
                .take(rows)
                .filter_map(|&row| log.index.call(row).map(|(c, t, _)| (row, c, t)))
                .collect(),
            None => log
                .index
                .window(self.cursor.top, rows)
                .into_iter()
                .enumerate()
                .map(|(k, (c, t, _))| (self.cursor.top + k, c, t))
                .collect(),
        };
        for (k, (row, call, tool)) in shown.into_iter().enumerate() {
            let chosen = row == self.cursor.selected;
            let (again, again_role) = rerun_cell(log, row);
            let mark = if chosen { SELECTED_MARK } else { "  " };
            let text = columns.row(mark, row, &call, &tool);
            let y = inner.y + 1 + k as u16;
            let role = if chosen {
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
                theme.style(if chosen { role } else { Role::Base }),
            );
            let (x, _) = buf.set_stringn(inner.x, y, &text, width, theme.style(role));
            let left = width.saturating_sub(usize::from(x - inner.x));
            let again_style = if chosen {
                theme.style(role)
            } else {
                theme.style(again_role)
            };
            buf.set_stringn(x, y, &again, left, again_style);
        }
    }

    /// The selected call: its facts and verdict, then its recorded and fresh answers.
    pub(super) fn render_detail(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let focused = self.focus == Focus::Detail;
        let Some(log) = &mut self.log else { return };
        keep_fresh_lines(log);
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
        let block = block.title(call_title(shown, theme));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 || inner.width < 4 {
            return;
        }
        let verdict = log.verdicts.get(&shown.row);
        let top = call_summary(shown, verdict, inner, ui);
        let top_h = (top.len() as u16).min(inner.height);
        let [head, body] =
            Layout::vertical([Constraint::Length(top_h), Constraint::Fill(1)]).areas(inner);
        Paragraph::new(top).render(head, buf);
        if body.height < 2 {
            return;
        }
        // Both answers scroll together, as far as the longer one goes.
        let len = shown.recorded_lines.len().max(
            shown
                .fresh_lines
                .as_ref()
                .map_or(0, |(_, lines)| lines.len()),
        );
        let scroll = self
            .detail_scroll
            .shown(usize::from(body.height.saturating_sub(1)), len);
        render_answers(body, buf, ui, scroll, shown, verdict);
    }
}

/// The list's title: the log's name, its calls and sessions, and how much of it is
/// read while it is being read.
fn list_title(
    log: &OpenLog,
    p: &Progress,
    filter: &super::filter::RowFilter,
    theme: &Theme,
) -> Line<'static> {
    let filtered = filter.active() || (filter.reading() && !filter.text.trim().is_empty());
    // Filtered, the count that match comes first, then the filter.
    let calls = if filtered {
        filter.count(p.calls)
    } else {
        format!(
            "{} call{}",
            grouped(p.calls),
            if p.calls == 1 { "" } else { "s" }
        )
    };
    let mut title = vec![
        Span::styled(format!(" {}", log.file_name), theme.style(Role::Title)),
        Span::styled(
            format!(" · {calls}"),
            theme.style(if filtered { Role::Prompt } else { Role::Muted }),
        ),
    ];
    if filtered {
        title.push(Span::styled(
            format!(" · {}", filter.text.trim()),
            theme.style(Role::Prompt),
        ));
    } else {
        title.push(Span::styled(
            format!(
                " · {} session{}",
                p.sessions,
                if p.sessions == 1 { "" } else { "s" }
            ),
            theme.style(Role::Muted),
        ));
    }
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
    Line::from(title)
}

/// The list's footer: the calls run again and how many differ, those skipped, and
/// what reading the log met (notifications, bad lines, an error); empty when none.
fn list_footer(log: &OpenLog, p: &Progress) -> String {
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
    if footer.is_empty() {
        String::new()
    } else {
        format!(" {} ", footer.join(" · "))
    }
}

/// The widths of the list's columns that vary: the call's number and its tool.
struct Columns {
    num: usize,
    tool: usize,
}

impl Columns {
    /// The widths for a log of `calls` calls in a list `width` wide.
    fn new(calls: usize, width: usize) -> Columns {
        // # at ms tool rec again
        let num = grouped(calls.max(1)).len().max(1);
        let fixed = 2 + num + 1 + 8 + 1 + 1 + 7 + 1 + 4 + 1 + 6;
        Columns {
            num,
            tool: width.saturating_sub(fixed).max(4),
        }
    }

    /// The heading row.
    fn head(&self) -> String {
        let (num_w, tool_w) = (self.num, self.tool);
        format!(
            "  {:>num_w$} {:>8} {} {:>7} {:<4} {}",
            "#",
            "at s",
            fit("tool", tool_w),
            "ms",
            "rec",
            "re-run"
        )
    }

    /// A call's row up to its re-run column, after `mark`: its number, when it was
    /// made, its tool, how long it took and what was recorded.
    fn row(&self, mark: &str, row: usize, call: &Call, tool: &str) -> String {
        let (num_w, tool_w) = (self.num, self.tool);
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
        format!(
            "{mark}{:>num_w$} {at:>8} {} {ms:>7} {rec:<4} ",
            grouped(row + 1),
            fit(tool.trim_start_matches("structs_"), tool_w),
        )
    }
}

/// A row's re-run column: running, not run again, skipped, the same, or how many
/// differences; with its role.
fn rerun_cell(log: &OpenLog, row: usize) -> (String, Role) {
    match log.verdicts.get(&row) {
        None if log.single.values().any(|r| *r == row) => ("…".to_string(), Role::Muted),
        None => ("".to_string(), Role::Muted),
        Some(v) if v.skipped.is_some() => ("skip".to_string(), Role::Muted),
        Some(v) if v.total == 0 => ("same".to_string(), Role::Info),
        Some(v) => (format!("≠ {}", v.total), Role::Prompt),
    }
}

/// Pretty-prints the shown call's fresh answer again only when it is another one.
fn keep_fresh_lines(log: &mut OpenLog) {
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
}

/// The detail's title: the call's row and tool, its session and number in it.
fn call_title(shown: &Shown, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(
            format!(" call {} · {}", shown.row + 1, shown.tool),
            theme.style(Role::Title),
        ),
        Span::styled(
            format!(" · {} #{} ", short_session(&shown.session), shown.call.call),
            theme.style(Role::Muted),
        ),
    ])
}

/// The lines above the answers: an error reading the call, its facts, its arguments
/// and what running it again gave.
fn call_summary(
    shown: &Shown,
    verdict: Option<&Verdict>,
    inner: Rect,
    ui: &Ui<'_>,
) -> Vec<Line<'static>> {
    let theme = ui.theme;
    let mut top = Vec::new();
    if let Some(e) = &shown.error {
        top.push(Line::from(Span::styled(
            e.clone(),
            theme.style(Role::Error),
        )));
    }
    top.push(Line::from(Span::styled(
        call_facts(shown),
        theme.style(Role::Muted),
    )));
    let args = shown
        .request
        .as_ref()
        .and_then(|r| r.arguments.as_ref())
        .map_or("—".to_string(), Value::to_string);
    top.push(Line::from(vec![
        Span::styled("arguments ", theme.style(Role::Field)),
        Span::styled(args, theme.style(Role::Value)),
    ]));
    top.extend(verdict_lines(verdict, inner, ui));
    top
}

/// The call's facts in a line: where it is in the log, how long it took, its source
/// and block height, and whether it was answered.
fn call_facts(shown: &Shown) -> String {
    let mut facts = vec![format!("line {}", shown.call.request.line)];
    if let Some(d) = shown.call.duration_ms {
        facts.push(format!("{d:.2} ms"));
    }
    if let Some(r) = &shown.request {
        if let Some(s) = &r.source {
            facts.push(s.clone());
        }
        if let Some(h) = r.block_height {
            facts.push(format!("block {h}"));
        }
        if let Some(trace) = r.trace() {
            facts.push(format!("trace {trace}"));
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
    facts.join(" · ")
}

/// What running the call again gave: not run yet, why it was not run, the same
/// answer, or its differences (as many as a quarter of the area holds).
fn verdict_lines(verdict: Option<&Verdict>, inner: Rect, ui: &Ui<'_>) -> Vec<Line<'static>> {
    let theme = ui.theme;
    let mut top = Vec::new();
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
    top
}

/// The recorded answer and, when there is one, the fresh one beside it, scrolled
/// together; the lines a change touches in its colour.
fn render_answers(
    area: Rect,
    buf: &mut Buffer,
    ui: &Ui<'_>,
    scroll: usize,
    shown: &Shown,
    verdict: Option<&Verdict>,
) {
    let changes: &[Change] = verdict.map_or(&[], |v| &v.changes);
    let rec = &shown.recorded_lines;
    match (&shown.fresh_lines, verdict) {
        (Some((_, new)), _) => {
            let [left, right] =
                Layout::horizontal([Constraint::Percentage(50), Constraint::Fill(1)]).areas(area);
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
            area,
            buf,
            ui,
            scroll,
            "recorded (what the agent got)",
            rec,
            &[],
            Side::Recorded,
        ),
        (None, Some(_)) => render_json(
            area,
            buf,
            ui,
            scroll,
            "recorded (the fresh answer is no longer kept: r runs it again)",
            rec,
            changes,
            Side::Recorded,
        ),
        (None, None) => render_json(area, buf, ui, scroll, "recorded", rec, &[], Side::Recorded),
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
