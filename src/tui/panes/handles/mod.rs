//! The Handles pane: the live result handles, and one handle's stored result fetched a
//! page at a time as a tree.
//!
//! ```text
//! ╭ Handles · 2 live · memory store ───────────────────────────────────────────╮
//! │   handle                               tool                  size  rows …  │
//! │ › structs:player:1795262400:3f9a1c07…  structs_list_players  71.2 KB  103 …│
//! ╰────────────────────────────────────────────────── TTL 15m · as of 10:00:00 ╯
//! ╭ structs:player:1795262400:3f9a1c07… · page 1/5 · rows 1-20 of 103 ─────────╮
//! │ ▾ players [20]                                                             │
//! │   ▸ [0] 1-1 player                                                         │
//! ╰─────────────────────────────────────────────────────────── raw · 22.4 KB ──╯
//! ```
//!
//! - The list comes from `structs_handle_list`: asked for when the tab is shown, on
//!   `r`, after each fetch (hits change) and every few seconds while on show (see
//!   [`HandlesPane::tick`]). Ages and times to expiry are as of that listing. With a
//!   Redis store shared with headless servers, it holds the handles agents made.
//! - Enter fetches the selected handle's first page with `structs_handle_fetch`; `n`/`p`
//!   page, `f` edits the field selection (comma-separated paths, as the tool takes
//!   them), `v` steps the verbosity (raw, detailed, compact, summary), each fetching
//!   anew. The page's data is drawn as the entity trees draw fields ([`Fields`]), so an
//!   id opens into its entity, fetched on demand.
//! - `c` copies the page's data, pretty-printed JSON, to the clipboard; where there is
//!   none, the status line says so and nothing else happens.
//! - Only the latest fetch's answer is applied; one overtaken by a newer fetch is
//!   dropped.

mod render;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    HighlightSpacing, Paragraph, Row, StatefulWidget, Table, TableState, Widget, Wrap,
};
use serde_json::{Value, json};

use crate::tui::clipboard::Clipboard;
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::{Ctx, EventState, Pane, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::area_block;
use crate::tui::widgets::cursor::{ROWS, moved};
use crate::tui::widgets::fields::{Fetched, Fields};
use crate::tui::widgets::page::{FETCH_TOOL, Page, cut_handle, first_collection};
use crate::tui::widgets::text::SELECTED_MARK;
use crate::tui::widgets::tree::{Node, TreeView};

/// The tool that lists the live handles.
const LIST_TOOL: &str = "structs_handle_list";

/// The verbosities `v` steps through, starting from the whole data.
const VERBOSITIES: [&str; 4] = ["raw", "detailed", "compact", "summary"];

/// The longest field selection the prompt takes.
const MAX_FIELDS_LEN: usize = 200;

/// Below this height only the focused area is drawn.
const TALL: u16 = 14;

/// From this width on, the list shows whole handles and tool names.
const WIDE: u16 = 110;

/// From this width on, the list shows every column.
const MEDIUM: u16 = 80;

/// How often the list is asked for again while the pane is on show.
pub(crate) const REFRESH_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    List,
    Data,
}

/// One live handle, as listed.
#[derive(Debug, Clone)]
struct HandleRow {
    handle: String,
    tool: String,
    size_bytes: u64,
    rows: u64,
    age_sec: u64,
    expires_in_sec: u64,
    hits: u64,
}

impl HandleRow {
    fn parse(v: &Value) -> Option<HandleRow> {
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(HandleRow {
            handle: v.get("handle")?.as_str()?.to_string(),
            tool: v.get("tool_name")?.as_str()?.to_string(),
            size_bytes: n("size_bytes"),
            rows: n("rows"),
            age_sec: n("age_sec"),
            expires_in_sec: n("expires_in_sec"),
            hits: n("hits"),
        })
    }

    /// `player 3f9a1c07`: the handle's entity and hash, for narrow lists.
    /// The handle with its random part cut to the first 8 digits (`…` after them),
    /// which tell handles apart at a glance.
    fn cut(&self) -> String {
        cut_handle(&self.handle)
    }

