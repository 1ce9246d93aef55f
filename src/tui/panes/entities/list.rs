//! One kind's entities, a page at a time, through `structs_list_entities`.
//!
//! The list keeps the page key of every page from the first to the one on show, so
//! going back asks for exactly the page seen before.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, HighlightSpacing, List, ListItem, ListState, Paragraph, StatefulWidget, Widget, Wrap,
};
use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::entity::{EntityId, EntityKind};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::Command;
use crate::tui::pane::{Ctx, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::cursor::moved;
use crate::tui::widgets::text::{SELECTED_MARK, fit_spans};

/// The tool behind the list.
const LIST_TOOL: &str = "structs_list_entities";

/// Entities per page until the list has been drawn; then as many as its height
/// shows, within [`MIN_PAGE`] and [`MAX_PAGE`].
pub(crate) const PAGE_SIZE: u64 = 20;
/// The fewest entities a page asks for, however short the list.
const MIN_PAGE: u64 = 5;
/// The most a page asks for (the list tools' limit).
const MAX_PAGE: u64 = 100;

/// Which page of which list.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Query {
    kind: EntityKind,
    /// Only ids starting with this.
    prefix: Option<String>,
    /// The key of every page from the first (`None`) to this one.
    keys: Vec<Option<String>>,
    /// Entities per page: the keys hold for this size only.
    size: u64,
}

impl Query {
    fn first_page(kind: EntityKind, prefix: Option<String>, size: u64) -> Query {
        Query {
            kind,
            prefix,
            keys: vec![None],
            size,
        }
    }

    fn args(&self) -> Value {
        let mut args = Map::new();
        args.insert("entity_type".into(), self.kind.name().into());
        args.insert("page_size".into(), self.size.into());
        if let Some(Some(key)) = self.keys.last() {
            args.insert("page_key".into(), key.clone().into());
        }
        if let Some(prefix) = &self.prefix {
            args.insert("id_prefix".into(), prefix.clone().into());
        }
        Value::Object(args)
    }
}

/// One listed entity.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// The entity's id; `None` for the kinds the chain keeps without one (infusions,
    /// addresses), which the row names by [`Row::key`].
    pub id: Option<EntityId>,
    /// What the row is known by: its id, or the record's key.
    pub key: String,
    pub summary: String,
    /// The entity as the list returned it, so opening it needs no second call.
    pub entity: Value,
}

/// A page on show.
#[derive(Debug)]
struct Page {
    query: Query,
    rows: Vec<Row>,
    next_key: Option<String>,
    total: u64,
}

impl Page {
    /// The width of the longest id on the page, so the summaries line up.
    fn id_width(&self) -> usize {
        self.rows
            .iter()
            .map(|r| r.key.chars().count())
            .max()
            .unwrap_or(0)
    }
}

/// What the list area shows.
#[derive(Debug)]
enum Shown {
    Nothing,
    Page(Page),
    Failed { query: Query, message: String },
}

/// The entity list of the Entities pane.
pub(crate) struct EntityList {
    pending: Option<(RequestId, Query)>,
    shown: Shown,
    state: ListState,
    /// The row and scroll to keep when the pending answer is the page on show again.
    keep: Option<(usize, usize)>,
    /// The rows the list showed when last drawn: the size of the pages it asks for.
    fits: u64,
    /// Each listed struct's state in words (`being built`, `online, mining`): the
    /// chain's struct list carries no attributes, so each is read after its page.
    states: HashMap<EntityId, String>,
    /// The struct reads on their way, by request.
    reading: HashMap<RequestId, EntityId>,
}

/// The tool a struct's state is read with.
const STRUCT_TOOL: &str = "structs_query_struct";

/// A struct's state in a few words, from its record: destroyed, being built, online
/// (mining or refining when a cycle runs), or offline.
fn struct_state(record: &Value) -> Option<String> {
    use crate::entity::records::StructStatus as S;
    let attributes = &record["structAttributes"];
    let status = S::of(attributes)?;
    let started = |field: &str| crate::json::chain_u64(attributes, &[field]).is_some_and(|b| b > 0);
    Some(
        if status.has(S::DESTROYED) {
            "destroyed"
        } else if !status.has(S::BUILT) {
            "being built"
        } else if status.has(S::ONLINE) && started("blockStartOreMine") {
            "online, mining"
        } else if status.has(S::ONLINE) && started("blockStartOreRefine") {
            "online, refining"
        } else if status.has(S::ONLINE) {
            "online"
        } else {
            "offline"
        }
        .to_string(),
    )
}

