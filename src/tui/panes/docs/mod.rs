//! The Docs pane: the reference docs through the docs tools. A search box whose results
//! follow each key typed, the open doc's Markdown drawn as readable text, its links
//! out and in (Enter follows one; Backspace goes back through the docs opened before),
//! and the docs linked to the entity selected in the Entities pane.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};
use serde_json::{Value, json};

use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::{Ctx, EventState, Pane, Ui};
use crate::tui::theme::{Role, Theme};
use crate::tui::widgets::area_block;
use crate::tui::widgets::cursor::{SCROLLING, Scroll, moved};
use crate::tui::widgets::text::SELECTED_MARK;

mod markdown;

use markdown::markdown_lines;

const SEARCH_TOOL: &str = "structs_docs_search";
const GET_TOOL: &str = "structs_docs_get";
const REFERENCES_TOOL: &str = "structs_docs_list_references";
/// Results one search shows.
const RESULTS: usize = 20;
/// Docs the back stack remembers.
const BACK_STACK: usize = 50;
/// Content asked for per call (the tool's largest piece).
const PIECE: usize = 16_000;

/// The pane's areas, in focus order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    Search,
    Results,
    Doc,
    Links,
    Entity,
}

const AREAS: [Area; 5] = [
    Area::Search,
    Area::Results,
    Area::Doc,
    Area::Links,
    Area::Entity,
];

/// A doc in a list: a search hit, a link or a doc linked to the entity.
#[derive(Debug, Clone)]
struct Row {
    doc_id: String,
    title: String,
    /// What the list says beside the title: the type, the relation and direction, or
    /// where the link comes from.
    note: String,
    /// A search hit's snippet.
    snippet: Option<String>,
    exists: bool,
}

/// The doc on show.
#[derive(Debug)]
struct OpenDoc {
    doc_id: String,
    title: String,
    doc_type: String,
    tags: Vec<String>,
    summary: String,
    content: String,
    /// False while more pieces of the content are being fetched.
    complete: bool,
    informs: Vec<String>,
    warnings: Vec<String>,
}

/// A list with a selection.
#[derive(Debug, Default)]
struct Pick {
    rows: Vec<Row>,
    at: usize,
}

impl Pick {
    fn set(&mut self, rows: Vec<Row>) {
        self.rows = rows;
        self.at = 0;
    }

    fn selected(&self) -> Option<&Row> {
        self.rows.get(self.at)
    }

    fn step(&mut self, command: Command) {
        if let Some(row) = moved(command, self.at, self.rows.len(), 1) {
            self.at = row;
        }
    }
}

pub(crate) struct DocsPane {
    focus: Area,
    query: String,
    /// The search in flight (older answers are dropped).
    search_request: Option<RequestId>,
    /// The query the results are for.
    searched: String,
    results: Pick,
    /// The doc being fetched (its id) and the call.
    open_request: Option<(RequestId, String)>,
    doc: Option<OpenDoc>,
    scroll: Scroll,
    links: Pick,
    /// Docs opened before the one on show, most recent last.
    back: Vec<String>,
    /// True while the doc being fetched was opened (not gone back to): the doc on show
    /// then goes on the back stack when it arrives.
    remember: bool,
    /// The entity selected in the Entities pane when this tab was shown.
    entity: Option<String>,
    entity_request: Option<RequestId>,
    entity_docs: Pick,
    /// Why the last search or open failed.
    error: Option<String>,
}

impl DocsPane {
    pub fn new() -> DocsPane {
        DocsPane {
            focus: Area::Results,
            query: String::new(),
            search_request: None,
            searched: String::new(),
            results: Pick::default(),
            open_request: None,
            doc: None,
            scroll: Scroll::default(),
            links: Pick::default(),
            back: Vec::new(),
            remember: false,
            entity: None,
            entity_request: None,
            entity_docs: Pick::default(),
            error: None,
        }
    }

    /// The tab is being shown with `entity` selected in the Entities pane: ask for the
    /// docs linked to it (directly, through its kind, or a struct's type).
    pub fn show_entity(&mut self, entity: Option<String>, ctx: &mut Ctx<'_>) {
        if entity == self.entity {
            return;
        }
        self.entity = entity;
        self.entity_docs.set(Vec::new());
        self.entity_request = self.entity.as_ref().map(|id| {
            ctx.dispatcher.call(
                REFERENCES_TOOL,
                json!({"source_kind": "entity", "source_id": id, "include_kind_links": true}),
            )
        });
    }