    fn short(&self) -> String {
        let parts: Vec<&str> = self.handle.split(':').collect();
        match parts.as_slice() {
            // The random part's first 8 digits tell handles apart at a glance.
            [_, entity, _, hash] => {
                format!("{entity} {}", hash.chars().take(8).collect::<String>())
            }
            _ => self.handle.clone(),
        }
    }
}

/// The answer of the handle list.
#[derive(Debug)]
struct Listing {
    rows: Vec<HandleRow>,
    total: u64,
    store: String,
    ttl_secs: u64,
    /// When the list was made (`10:00:00`).
    at: String,
}

impl Listing {
    fn parse(v: &Value) -> Listing {
        let rows: Vec<HandleRow> = v["handles"]
            .as_array()
            .map(|a| a.iter().filter_map(HandleRow::parse).collect())
            .unwrap_or_default();
        let at = v["timestamp"]
            .as_str()
            .and_then(|t| t.get(11..19))
            .unwrap_or("")
            .to_string();
        Listing {
            total: v["total"].as_u64().unwrap_or(rows.len() as u64),
            rows,
            store: v["store"].as_str().unwrap_or("?").to_string(),
            ttl_secs: v["ttl_secs"].as_u64().unwrap_or(0),
            at,
        }
    }
}

/// A fetch in flight.
#[derive(Debug)]
struct PageRequest {
    id: RequestId,
    handle: String,
    page: u64,
}

/// The Handles pane.
pub(crate) struct HandlesPane {
    listing: Option<Result<Listing, String>>,
    list_request: Option<RequestId>,
    table: TableState,
    focus: Area,
    /// The latest fetch asked for; its answer replaces `page`.
    page_request: Option<PageRequest>,
    /// The page on show, or why the latest fetch failed.
    page: Option<Result<Page, String>>,
    /// The handle the failed fetch was for, while `page` is an error.
    failed_handle: Option<String>,
    /// Entities fetched for ids opened in the data tree.
    fetched: Fetched,
    view: TreeView,
    /// The field selection applied to fetches; empty for none.
    fields: String,
    /// The selection as typed, while the prompt is open.
    draft: String,
    editing: bool,
    verbosity: usize,
    clipboard: Box<dyn Clipboard>,
}

impl HandlesPane {
    pub fn new(clipboard: Box<dyn Clipboard>) -> HandlesPane {
        HandlesPane {
            listing: None,
            list_request: None,
            table: TableState::default(),
            focus: Area::List,
            page_request: None,
            page: None,
            failed_handle: None,
            fetched: Fetched::default(),
            view: TreeView::default(),
            fields: String::new(),
            draft: String::new(),
            editing: false,
            verbosity: 0,
            clipboard,
        }
    }

    /// Asks for the list of live handles (unless that is already on its way).
    pub fn refresh(&mut self, ctx: &mut Ctx<'_>) {
        if self.list_request.is_none() {
            self.list_request = Some(ctx.dispatcher.call(LIST_TOOL, json!({"scope": "all"})));
        }
    }

    /// [`HandlesPane::refresh`] as the console's own polling, every few seconds.
    pub fn refresh_in_background(&mut self, ctx: &mut Ctx<'_>) {
        if self.list_request.is_none() {
            self.list_request = Some(ctx.dispatcher.poll(LIST_TOOL, json!({"scope": "all"})));
        }
    }

    fn rows(&self) -> &[HandleRow] {
        match &self.listing {
            Some(Ok(listing)) => &listing.rows,
            _ => &[],
        }
    }

    fn selected_row(&self) -> Option<&HandleRow> {
        self.table.selected().and_then(|i| self.rows().get(i))
    }

    fn loaded_page(&self) -> Option<&Page> {
        self.page.as_ref().and_then(|p| p.as_ref().ok())
    }

    /// The handle whose data is on show or being fetched.
    fn inspected(&self) -> Option<&str> {
        if let Some(request) = &self.page_request {
            return Some(&request.handle);
        }
        match &self.page {
            Some(Ok(page)) => Some(&page.handle),
            Some(Err(_)) => self.failed_handle.as_deref(),
            None => None,
        }
    }

