//! Drawing the Resources and Prompts sections: the lists, the selected item, the form
//! of arguments with its completions, and what a read or a prompt gave.

use std::collections::HashMap;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};
use serde_json::Value;

use super::super::content::{expand, wrap_lines};
use super::super::render::{Rows, field_row, name_width, wrap};
use super::super::{Mode, Section};
use super::{Browse, Listing, Target};
use crate::tui::pane::Ui;
use crate::tui::theme::Role;
use crate::tui::widgets::area_block;
use crate::tui::widgets::cursor::Scroll;
use crate::tui::widgets::text::{SELECTED_MARK, fit};

impl Browse {
    pub fn render(
        &mut self,
        section: Section,
        mode: Mode,
        scroll: &mut Scroll,
        area: Rect,
        buf: &mut Buffer,
        ui: &Ui<'_>,
    ) {
        let [list, detail] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Min(0)]).areas(area);
        let (list, detail) = if area.width < 60 {
            // Narrow: the list, or what it opened, the whole width.
            match mode {
                Mode::List => (area, Rect::default()),
                _ => (Rect::default(), area),
            }
        } else {
            (list, detail)
        };
        match section {
            Section::Resources => self.render_resources(list, mode == Mode::List, buf, ui),
            _ => self.render_prompts(list, mode == Mode::List, buf, ui),
        }
        if detail.width == 0 {
            return;
        }
        match mode {
            Mode::Form => self.render_form(detail, buf, ui),
            Mode::Result => self.render_shown(detail, scroll, buf, ui),
            _ => self.render_selected(section, detail, buf, ui),
        }
    }

    fn render_resources(&mut self, area: Rect, focused: bool, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.width == 0 {
            return;
        }
        let theme = ui.theme;
        let more = if self.resources.next.is_some() || self.templates.next.is_some() {
            " · n: more"
        } else {
            ""
        };
        let block = area_block(
            ui,
            &format!(
                " Resources {} · templates {}{more} ",
                self.resources.items.len(),
                self.templates.items.len()
            ),
            focused,
        );
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = usize::from(inner.height);
        if rows == 0 {
            return;
        }
        let width = usize::from(inner.width);
        let mut all: Vec<(Role, String)> = Vec::new();
        for (k, r) in self.resources.items.iter().enumerate() {
            let uri = r["uri"].as_str().unwrap_or("?");
            let mut text = r["name"].as_str().unwrap_or(uri).to_string();
            if self.subscribed.contains(uri) {
                let n = self.updates.get(uri).map_or(0, |u| u.0);
                text = format!("{text} ◉ {n} updates");
            }
            all.push((row_role(k == self.res_selected, focused), text));
        }
        let n = self.resources.items.len();
        for (k, t) in self.templates.items.iter().enumerate() {
            let text = format!(
                "⧉ {}",
                t["name"]
                    .as_str()
                    .or(t["uriTemplate"].as_str())
                    .unwrap_or("?")
            );
            all.push((row_role(n + k == self.res_selected, focused), text));
        }
        if all.is_empty() {
            let note = listing_note(&self.resources).or(listing_note(&self.templates));
            all.push((
                Role::Muted,
                note.unwrap_or_else(|| "The server lists no resources.".into()),
            ));
        }
        draw_rows(
            &all,
            self.res_selected,
            &mut self.res_top,
            inner,
            width,
            buf,
            theme,
        );
    }

    fn render_prompts(&mut self, area: Rect, focused: bool, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.width == 0 {
            return;
        }
        let theme = ui.theme;
        let more = if self.prompts.next.is_some() {
            " · n: more"
        } else {
            ""
        };
        let block = area_block(
            ui,
            &format!(" Prompts {}{more} ", self.prompts.items.len()),
            focused,
        );
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let mut all: Vec<(Role, String)> = self
            .prompts
            .items
            .iter()
            .enumerate()
            .map(|(k, p)| {
                (
                    row_role(k == self.prompt_selected, focused),
                    p["name"].as_str().unwrap_or("?").to_string(),
                )
            })
            .collect();
        if all.is_empty() {
            all.push((
                Role::Muted,
                listing_note(&self.prompts)
                    .unwrap_or_else(|| "The server lists no prompts.".into()),
            ));
        }
        draw_rows(
            &all,
            self.prompt_selected,
            &mut self.prompt_top,
            inner,
            width,
            buf,
            theme,
        );
    }

    /// The selected resource, template or prompt, described.
    fn render_selected(&self, section: Section, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let (title, item, hint) = match section {
            Section::Resources => match self.selected_resource() {
                Some((true, t)) => (
                    "template",
                    t.clone(),
                    "Enter fills in its variables, with completions, to read one",
                ),
                Some((false, r)) => (
                    "resource",
                    r.clone(),
                    "Enter reads it; s subscribes to its updates",
                ),
                None => ("resource", Value::Null, ""),
            },
            _ => (
                "prompt",
                self.prompts
                    .items
                    .get(self.prompt_selected)
                    .cloned()
                    .unwrap_or(Value::Null),
                "Enter fills in its arguments, with completions, and gets it",
            ),
        };
        let block = area_block(ui, &format!(" {title} "), false);
        let inner = block.inner(area);
        block.render(area, buf);
        if item.is_null() {
            return;
        }
        let width = usize::from(inner.width).max(10);
        let mut lines: Vec<Line<'_>> = Vec::new();
        for key in ["name", "title", "uri", "uriTemplate", "mimeType", "size"] {
            if let Some(v) = item.get(key).filter(|v| !v.is_null()) {
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                lines.push(Line::from(vec![
                    Span::styled(format!("{key} "), theme.style(Role::Field)),
                    Span::styled(v, theme.style(Role::Value)),
                ]));
            }
        }
        if let Some(d) = item["description"].as_str() {
            for l in wrap(d, width) {
                lines.push(Line::from(Span::styled(l, theme.style(Role::Text))));
            }
        }
        if let Some(args) = item["arguments"].as_array() {
            lines.push(Line::from(Span::styled(
                "arguments (* required)",
                theme.style(Role::Title),
            )));
            for a in args {
                lines.push(Line::from(vec![
                    Span::styled(
                        format!(
                            "  {}{} ",
                            a["name"].as_str().unwrap_or("?"),
                            if a["required"] == true { "*" } else { "" }
                        ),
                        theme.style(Role::Field),
                    ),
                    Span::styled(
                        a["description"].as_str().unwrap_or("").to_string(),
                        theme.style(Role::Muted),
                    ),
                ]));
            }
        }
        if let Some(uri) = item["uri"].as_str()
            && let Some((n, at)) = self.updates.get(uri)
        {
            lines.push(Line::from(Span::styled(
                format!("{n} updates, the last at {at}"),
                theme.style(Role::Info),
            )));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(hint, theme.style(Role::Muted))));
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }

    fn render_form(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some(form) = &self.form else { return };
        let title = match &form.target {
            Target::Template { name, .. } => format!(" read from template {name} "),
            Target::Prompt { name } => format!(" get prompt {name} "),
        };
        let block = area_block(ui, &title, true);
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let mut lines: Vec<Line<'_>> = Vec::new();
        let rows = Rows {
            kind: false,
            hints: false,
            errors: false,
            name_max: 20,
        };
        let name_w = name_width(&form.fields, rows.name_max);
        for (i, f) in form.fields.iter().enumerate() {
            let selected = i == form.field;
            lines.push(field_row(f, selected, name_w, rows, inner.width, theme));
            if selected && let Some((values, _)) = form.offered.get(&i) {
                let offered = if values.is_empty() {
                    "  no completions".to_string()
                } else {
                    format!("  Ctrl-N: {}", values.join(" · "))
                };
                lines.push(Line::from(Span::styled(
                    fit(&offered, width),
                    theme.style(Role::Info),
                )));
            }
        }
        if let Target::Template { uri_template, .. } = &form.target {
            let values: HashMap<String, String> = form
                .fields
                .iter()
                .map(|f| (f.name.clone(), f.text.clone()))
                .collect();
            lines.push(Line::default());
            lines.push(Line::from(vec![
                Span::styled("uri ", theme.style(Role::Field)),
                Span::styled(expand(uri_template, &values), theme.style(Role::Value)),
            ]));
        }
        if let Some(f) = form.fields.get(form.field)
            && !f.description.is_empty()
        {
            lines.push(Line::from(Span::styled(
                f.description.clone(),
                theme.style(Role::Muted),
            )));
        }
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }

    fn render_shown(&self, area: Rect, scroll: &mut Scroll, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some(shown) = &self.shown else { return };
        let state = match &shown.lines {
            None => "…",
            Some(Ok(_)) => "",
            Some(Err(_)) => " · error",
        };
        let block = area_block(ui, &format!(" {}{state} ", shown.title), true);
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = usize::from(inner.height);
        let width = usize::from(inner.width);
        let lines: Vec<(Role, String)> = match &shown.lines {
            None => vec![(Role::Muted, "waiting for the answer…".into())],
            Some(Ok(lines)) => lines.clone(),
            Some(Err(lines)) => lines.iter().map(|l| (Role::Error, l.clone())).collect(),
        };
        // Every line whole: a long one goes on in the rows under it.
        let lines = wrap_lines(&lines, width);
        let top = scroll.shown_filled(rows, lines.len());
        for (k, (role, text)) in lines.iter().skip(top).take(rows).enumerate() {
            buf.set_stringn(
                inner.x,
                inner.y + k as u16,
                fit(text, width),
                width,
                theme.style(*role),
            );
        }
    }
}