    /// Opens `doc_id` (remembering the doc on show for Back).
    pub fn open(&mut self, doc_id: &str, ctx: &mut Ctx<'_>) {
        self.fetch(doc_id, ctx);
        self.remember = true;
    }

    fn fetch(&mut self, doc_id: &str, ctx: &mut Ctx<'_>) {
        self.remember = false;
        let id = ctx
            .dispatcher
            .call(GET_TOOL, json!({"doc_id": doc_id, "max_chars": PIECE}));
        self.open_request = Some((id, doc_id.to_string()));
    }

    fn search(&mut self, ctx: &mut Ctx<'_>) {
        let query = self.query.trim().to_string();
        if query.is_empty() {
            self.search_request = None;
            self.searched.clear();
            self.results.set(Vec::new());
            return;
        }
        self.search_request = Some(
            ctx.dispatcher
                .call(SEARCH_TOOL, json!({"query": query, "limit": RESULTS})),
        );
    }

    fn on_search(&mut self, result: &Result<Value, crate::error::ToolError>) {
        match result {
            Ok(v) => {
                self.error = None;
                self.searched = v["query"].as_str().unwrap_or_default().to_string();
                let rows = v["hits"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|h| Row {
                        doc_id: text(&h["doc_id"]),
                        title: text(&h["title"]),
                        note: text(&h["type"]),
                        snippet: h["snippet"].as_str().map(str::to_string),
                        exists: true,
                    })
                    .collect();
                self.results.set(rows);
            }
            Err(e) => self.error = Some(format!("{}: {}", e.code.as_str(), e.message)),
        }
    }

    fn on_doc(
        &mut self,
        doc_id: &str,
        result: &Result<Value, crate::error::ToolError>,
        ctx: &mut Ctx<'_>,
    ) {
        let v = match result {
            Ok(v) => v,
            Err(e) => {
                ctx.status.tool_error(&format!("opening doc {doc_id}"), e);
                return;
            }
        };
        let offset = v["content_range"]["offset"].as_u64().unwrap_or(0);
        let next = v["content_range"]["next_offset"].as_u64();
        let piece = text(&v["content"]);
        if offset > 0 {
            // A further piece of the doc on show.
            if let Some(doc) = self.doc.as_mut().filter(|d| d.doc_id == doc_id) {
                doc.content.push_str(&piece);
                doc.complete = next.is_none();
            }
        } else {
            // The doc on show goes on the back stack once the new one has come.
            if self.remember
                && let Some(previous) = self.doc.as_ref().filter(|d| d.doc_id != doc_id)
            {
                self.back.push(previous.doc_id.clone());
                if self.back.len() > BACK_STACK {
                    self.back.remove(0);
                }
            }
            self.remember = false;
            let mut links: Vec<Row> = Vec::new();
            for (dir, arrow) in [("out", "→"), ("in", "←")] {
                for l in v["links"][dir].as_array().into_iter().flatten() {
                    links.push(Row {
                        doc_id: text(&l["doc_id"]),
                        title: l["title"].as_str().unwrap_or("(missing)").to_string(),
                        note: format!(
                            "{arrow} {}{}",
                            text(&l["relation"]),
                            if l["origin"] == "inferred" {
                                " (md)"
                            } else {
                                ""
                            }
                        ),
                        snippet: None,
                        exists: l["exists"] != false,
                    });
                }
            }
            self.doc = Some(OpenDoc {
                doc_id: text(&v["doc_id"]),
                title: text(&v["title"]),
                doc_type: text(&v["type"]),
                tags: v["tags"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(text)
                    .collect(),
                summary: text(&v["summary"]),
                content: piece,
                complete: next.is_none(),
                informs: v["informs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|i| match i["relation"].as_str() {
                        Some("informs") | None => text(&i["label"]),
                        Some(r) => format!("{} ({r})", text(&i["label"])),
                    })
                    .collect(),
                warnings: v["warnings"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|w| text(&w["message"]))
                    .collect(),
            });
            self.links.set(links);
            self.scroll.reset();
        }
        if let Some(next) = next {
            let id = ctx.dispatcher.call(
                GET_TOOL,
                json!({"doc_id": doc_id, "offset": next, "max_chars": PIECE}),
            );
            self.open_request = Some((id, doc_id.to_string()));
        }
    }