    /// Fetches `page` of `handle` with the pane's field selection and verbosity.
    fn fetch(&mut self, handle: String, page: u64, ctx: &mut Ctx<'_>) {
        let mut args = json!({"handle": handle, "page": page});
        if self.fields.is_empty() {
            args["verbosity"] = json!(VERBOSITIES[self.verbosity]);
        } else {
            args["fields"] = json!(self.fields);
        }
        let id = ctx.dispatcher.call(FETCH_TOOL, args);
        self.page_request = Some(PageRequest { id, handle, page });
    }

    /// Fetches the inspected handle's first page again (the selection changed).
    fn refetch(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(handle) = self.inspected().map(str::to_string) {
            self.fetch(handle, 1, ctx);
        }
    }

    fn copy(&mut self, ctx: &mut Ctx<'_>) {
        let Some(page) = self.loaded_page() else {
            return;
        };
        let text = serde_json::to_string_pretty(&page.data).unwrap_or_default();
        let what = format!(
            "page {}/{} of {} ({} bytes of JSON)",
            page.current,
            page.total_pages,
            cut_handle(&page.handle),
            text.len()
        );
        match self.clipboard.copy(&text) {
            Ok(way) => ctx.status.info(format!("copied {what} {}", way.way())),
            Err(why) => ctx.status.error(format!("nothing copied: {why}")),
        }
    }

    /// Keys while the field prompt is open.
    fn prompt_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        match ctx.keymap.command(Scope::Fields, key) {
            Some(Command::ApplyFields) => {
                self.editing = false;
                let fields = normalise_fields(&self.draft);
                if fields != self.fields {
                    self.fields = fields;
                    self.refetch(ctx);
                }
                if self.fields.is_empty() {
                    ctx.status.info(format!(
                        "all fields, verbosity {}",
                        VERBOSITIES[self.verbosity]
                    ));
                } else {
                    ctx.status.info(format!("fields {}", self.fields));
                }
            }
            Some(Command::DropFields) => {
                self.editing = false;
                self.draft.clear();
                if !self.fields.is_empty() {
                    self.fields.clear();
                    self.refetch(ctx);
                }
            }
            Some(Command::EraseChar) => {
                self.draft.pop();
            }
            Some(_) => {}
            None => match key.code {
                KeyCode::Char(c)
                    if !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    if !(c.is_alphanumeric() || "_.,- ".contains(c)) {
                        ctx.status.info(
                            "field paths are names joined by dots, separated by commas: \
                             id,owner,gridAttributes.ore",
                        );
                    } else if self.draft.len() >= MAX_FIELDS_LEN {
                        ctx.status.info(format!(
                            "a field selection is at most {MAX_FIELDS_LEN} characters here"
                        ));
                    } else {
                        self.draft.push(c);
                    }
                }
                _ => return EventState::NotConsumed,
            },
        }
        EventState::Consumed
    }

    /// Rebuilds the data tree after the page or the open nodes changed.
    fn rebuild(&mut self) {
        let nodes = match &self.page {
            Some(Ok(page)) => {
                let fields = Fields {
                    fetched: &self.fetched,
                    opened: self.view.opened(),
                };
                match &page.data {
                    Value::Object(map) if map.is_empty() => {
                        vec![Node::note("empty", Role::Muted, "no data on this page")]
                    }
                    Value::Object(map) => map
                        .iter()
                        .map(|(key, value)| {
                            fields.value(format!("k:{key}"), key, value, false, &[], &mut vec![])
                        })
                        .collect(),
                    other => {
                        vec![fields.value("k:data".into(), "data", other, false, &[], &mut vec![])]
                    }
                }
            }
            Some(Err(message)) => vec![Node::failed(message)],
            None => Vec::new(),
        };
        self.view.set_nodes(nodes);
    }

    fn on_list(&mut self, result: &Result<Value, crate::error::ToolError>, ctx: &mut Ctx<'_>) {
        let keep = self.selected_row().map(|r| r.handle.clone());
        match result {
            Ok(answer) => {
                let listing = Listing::parse(answer);
                let at = keep
                    .and_then(|h| listing.rows.iter().position(|r| r.handle == h))
                    .or_else(|| self.table.selected())
                    .map(|i| i.min(listing.rows.len().saturating_sub(1)));
                self.table.select(if listing.rows.is_empty() {
                    None
                } else {
                    at.or(Some(0))
                });
                self.listing = Some(Ok(listing));
            }
            Err(e) => {
                ctx.status.tool_error("listing the handles", e);
                self.listing = Some(Err(format!("{}: {}", e.code.as_str(), e.message)));
            }
        }
    }

    fn on_page(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) {
        let Some(request) = self.page_request.take() else {
            return;
        };
        match &reply.result {
            Ok(answer) => {
                let page = Page::parse(answer);
                let new_handle = self.loaded_page().is_none_or(|p| p.handle != page.handle);
                if new_handle {
                    self.view = TreeView::default();
                    self.fetched = Fetched::default();
                }
                self.page = Some(Ok(page));
                self.failed_handle = None;
                self.rebuild();
                // Open the first collection, where the rows are.
                if new_handle
                    && let Some(Page {
                        data: Value::Object(map),
                        ..
                    }) = self.loaded_page()
                    && let Some(key) = first_collection(map)
                {
                    let path = vec![format!("k:{key}")];
                    self.view.open(path.clone());
                    self.rebuild();
                    self.view.select_if_visible(path);
                }
            }
            Err(e) => {
                ctx.status.tool_error(
                    &format!(
                        "fetching page {} of {}",
                        request.page,
                        cut_handle(&request.handle)
                    ),
                    e,
                );
                self.page = Some(Err(format!("{}: {}", e.code.as_str(), e.message)));
                self.failed_handle = Some(request.handle);
                self.view = TreeView::default();
                self.rebuild();
            }
        }
        // Hits changed, or the handle is gone: the list is out of date.
        self.refresh(ctx);
    }
}