fn row_role(selected: bool, focused: bool) -> Role {
    match (selected, focused) {
        (true, true) => Role::Selected,
        (true, false) => Role::SelectedInactive,
        _ => Role::Text,
    }
}

/// Why a list is empty: loading, failed, or not offered.
fn listing_note(listing: &Listing) -> Option<String> {
    if listing.loading {
        return Some("listing…".into());
    }
    listing.error.clone()
}

/// Draws rows, keeping the selected one on screen.
fn draw_rows(
    rows: &[(Role, String)],
    selected: usize,
    top: &mut usize,
    inner: Rect,
    width: usize,
    buf: &mut Buffer,
    theme: &crate::tui::theme::Theme,
) {
    let height = usize::from(inner.height);
    if height == 0 {
        return;
    }
    if selected < *top {
        *top = selected;
    } else if selected >= *top + height {
        *top = selected + 1 - height;
    }
    for (k, (role, text)) in rows.iter().enumerate().skip(*top).take(height) {
        let mark = if k == selected && matches!(role, Role::Selected | Role::SelectedInactive) {
            SELECTED_MARK
        } else {
            "  "
        };
        buf.set_stringn(
            inner.x,
            inner.y + (k - *top) as u16,
            format!("{:<width$}", fit(&format!("{mark}{text}"), width)),
            width,
            theme.style(*role),
        );
    }
}