    fn on_entity_docs(&mut self, result: &Result<Value, crate::error::ToolError>) {
        let rows = match result {
            Ok(v) => v["references"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| Row {
                    doc_id: text(&r["target_doc_id"]),
                    title: r["title"].as_str().unwrap_or("(missing)").to_string(),
                    // Short, to leave the width to the title: `itself`, `kind`, `type 14`.
                    note: match r["via"].as_str() {
                        Some(via) if via.starts_with("its struct type ") => {
                            let rest = via.trim_start_matches("its struct type ");
                            format!("type {}", rest.split(' ').next().unwrap_or(rest))
                        }
                        Some(_) => "kind".to_string(),
                        None => "itself".to_string(),
                    },
                    snippet: None,
                    exists: r["target_exists"] != false,
                })
                .collect(),
            Err(e) => {
                self.error = Some(format!("{}: {}", e.code.as_str(), e.message));
                Vec::new()
            }
        };
        self.entity_docs.set(rows);
    }

    fn pick(&mut self) -> Option<&mut Pick> {
        match self.focus {
            Area::Results => Some(&mut self.results),
            Area::Links => Some(&mut self.links),
            Area::Entity => Some(&mut self.entity_docs),
            Area::Search | Area::Doc => None,
        }
    }

    fn doc_lines(&self) -> usize {
        self.doc
            .as_ref()
            .map_or(0, |d| d.content.lines().count() + 4)
    }