impl EntityList {
    pub fn new() -> EntityList {
        EntityList {
            pending: None,
            shown: Shown::Nothing,
            state: ListState::default(),
            keep: None,
            fits: PAGE_SIZE,
            states: HashMap::new(),
            reading: HashMap::new(),
        }
    }

    /// Reads the state of every struct on the page that has none yet.
    fn read_states(&mut self, ctx: &mut Ctx<'_>) {
        let Some(page) = self.page() else {
            return;
        };
        if page.query.kind != EntityKind::Struct {
            return;
        }
        let ids: Vec<EntityId> = page
            .rows
            .iter()
            .filter_map(|r| r.id)
            .filter(|id| !self.states.contains_key(id))
            .filter(|id| !self.reading.values().any(|r| r == id))
            .collect();
        for id in ids {
            let request = ctx
                .dispatcher
                .call(STRUCT_TOOL, json!({"struct_id": id.to_string()}));
            self.reading.insert(request, id);
        }
    }

    /// Asks for the first page again, larger, when the list has grown taller than its
    /// page and more entities wait on the next one: a list fills the height it has.
    pub fn refit(&mut self, ctx: &mut Ctx<'_>) -> bool {
        if self.pending.is_some() {
            return false;
        }
        let Some(page) = self.page() else {
            return false;
        };
        let first = page.query.keys.len() == 1;
        let more = page.next_key.is_some();
        if !first || !more || self.fits <= page.query.size {
            return false;
        }
        let mut query = page.query.clone();
        query.size = self.fits;
        let keep = (self.state.selected().unwrap_or(0), self.state.offset());
        self.request(query, ctx);
        self.keep = Some(keep);
        true
    }

    /// Asks for the first page of `kind`, filtered by id `prefix`.
    pub fn load(&mut self, kind: EntityKind, prefix: Option<String>, ctx: &mut Ctx<'_>) {
        self.request(Query::first_page(kind, prefix, self.fits), ctx);
    }

    fn request(&mut self, query: Query, ctx: &mut Ctx<'_>) {
        let id = ctx.dispatcher.call(LIST_TOOL, query.args());
        // A newer request replaces an older one; the older result is then ignored.
        self.pending = Some((id, query));
        self.keep = None;
    }

    /// Asks for the page on show again (after an action changed the game), keeping the
    /// selection where it is; the structs' states are read again.
    pub fn reload(&mut self, ctx: &mut Ctx<'_>) {
        self.states.clear();
        let Some(page) = self.page() else {
            return;
        };
        let query = page.query.clone();
        let keep = (self.state.selected().unwrap_or(0), self.state.offset());
        self.request(query, ctx);
        self.keep = Some(keep);
    }