impl Pane for HandlesPane {
    fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match (self.focus, command) {
            (_, Command::FocusNext | Command::FocusPrev) => {
                self.focus = match self.focus {
                    Area::List => Area::Data,
                    Area::Data => Area::List,
                };
            }
            (_, Command::Refresh) => self.refresh(ctx),
            (_, Command::EditFields) => {
                self.draft = self.fields.clone();
                self.editing = true;
            }
            (_, Command::CycleVerbosity) => {
                self.verbosity = (self.verbosity + 1) % VERBOSITIES.len();
                let verbosity = VERBOSITIES[self.verbosity];
                if self.fields.is_empty() {
                    ctx.status.info(format!("verbosity {verbosity}"));
                    self.refetch(ctx);
                } else {
                    ctx.status.info(format!(
                        "verbosity {verbosity}, once the field selection is dropped \
                         (it overrides verbosity)"
                    ));
                }
            }
            (_, Command::CopyJson) => self.copy(ctx),
            (_, Command::NextPage | Command::PrevPage) => {
                if let Some(page) = self.loaded_page() {
                    let handle = page.handle.clone();
                    let next = if command == Command::NextPage {
                        page.current + 1
                    } else {
                        page.current.saturating_sub(1)
                    };
                    self.fetch(handle, next, ctx);
                }
            }
            (Area::List, command) if ROWS.contains(&command) => {
                let at = self.table.selected().unwrap_or(0);
                if let Some(row) = moved(command, at, self.rows().len(), 1) {
                    self.table.select(Some(row));
                }
            }
            (Area::List, Command::Inspect) => {
                if let Some(row) = self.selected_row() {
                    let handle = row.handle.clone();
                    self.fetch(handle, 1, ctx);
                    self.focus = Area::Data;
                }
            }
            (Area::Data, Command::Back) => self.focus = Area::List,
            (Area::Data, command) => {
                let change = self.view.run(command);
                if self.fetched.follow(change, ctx) {
                    self.rebuild();
                }
            }
            _ => {}
        }
    }

    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        if self.editing {
            return self.prompt_key(key, ctx);
        }
        self.run_key(key, ctx)
    }

    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self.list_request == Some(reply.id) {
            self.list_request = None;
            self.on_list(&reply.result, ctx);
            return true;
        }
        if self.page_request.as_ref().is_some_and(|r| r.id == reply.id) {
            self.on_page(reply, ctx);
            return true;
        }
        if self.fetched.on_reply(reply, ctx) {
            self.rebuild();
            return true;
        }
        false
    }

    fn scope(&self) -> Scope {
        if self.editing {
            return Scope::Fields;
        }
        match self.focus {
            Area::List => Scope::Handles,
            Area::Data => Scope::HandleData,
        }
    }

    fn captures_text(&self) -> bool {
        self.editing
    }

    fn commands(&self) -> Vec<Command> {
        let mut out = Vec::new();
        if self.editing {
            out.extend([Command::ApplyFields, Command::DropFields]);
            if !self.draft.is_empty() {
                out.push(Command::EraseChar);
            }
            return out;
        }
        match self.focus {
            Area::List => {
                if self.rows().len() > 1 {
                    out.extend(ROWS);
                }
                if self.selected_row().is_some() {
                    out.push(Command::Inspect);
                }
            }
            Area::Data => self.view.commands(&mut out),
        }
        // Paging steps from the page on show, so not while another fetch is on its way
        // (it may be of another handle, or of a new shape with other pages).
        if let Some(page) = self.loaded_page().filter(|_| self.page_request.is_none()) {
            if page.current < page.total_pages {
                out.push(Command::NextPage);
            }
            if page.current > 1 {
                out.push(Command::PrevPage);
            }
        }
        out.extend([Command::EditFields, Command::CycleVerbosity]);
        if self.loaded_page().is_some() {
            out.push(Command::CopyJson);
        }
        out.push(Command::Refresh);
        if self.focus == Area::Data {
            out.push(Command::Back);
        }
        out.extend([Command::FocusNext, Command::FocusPrev]);
        out
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let (main, prompt) = if self.editing && area.height > 0 {
            let [main, prompt] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
            (main, Some(prompt))
        } else {
            (area, None)
        };
        if main.height < TALL {
            match self.focus {
                Area::List => self.render_list(main, buf, ui),
                Area::Data => self.render_data(main, buf, ui),
            }
        } else {
            // The list takes what its rows need (borders and header too), up to 2/5.
            let wanted = u16::try_from(self.rows().len().max(1) + 3).unwrap_or(u16::MAX);
            let list_height = wanted.clamp(5, main.height * 2 / 5);
            let [list, data] =
                Layout::vertical([Constraint::Length(list_height), Constraint::Min(0)]).areas(main);
            self.render_list(list, buf, ui);
            self.render_data(data, buf, ui);
        }
        if let Some(prompt) = prompt {
            self.render_prompt(prompt, buf, ui);
        }
    }
}