    fn search_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        match ctx.keymap.command(Scope::DocsSearch, key) {
            Some(Command::ShowResults | Command::LeaveSearch) => self.focus = Area::Results,
            Some(Command::EraseChar) => {
                self.query.pop();
                self.search(ctx);
            }
            Some(Command::ClearText) => {
                self.query.clear();
                self.search(ctx);
            }
            Some(c @ (Command::FocusNext | Command::FocusPrev)) => self.run(c, ctx),
            Some(_) => {}
            None => match key.code {
                KeyCode::Char(c)
                    if !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    if self.query.chars().count() < 200 {
                        self.query.push(c);
                        self.search(ctx);
                    }
                }
                _ => return EventState::NotConsumed,
            },
        }
        EventState::Consumed
    }

    fn render_search(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let focused = self.focus == Area::Search;
        let mut spans = vec![
            Span::styled(" search › ", theme.style(Role::Prompt)),
            Span::styled(self.query.clone(), theme.style(Role::Text)),
        ];
        if focused {
            spans.push(Span::styled("█", theme.style(Role::Prompt)));
        } else if self.query.is_empty() {
            spans.push(Span::styled(
                "press / and type words or a question",
                theme.style(Role::Muted),
            ));
        }
        Paragraph::new(Line::from(spans))
            .block(area_block(ui, " Docs ", focused))
            .render(area, buf);
    }

    fn render_list(
        pick: &Pick,
        title: String,
        empty: &str,
        focused: bool,
        area: Rect,
        buf: &mut Buffer,
        ui: &Ui<'_>,
    ) {
        let theme = ui.theme;
        let block = area_block(ui, &title, focused);
        let inner = block.inner(area);
        block.render(area, buf);
        if pick.rows.is_empty() {
            Paragraph::new(Span::styled(empty.to_string(), theme.style(Role::Muted)))
                .wrap(Wrap { trim: true })
                .render(inner, buf);
            return;
        }
        let with_snippets = pick.rows.iter().any(|r| r.snippet.is_some());
        // Links and the entity's docs lead with how they are linked, in a column.
        let lead = !with_snippets;
        let note_width = pick
            .rows
            .iter()
            .map(|r| r.note.chars().count())
            .max()
            .unwrap_or(0)
            .min(28);
        let per_row = if with_snippets { 2 } else { 1 };
        let visible = (usize::from(inner.height) / per_row).max(1);
        let first = pick.at.saturating_sub(visible - 1);
        let mut lines = Vec::new();
        for (i, row) in pick.rows.iter().enumerate().skip(first).take(visible) {
            let selected = i == pick.at;
            let style = if selected {
                theme.style(if focused {
                    Role::Selected
                } else {
                    Role::SelectedInactive
                })
            } else if row.exists {
                theme.style(Role::Text)
            } else {
                theme.style(Role::Error)
            };
            let mark = if selected { SELECTED_MARK } else { "  " };
            lines.push(Line::from(if lead {
                vec![
                    Span::styled(mark.to_string(), style),
                    Span::styled(
                        format!("{:<width$} ", row.note, width = note_width),
                        theme.style(Role::Muted),
                    ),
                    Span::styled(row.title.clone(), style),
                ]
            } else {
                vec![
                    Span::styled(format!("{mark}{}", row.title), style),
                    Span::styled(format!("  {}", row.note), theme.style(Role::Muted)),
                ]
            }));
            if with_snippets {
                let snippet = row.snippet.as_deref().unwrap_or("");
                let mut spans = vec![Span::raw("    ")];
                spans.extend(bold_marked(snippet, theme));
                lines.push(Line::from(spans));
            }
        }
        Paragraph::new(lines).render(inner, buf);
    }

    fn render_doc(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let doc_lines = self.doc_lines();
        let theme = ui.theme;
        let focused = self.focus == Area::Doc;
        let Some(doc) = &self.doc else {
            let hint = match &self.open_request {
                Some((_, id)) => format!("opening {id}…"),
                None => "Open a result with Enter to read it here.".to_string(),
            };
            Paragraph::new(Span::styled(hint, theme.style(Role::Muted)))
                .block(area_block(ui, " Doc ", focused))
                .render(area, buf);
            return;
        };
        let title = format!(" {} · {} ", doc.doc_id, doc.doc_type);
        let mut lines = vec![Line::from(Span::styled(
            doc.title.clone(),
            theme.style(Role::Title).add_modifier(Modifier::BOLD),
        ))];
        if !doc.summary.is_empty() {
            lines.push(Line::from(Span::styled(
                doc.summary.clone(),
                theme.style(Role::Muted),
            )));
        }
        let mut meta = Vec::new();
        if !doc.tags.is_empty() {
            meta.push(format!("tags: {}", doc.tags.join(", ")));
        }
        if !doc.informs.is_empty() {
            meta.push(format!("informs: {}", folded(&doc.informs, INFORMS_SHOWN)));
        }
        if !meta.is_empty() {
            lines.push(Line::from(Span::styled(
                meta.join(" · "),
                theme.style(Role::Muted),
            )));
        }
        for w in &doc.warnings {
            lines.push(Line::from(Span::styled(
                format!("warning: {w}"),
                theme.style(Role::Error),
            )));
        }
        lines.push(Line::default());
        lines.extend(markdown_lines(&doc.content, theme));
        if !doc.complete {
            lines.push(Line::from(Span::styled(
                "loading the rest…",
                theme.style(Role::Muted),
            )));
        }
        let footer = if self.back.is_empty() {
            String::new()
        } else {
            format!(" back: {} ", self.back.len())
        };
        let block = area_block(ui, &title, focused).title_bottom(
            Line::from(Span::styled(footer, theme.style(Role::Muted))).right_aligned(),
        );
        let top = self
            .scroll
            .shown(usize::from(area.height.saturating_sub(2)), doc_lines);
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((u16::try_from(top).unwrap_or(u16::MAX), 0))
            .block(block)
            .render(area, buf);
    }

    fn render_links(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let title = match &self.doc {
            Some(doc) => format!(" Links of {} ({}) ", doc.doc_id, self.links.rows.len()),
            None => " Links ".to_string(),
        };
        Self::render_list(
            &self.links,
            title,
            "No links out or in.",
            self.focus == Area::Links,
            area,
            buf,
            ui,
        );
    }

    fn render_entity(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let Some(entity) = &self.entity else { return };
        let empty = if self.entity_request.is_some() {
            "loading…".to_string()
        } else {
            format!("No doc is linked to {entity}, its kind or its type.")
        };
        Self::render_list(
            &self.entity_docs,
            format!(" Docs for {entity} ({}) ", self.entity_docs.rows.len()),
            &empty,
            self.focus == Area::Entity,
            area,
            buf,
            ui,
        );
    }
}