    /// Applies the result of this list's latest request.
    pub fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if let Some(id) = self.reading.remove(&reply.id) {
            // A struct that cannot be read keeps its row as it is.
            if let Ok(answer) = &reply.result
                && let Some(state) = struct_state(&answer["struct"])
            {
                self.states.insert(id, state);
            }
            return true;
        }
        // Only the latest request counts; a superseded one's result is dropped.
        if self.pending.as_ref().is_none_or(|(id, _)| *id != reply.id) {
            return false;
        }
        let Some((_, query)) = self.pending.take() else {
            return false;
        };
        match &reply.result {
            Ok(answer) => {
                let mut rows = parse_rows(query.kind, answer);
                let pagination = answer.get("pagination");
                let next_key = pagination
                    .and_then(|p| p.get("next_key"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                // The node lists in its keys' order, ids as text (1-1, 1-10, 1-2). A
                // list read whole (one page) reads by number; one in pages keeps the
                // node's order, the order its pages follow.
                if query.keys.len() == 1 && next_key.is_none() {
                    rows.sort_by_key(|r| r.id.map(|id| id.index));
                }
                let total = pagination
                    .and_then(|p| p.get("total"))
                    .and_then(Value::as_u64)
                    .unwrap_or(rows.len() as u64);
                let (row, offset) = self.keep.take().unwrap_or((0, 0));
                self.state.select(if rows.is_empty() {
                    None
                } else {
                    Some(row.min(rows.len() - 1))
                });
                *self.state.offset_mut() = offset;
                self.shown = Shown::Page(Page {
                    query,
                    rows,
                    next_key,
                    total,
                });
                self.read_states(ctx);
            }
            Err(e) => {
                ctx.status
                    .tool_error(&format!("listing {}", query.kind.plural()), e);
                self.state.select(None);
                self.shown = Shown::Failed {
                    message: format!("{}: {}", e.code.as_str(), e.message),
                    query,
                };
            }
        }
        true
    }

    fn page(&self) -> Option<&Page> {
        match &self.shown {
            Shown::Page(page) => Some(page),
            _ => None,
        }
    }

    /// The ids on show, in order.
    pub fn ids(&self) -> Vec<EntityId> {
        self.page()
            .map(|p| p.rows.iter().filter_map(|r| r.id).collect())
            .unwrap_or_default()
    }

    /// The selected row.
    pub fn selected(&self) -> Option<&Row> {
        self.page()?.rows.get(self.state.selected()?)
    }

    /// True when there are rows to move through.
    pub fn has_rows(&self) -> bool {
        self.page().is_some_and(|p| !p.rows.is_empty())
    }

    pub fn has_next(&self) -> bool {
        self.page().is_some_and(|p| p.next_key.is_some())
    }

    pub fn has_prev(&self) -> bool {
        self.page().is_some_and(|p| p.query.keys.len() > 1)
    }

    /// Asks for the page after the one on show.
    pub fn next_page(&mut self, ctx: &mut Ctx<'_>) {
        let Some(page) = self.page() else {
            return;
        };
        let Some(key) = page.next_key.clone() else {
            return;
        };
        let mut query = page.query.clone();
        query.keys.push(Some(key));
        self.request(query, ctx);
    }

    /// Asks for the page before the one on show.
    pub fn prev_page(&mut self, ctx: &mut Ctx<'_>) {
        let Some(page) = self.page() else {
            return;
        };
        if page.query.keys.len() < 2 {
            return;
        }
        let mut query = page.query.clone();
        query.keys.pop();
        self.request(query, ctx);
    }

    /// Moves the selection by a scrolling command.
    pub fn scroll(&mut self, command: Command) {
        let len = self.page().map_or(0, |p| p.rows.len());
        let at = self.state.selected().unwrap_or(0);
        if let Some(row) = moved(command, at, len, 1) {
            self.state.select(Some(row));
        }
    }

    /// The width the page on show and its title need to be read whole, borders
    /// included.
    pub fn content_width(&self) -> u16 {
        let title: usize = self
            .title_parts()
            .iter()
            .map(|(_, text)| Line::from(text.as_str()).width())
            .sum();
        let widest = self.page().map_or(0, |page| {
            let id_width = page.id_width();
            page.rows
                .iter()
                .map(|r| {
                    let state =
                        r.id.and_then(|id| self.states.get(&id))
                            .map_or(0, |s| s.chars().count() + 3);
                    id_width + 2 + Line::from(r.summary.as_str()).width() + state
                })
                .max()
                .unwrap_or(0)
        });
        // Rows: two for the borders, two for the selection marker. Title: the corners.
        u16::try_from((widest + 4).max(title + 2)).unwrap_or(u16::MAX)
    }

    /// Draws the list in `block`, titled with the kind, filter and page.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        ui: &Ui<'_>,
        block: Block<'_>,
        focused: bool,
    ) {
        let theme = ui.theme;
        self.fits = u64::from(area.height.saturating_sub(2)).clamp(MIN_PAGE, MAX_PAGE);
        let block = block.title(self.title(ui));
        match &self.shown {
            Shown::Nothing => Paragraph::new(Span::styled("loading…", theme.style(Role::Muted)))
                .block(block)
                .render(area, buf),
            Shown::Failed { message, .. } => {
                Paragraph::new(Span::styled(message.clone(), theme.style(Role::Error)))
                    .wrap(Wrap { trim: true })
                    .block(block)
                    .render(area, buf);
            }
            Shown::Page(page) if page.rows.is_empty() => {
                let text = match &page.query.prefix {
                    Some(prefix) => {
                        format!("no {} id starts with {prefix}", page.query.kind.name())
                    }
                    None => format!("no {}", page.query.kind.plural()),
                };
                Paragraph::new(Span::styled(text, theme.style(Role::Muted)))
                    .wrap(Wrap { trim: true })
                    .block(block)
                    .render(area, buf);
            }
            Shown::Page(page) => {
                let width = page.id_width();
                // A row's room: the list's width less its borders and the mark.
                let room = usize::from(area.width.saturating_sub(4));
                let items: Vec<ListItem<'_>> = page
                    .rows
                    .iter()
                    .map(|row| {
                        let mut spans = vec![
                            Span::styled(format!("{:<width$}  ", row.key), theme.style(Role::Text)),
                            Span::styled(row.summary.clone(), theme.style(Role::Muted)),
                        ];
                        if let Some(state) = row.id.and_then(|id| self.states.get(&id)) {
                            spans.push(Span::styled(
                                format!(" · {state}"),
                                theme.style(Role::Value),
                            ));
                        }
                        ListItem::new(Line::from(fit_spans(spans, room)))
                    })
                    .collect();
                let highlight = if focused {
                    Role::Selected
                } else {
                    Role::SelectedInactive
                };
                let list = List::new(items)
                    .block(block)
                    .highlight_style(theme.style(highlight))
                    .highlight_symbol(SELECTED_MARK)
                    .highlight_spacing(HighlightSpacing::Always);
                StatefulWidget::render(list, area, buf, &mut self.state);
            }
        }
    }