/// The selection as the tool takes it: paths without spaces, no empty ones.
fn normalise_fields(text: &str) -> String {
    text.split(',')
        .map(|p| p.trim().replace(' ', ""))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}

/// `812 B`, `22.4 KB`, `3.1 MB` (of 1,024).
fn bytes(n: u64) -> String {
    if n < 1024 {
        return format!("{n} B");
    }
    let kb = n as f64 / 1024.0;
    if kb < 1024.0 {
        return format!("{kb:.1} KB");
    }
    format!("{:.1} MB", kb / 1024.0)
}

/// `45s`, `2m 05s`, `15m`, `1h 02m`, `2h`.
fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 if secs.is_multiple_of(60) => format!("{}m", secs / 60),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ if secs.is_multiple_of(3600) => format!("{}h", secs / 3600),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_read_easily() {
        assert_eq!(bytes(812), "812 B");
        assert_eq!(bytes(22_937), "22.4 KB");
        assert_eq!(bytes(3_250_000), "3.1 MB");
        assert_eq!(duration(45), "45s");
        assert_eq!(duration(125), "2m 05s");
        assert_eq!(duration(900), "15m");
        assert_eq!(duration(3720), "1h 02m");
        assert_eq!(duration(7200), "2h");
    }

    #[test]
    fn field_selections_are_tidied_for_the_tool() {
        assert_eq!(
            normalise_fields(" id, owner ,,grid Attributes.ore"),
            "id,owner,gridAttributes.ore"
        );
        assert_eq!(normalise_fields(" , "), "");
    }

    #[test]
    fn short_handles_keep_entity_and_hash() {
        let row = HandleRow {
            handle: "structs:player:1795262400:3f9a1c07".into(),
            tool: "structs_list_players".into(),
            size_bytes: 1,
            rows: 1,
            age_sec: 0,
            expires_in_sec: 0,
            hits: 0,
        };
        assert_eq!(row.short(), "player 3f9a1c07");
        let row = HandleRow {
            handle: "structs:player:1795262400:3f9a1c0700112233445566778899aabb".into(),
            ..row
        };
        assert_eq!(row.short(), "player 3f9a1c07");
        assert_eq!(row.cut(), "structs:player:1795262400:3f9a1c07…");
        assert_eq!(
            cut_handle("structs:player:1:0badc0de"),
            "structs:player:1:0badc0de"
        );
    }

    /// What the pane copied.
    use crate::tui::testing::KeptClipboard as Kept;

    #[test]
    fn a_handle_is_listed_inspected_paged_and_copied() {
        use crate::source::sim::WorldConfig;
        use crate::tui::tab::Tab;
        use crate::tui::testing::TestDesk;
        let desk = &mut TestDesk::with_world(Tab::Handles, WorldConfig::with_players(200));
        let answer = desk.call(
            "structs_list_players",
            json!({"page_size": 100, "include_references": true}),
        );
        assert_eq!(answer["status"], "partial", "the list is over 25 KB");
        let kept = Kept::default();
        let mut pane = HandlesPane::new(Box::new(kept.clone()));
        pane.refresh(&mut desk.ctx());
        desk.settle(&mut pane);
        assert_eq!(pane.rows().len(), 1);
        assert_eq!(pane.rows()[0].tool, "structs_list_players");

        desk.press(&mut pane, Command::Inspect);
        assert_eq!(pane.scope(), Scope::HandleData);
        let page = pane.loaded_page().expect("the first page");
        assert_eq!(page.current, 1);
        assert!(page.total_pages > 1, "{} pages", page.total_pages);

        desk.press(&mut pane, Command::NextPage);
        assert_eq!(pane.loaded_page().map(|p| p.current), Some(2));
        desk.press(&mut pane, Command::CopyJson);
        let copied = kept.0.lock().unwrap().clone();
        assert_eq!(copied.len(), 1);
        let json: Value = serde_json::from_str(&copied[0]).expect("the page's JSON");
        assert_eq!(Some(&json), pane.loaded_page().map(|p| &p.data));

        desk.press(&mut pane, Command::CycleVerbosity);
        assert_eq!(desk.status(), Some("verbosity detailed"));
        assert_eq!(
            pane.loaded_page().map(|p| p.verbosity.as_str()),
            Some("detailed")
        );
        desk.press(&mut pane, Command::Back);
        assert_eq!(pane.scope(), Scope::Handles);
    }

    #[test]
    fn the_field_prompt_starts_from_the_selection_in_use() {
        use crate::tui::tab::Tab;
        use crate::tui::testing::TestDesk;
        let desk = &mut TestDesk::new(Tab::Handles);
        let mut pane = HandlesPane::new(Box::new(Kept::default()));
        pane.fields = "id,owner".into();
        desk.press(&mut pane, Command::EditFields);
        assert!(pane.editing);
        assert_eq!(pane.draft, "id,owner");
        assert_eq!(pane.scope(), Scope::Fields);
        assert_eq!(
            pane.commands(),
            [
                Command::ApplyFields,
                Command::DropFields,
                Command::EraseChar
            ]
        );
    }
}