impl Pane for DocsPane {
    fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match command {
            Command::FocusNext | Command::FocusPrev => {
                let at = AREAS.iter().position(|a| *a == self.focus).unwrap_or(0);
                let n = AREAS.len();
                let mut next = at;
                loop {
                    next = if command == Command::FocusNext {
                        (next + 1) % n
                    } else {
                        (next + n - 1) % n
                    };
                    // The entity's docs are an area only while an entity is selected.
                    if AREAS[next] != Area::Entity || self.entity.is_some() {
                        break;
                    }
                }
                self.focus = AREAS[next];
            }
            Command::Search => self.focus = Area::Search,
            Command::Up | Command::Down | Command::Top | Command::Bottom
                if self.focus != Area::Doc =>
            {
                if let Some(pick) = self.pick() {
                    pick.step(command);
                }
            }
            command if SCROLLING.contains(&command) => {
                self.scroll.on(command);
            }
            Command::OpenDoc => {
                let row = self.pick().and_then(|p| p.selected().cloned());
                match row {
                    Some(row) if row.exists => {
                        self.open(&row.doc_id, ctx);
                        self.focus = Area::Doc;
                    }
                    Some(row) => ctx.status.error(format!(
                        "{} is linked but is not a doc under the root",
                        row.doc_id
                    )),
                    None => {}
                }
            }
            Command::DocBack => {
                if let Some(previous) = self.back.pop() {
                    self.fetch(&previous, ctx);
                    ctx.status.info(format!("back to {previous}"));
                }
            }
            _ => {}
        }
    }

    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        if self.focus == Area::Search {
            return self.search_key(key, ctx);
        }
        self.run_key(key, ctx)
    }

    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self.search_request == Some(reply.id) {
            self.search_request = None;
            self.on_search(&reply.result);
            return true;
        }
        if let Some((id, doc_id)) = &self.open_request
            && *id == reply.id
        {
            let doc_id = doc_id.clone();
            self.open_request = None;
            self.on_doc(&doc_id, &reply.result, ctx);
            return true;
        }
        if self.entity_request == Some(reply.id) {
            self.entity_request = None;
            self.on_entity_docs(&reply.result);
            return true;
        }
        false
    }

    fn scope(&self) -> Scope {
        match self.focus {
            Area::Search => Scope::DocsSearch,
            Area::Doc => Scope::DocsView,
            Area::Results | Area::Links | Area::Entity => Scope::DocsList,
        }
    }

    fn captures_text(&self) -> bool {
        self.focus == Area::Search
    }

    fn commands(&self) -> Vec<Command> {
        let mut out = Vec::new();
        match self.focus {
            Area::Search => {
                out.extend([Command::ShowResults, Command::LeaveSearch]);
                if !self.query.is_empty() {
                    out.extend([Command::EraseChar, Command::ClearText]);
                }
            }
            Area::Doc => {
                if self.doc.is_some() {
                    out.extend(SCROLLING);
                }
                out.push(Command::Search);
            }
            Area::Results | Area::Links | Area::Entity => {
                let pick = match self.focus {
                    Area::Results => &self.results,
                    Area::Links => &self.links,
                    _ => &self.entity_docs,
                };
                if !pick.rows.is_empty() {
                    out.extend([
                        Command::Up,
                        Command::Down,
                        Command::Top,
                        Command::Bottom,
                        Command::OpenDoc,
                    ]);
                }
                out.push(Command::Search);
            }
        }
        if !self.back.is_empty() && self.focus != Area::Search {
            out.push(Command::DocBack);
        }
        out.extend([Command::FocusNext, Command::FocusPrev]);
        out
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.width < 70 {
            // Narrow: the search box and the focused area (the results while the
            // search has the focus).
            let [search, rest] =
                Layout::vertical([Constraint::Length(3), Constraint::Min(0)]).areas(area);
            self.render_search(search, buf, ui);
            match self.focus {
                Area::Search | Area::Results => Self::render_list(
                    &self.results,
                    self.results_title(),
                    &self.results_empty(),
                    self.focus == Area::Results,
                    rest,
                    buf,
                    ui,
                ),
                Area::Doc => self.render_doc(rest, buf, ui),
                Area::Links => self.render_links(rest, buf, ui),
                Area::Entity => self.render_entity(rest, buf, ui),
            }
            return;
        }
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)])
                .areas(area);
        let entity_rows = if self.entity.is_some() {
            (self.entity_docs.rows.len() as u16 + 2).clamp(3, 10)
        } else {
            0
        };
        let [search, results, entity] = Layout::vertical([
            Constraint::Length(3),
            Constraint::Min(3),
            Constraint::Length(entity_rows),
        ])
        .areas(left);
        self.render_search(search, buf, ui);
        Self::render_list(
            &self.results,
            self.results_title(),
            &self.results_empty(),
            self.focus == Area::Results,
            results,
            buf,
            ui,
        );
        self.render_entity(entity, buf, ui);
        let link_rows = (self.links.rows.len() as u16 + 2).clamp(3, 9);
        let [doc, links] =
            Layout::vertical([Constraint::Min(5), Constraint::Length(link_rows)]).areas(right);
        self.render_doc(doc, buf, ui);
        self.render_links(links, buf, ui);
    }
}