    /// ` players · page 1/2 · 24 total `, with the filter when one applies, the
    /// page only when there are several, and a loading mark while a page is asked for.
    fn title_parts(&self) -> Vec<(Role, String)> {
        let query = match &self.shown {
            Shown::Page(page) => Some(&page.query),
            Shown::Failed { query, .. } => Some(query),
            Shown::Nothing => self.pending.as_ref().map(|(_, q)| q),
        };
        let mut parts = vec![(Role::Title, " ".to_string())];
        if let Some(query) = query {
            parts.push((Role::Title, query.kind.plural().to_string()));
            if let Some(prefix) = &query.prefix {
                parts.push((Role::Prompt, format!(" · id {prefix}*")));
            }
        }
        if let Some(page) = self.page() {
            let pages = page.total.div_ceil(page.query.size.max(1)).max(1);
            if pages > 1 {
                let at = page.query.keys.len();
                parts.push((Role::Muted, format!(" · page {at}/{pages}")));
            }
            parts.push((Role::Muted, format!(" · {} total", page.total)));
        }
        if self.pending.is_some() {
            parts.push((Role::Muted, " · loading…".to_string()));
        }
        parts.push((Role::Title, " ".to_string()));
        parts
    }

    fn title(&self, ui: &Ui<'_>) -> Line<'static> {
        Line::from(
            self.title_parts()
                .into_iter()
                .map(|(role, text)| Span::styled(text, ui.theme.style(role)))
                .collect::<Vec<_>>(),
        )
    }
}

/// The rows of a list result.
fn parse_rows(kind: EntityKind, answer: &Value) -> Vec<Row> {
    let Some(items) = answer.get(kind.plural()).and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|entity| {
            let core = kind.core_object(entity)?;
            let key = crate::entity::records::key_of(kind, entity)?;
            let id = EntityId::parse(&key).ok().filter(|id| id.kind == kind);
            if id.is_none() && crate::entity::records::has_id(kind) {
                return None;
            }
            Some(Row {
                id,
                key,
                summary: summary(kind, core),
                entity: entity.clone(),
            })
        })
        .collect()
}

/// A few telling fields of an entity, for its row: `novaforge1 · guild 0-1`.
fn summary(kind: EntityKind, core: &Value) -> String {
    use EntityKind as K;
    let fields: &[(&str, &str)] = match kind {
        K::Player => &[("", "name"), ("guild", "guildId")],
        K::Guild => &[("", "name"), ("owner", "owner")],
        K::Planet => &[("owner", "owner"), ("", "status")],
        K::Fleet => &[("owner", "owner"), ("", "status"), ("at", "locationId")],
        K::Struct => &[("type", "type"), ("owner", "owner"), ("", "operatingAmbit")],
        K::Reactor => &[("guild", "guildId"), ("owner", "owner")],
        K::Substation => &[("", "name"), ("owner", "owner")],
        K::Allocation => &[
            ("", "type"),
            ("from", "sourceObjectId"),
            ("to", "destinationId"),
        ],
        K::Infusion => &[("player", "playerId"), ("into", "destinationId")],
        K::Address => &[("player", "playerId"), ("", "address")],
        K::Provider => &[("substation", "substationId"), ("owner", "owner")],
        K::Agreement => &[("provider", "providerId"), ("consumer", "owner")],
    };
    let mut parts = Vec::new();
    // A struct by its type's name (`Ore Extractor`), in place of the type's number.
    let mut named = false;
    if kind == K::Struct
        && let Some(t) = crate::json::chain_int(&core["type"])
            .and_then(|t| u8::try_from(t).ok())
            .and_then(crate::entity::struct_types::struct_type)
    {
        parts.push(t.name.clone());
        named = true;
    }
    for (label, field) in fields {
        if named && *field == "type" {
            continue;
        }
        let Some(value) = core.get(*field) else {
            continue;
        };
        let text = match value {
            Value::String(s) if s.is_empty() => continue,
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        parts.push(if label.is_empty() {
            text
        } else {
            format!("{label} {text}")
        });
    }
    parts.join(" · ")
}