impl DocsPane {
    fn results_title(&self) -> String {
        if self.searched.is_empty() {
            " Results ".to_string()
        } else {
            format!(
                " Results for {:?} ({}) ",
                self.searched,
                self.results.rows.len()
            )
        }
    }

    fn results_empty(&self) -> String {
        match (&self.error, self.query.trim().is_empty()) {
            (Some(e), _) => e.clone(),
            (None, true) => {
                "Press / and type words or a question: the results follow each key. Tab \
                 moves between the search, the results, the doc, its links and the docs \
                 of the entity selected in Entities."
                    .to_string()
            }
            (None, false) if self.search_request.is_some() => "searching…".to_string(),
            (None, false) => "No doc matches these words.".to_string(),
        }
    }
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// A snippet with its `**matches**` drawn bold.
fn bold_marked(snippet: &str, theme: &Theme) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    for (i, part) in snippet.split("**").enumerate() {
        if part.is_empty() {
            continue;
        }
        let style = if i % 2 == 1 {
            theme.style(Role::Text).add_modifier(Modifier::BOLD)
        } else {
            theme.style(Role::Muted)
        };
        out.push(Span::styled(part.to_string(), style));
    }
    out
}

/// What the header of a doc names of the entities it informs, at most: a doc about
/// every struct type informs 23 of them, which would fill the pane before its text.
const INFORMS_SHOWN: usize = 4;

/// `items` joined, the first `shown` of them and a count of the rest when there are
/// more (`a, b, c and 20 more`).
fn folded(items: &[String], shown: usize) -> String {
    if items.len() <= shown {
        return items.join(", ");
    }
    let head = &items[..shown.saturating_sub(1)];
    format!("{} and {} more", head.join(", "), items.len() - head.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::tab::Tab;
    use crate::tui::testing::TestDesk;

    #[test]
    fn a_search_result_opens_and_back_returns_to_the_doc_before() {
        let desk = &mut TestDesk::new(Tab::Docs);
        let mut pane = DocsPane::new();
        desk.press(&mut pane, Command::Search);
        assert_eq!(pane.scope(), Scope::DocsSearch);
        pane.query = "mining ore".into();
        pane.search(&mut desk.ctx());
        desk.settle(&mut pane);
        pane.focus = Area::Results;
        assert!(pane.results.rows.len() > 1, "{:?}", pane.error);

        desk.press(&mut pane, Command::OpenDoc);
        let first = pane.doc.as_ref().map(|d| d.doc_id.clone()).expect("a doc");
        assert_eq!(first, pane.results.rows[0].doc_id);
        assert_eq!(pane.scope(), Scope::DocsView);

        desk.press(&mut pane, Command::FocusPrev);
        assert_eq!(pane.focus, Area::Results);
        desk.press(&mut pane, Command::Down);
        desk.press(&mut pane, Command::OpenDoc);
        let second = pane.doc.as_ref().map(|d| d.doc_id.clone()).expect("a doc");
        assert_eq!(second, pane.results.rows[1].doc_id);
        assert_ne!(first, second);

        desk.press(&mut pane, Command::DocBack);
        assert_eq!(
            pane.doc.as_ref().map(|d| d.doc_id.as_str()),
            Some(first.as_str())
        );
    }
}
