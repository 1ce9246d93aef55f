//! The Entities pane: pick a kind, page through its entities, open one as a tree
//! beside the tree of what it references.
//!
//! Four areas, left to right: the kinds, the selected kind's entities, the opened
//! entity's tree, and its references (`reference_tree.rs`). `/` opens an id filter
//! under them. Which areas are drawn depends on the width and the focus; see
//! [`EntitiesPane::columns`].

mod actions;
mod list;
mod tree;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    HighlightSpacing, List, ListItem, ListState, Paragraph, StatefulWidget, Widget, Wrap,
};

use crate::entity::{EntityId, EntityKind};
use crate::tui::dispatch::Reply;
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::{Ctx, Event, EventState, FoundProof, Pane, PowRequest, Ui, dispatch};
use crate::tui::theme::Role;
use crate::tui::widgets::area_block;
use crate::tui::widgets::cursor::{ROWS, moved};
use crate::tui::widgets::reference_tree::{KIND_ORDER, ReferenceTree};
use crate::tui::widgets::text::SELECTED_MARK;
use actions::{ActionDialog, Outcome};
use list::EntityList;
use tree::EntityTree;

/// Below this width only the focused area is drawn.
const WIDE: u16 = 60;

/// The width of the kinds column: border, marker, code and the longest name.
const KINDS_WIDTH: u16 = 17;

/// The narrowest the list gets beside the tree.
const MIN_LIST_WIDTH: u16 = 24;

/// From this width on, the entity tree and its references read well side by side
/// (60 columns for the focused one, 40 for the other); the kinds and the list join
/// them when there is room for them too.
const TREES_WIDTH: u16 = 100;

/// The longest id filter the list tool accepts.
const MAX_FILTER_LEN: usize = 48;

/// The areas of the pane, left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    Kinds,
    List,
    Tree,
    References,
}

/// The Entities pane.
pub(crate) struct EntitiesPane {
    kind_index: usize,
    kinds_state: ListState,
    focus: Area,
    list: EntityList,
    tree: Option<EntityTree>,
    /// The opened entity's references; there whenever `tree` is.
    references: Option<ReferenceTree>,
    /// The references' depth, kept from one opened entity to the next (the kind
    /// filter is not: which kinds make sense depends on the entity).
    reference_depth: u8,
    /// The id filter as typed; applied to the list as it changes.
    filter: String,
    /// True while the filter prompt takes keys.
    editing: bool,
    /// The action dialog, while open; it takes the keys.
    dialog: Option<ActionDialog>,
    /// Dialogs closed while their call was on its way: the answer still refreshes
    /// what is shown and says what happened.
    closed: Vec<ActionDialog>,
}

impl EntitiesPane {
    /// The pane, asking for the first kind's entities when `load` (the core is a
    /// Structs one).
    pub fn new(load: bool, ctx: &mut Ctx<'_>) -> EntitiesPane {
        let mut pane = EntitiesPane {
            kind_index: 0,
            kinds_state: ListState::default().with_selected(Some(0)),
            focus: Area::List,
            list: EntityList::new(),
            tree: None,
            references: None,
            reference_depth: 1,
            filter: String::new(),
            editing: false,
            dialog: None,
            closed: Vec::new(),
        };
        if load {
            pane.list.load(pane.kind(), None, ctx);
        }
        pane
    }

    fn kind(&self) -> EntityKind {
        KIND_ORDER[self.kind_index.min(KIND_ORDER.len() - 1)]
    }

    /// What `w` and `a` act on: the opened entity when a tree has the focus, the
    /// selected row otherwise.
    pub fn target(&self) -> Option<EntityId> {
        match (self.focus, &self.tree) {
            (Area::Tree | Area::References, Some(tree)) => Some(tree.root()),
            _ => self.list.selected().and_then(|r| r.id),
        }
    }

    /// The target's data, when at hand.
    fn target_entity(&self) -> Option<&serde_json::Value> {
        match (self.focus, &self.tree) {
            (Area::Tree | Area::References, Some(tree)) => tree.entity(),
            _ => self.list.selected().map(|r| &r.entity),
        }
    }

    /// What `w` starts a proof-of-work job for: the job the action dialog's answer
    /// calls for while it is open (which closes it), else the target.
    fn take_pow_request(&mut self) -> Option<PowRequest> {
        if let Some(dialog) = &self.dialog {
            let job = dialog.pow_job().map(PowRequest::Job);
            if job.is_some() {
                self.dialog = None;
            }
            return job;
        }
        self.target().map(PowRequest::Entity)
    }

    /// Opens the action dialog on the target, with the nonces finished PoW jobs found.
    pub fn open_actions(&mut self, proofs: &[FoundProof], ctx: &mut Ctx<'_>) {
        let Some(id) = self.target() else {
            return;
        };
        let Some(entity) = self.target_entity() else {
            ctx.status
                .info(format!("{id} is still on its way; try again"));
            return;
        };
        match ActionDialog::open(id, entity, proofs) {
            Ok(dialog) => self.dialog = Some(dialog),
            Err(why) => ctx.status.info(why),
        }
    }

    /// Asks again for what is shown, after an action changed the game.
    fn refresh(&mut self, ctx: &mut Ctx<'_>) {
        self.list.reload(ctx);
        if let Some(tree) = &mut self.tree {
            tree.refresh(ctx);
        }
        if let Some(references) = &mut self.references {
            references.refresh(ctx);
        }
    }

    /// Keys while the action dialog is open; it takes them all but the global ones it
    /// does not bind (tabs, quit, the clock), and every character while its form
    /// takes text.
    fn dialog_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        let Some(dialog) = &mut self.dialog else {
            return EventState::NotConsumed;
        };
        let scope = dialog.scope();
        if dialog.captures_text()
            && let KeyCode::Char(c) = key.code
            && !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
            && ctx.keymap.command(scope, key).is_none()
        {
            dialog.type_char(c, ctx);
            return EventState::Consumed;
        }
        let offered = dialog.commands();
        let mut outcome = Outcome::None;
        let state = dispatch(key, ctx, scope, &offered, |c, ctx| {
            outcome = dialog.run(c, ctx);
        });
        if outcome == Outcome::Close
            && let Some(dialog) = self.dialog.take()
            && dialog.waiting()
        {
            self.closed.push(dialog);
        }
        state
    }

    /// The ids on the list's page on show.
    pub fn listed_ids(&self) -> Vec<EntityId> {
        self.list.ids()
    }

    /// The arguments of the latest references query, while an entity is open.
    pub fn references_query(&self) -> Option<&serde_json::Value> {
        self.references.as_ref().map(ReferenceTree::args)
    }

    /// Shows `tree` and asks for its entity's references; the tree takes the focus.
    fn open(&mut self, tree: EntityTree, ctx: &mut Ctx<'_>) {
        self.references = Some(ReferenceTree::new(tree.root(), self.reference_depth, ctx));
        self.tree = Some(tree);
        self.focus = Area::Tree;
    }

    fn select_kind(&mut self, index: usize, ctx: &mut Ctx<'_>) {
        let index = index.min(KIND_ORDER.len() - 1);
        self.kinds_state.select(Some(index));
        if index != self.kind_index {
            self.kind_index = index;
            // An id filter belongs to one kind's ids; a new kind starts unfiltered.
            self.filter.clear();
            self.list.load(self.kind(), None, ctx);
        }
    }

    fn focus_step(&mut self, forward: bool) {
        let mut areas = vec![Area::Kinds, Area::List];
        if self.tree.is_some() {
            areas.push(Area::Tree);
        }
        if self.references.is_some() {
            areas.push(Area::References);
        }
        let at = areas.iter().position(|a| *a == self.focus).unwrap_or(0);
        let next = if forward {
            (at + 1) % areas.len()
        } else {
            (at + areas.len() - 1) % areas.len()
        };
        self.focus = areas[next];
    }

    /// Keys while the filter prompt is open: commands from the keymap, and the
    /// characters of an id.
    fn filter_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        match ctx.keymap.command(Scope::Filter, key) {
            Some(Command::KeepFilter) => self.accept_filter(ctx),
            Some(Command::DropFilter) => {
                self.editing = false;
                self.focus = Area::List;
                if !self.filter.is_empty() {
                    self.filter.clear();
                    self.list.load(self.kind(), None, ctx);
                }
            }
            Some(Command::EraseChar) => {
                if self.filter.pop().is_some() {
                    self.apply_filter(ctx);
                }
            }
            Some(_) => {}
            None => match key.code {
                KeyCode::Char(c)
                    if !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    if !(c.is_ascii_digit() || c == '-') {
                        ctx.status
                            .info("ids are digits and a dash: {kind code}-{index}, e.g. 1-12");
                    } else if self.filter.len() >= MAX_FILTER_LEN {
                        ctx.status.info(format!(
                            "an id filter is at most {MAX_FILTER_LEN} characters"
                        ));
                    } else {
                        self.filter.push(c);
                        self.apply_filter(ctx);
                    }
                }
                _ => return EventState::NotConsumed,
            },
        }
        EventState::Consumed
    }

    /// Lists what the filter matches. A leading kind code (`1`, `1-`, `1-2`) switches
    /// to that kind, since every id of a kind starts with its code.
    fn apply_filter(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(kind) = kind_named_by(&self.filter)
            && let Some(index) = KIND_ORDER.iter().position(|k| *k == kind)
        {
            self.kind_index = index;
            self.kinds_state.select(Some(index));
        }
        let prefix = (!self.filter.is_empty()).then(|| self.filter.clone());
        self.list.load(self.kind(), prefix, ctx);
    }

    /// Enter in the prompt: a whole id opens that entity; anything else keeps the
    /// filter and returns to the list.
    fn accept_filter(&mut self, ctx: &mut Ctx<'_>) {
        self.editing = false;
        match EntityId::parse(&self.filter) {
            Ok(id) => {
                let tree = EntityTree::fetching(id, ctx);
                self.open(tree, ctx);
            }
            Err(_) => self.focus = Area::List,
        }
    }

    fn render_kinds(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let focused = self.focus == Area::Kinds;
        let items: Vec<ListItem<'_>> = KIND_ORDER
            .iter()
            .map(|kind| {
                ListItem::new(Line::from(vec![
                    Span::styled(format!("{:>2} ", kind.code()), theme.style(Role::Muted)),
                    Span::styled(kind.name(), theme.style(Role::Text)),
                ]))
            })
            .collect();
        let list = List::new(items)
            .block(area_block(ui, " Kinds ", focused))
            .highlight_style(theme.style(if focused {
                Role::Selected
            } else {
                Role::SelectedInactive
            }))
            .highlight_symbol(SELECTED_MARK)
            .highlight_spacing(HighlightSpacing::Always);
        StatefulWidget::render(list, area, buf, &mut self.kinds_state);
    }

    fn render_tree(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let focused = self.focus == Area::Tree;
        match &mut self.tree {
            Some(tree) => {
                let root = tree.root();
                let title = format!(" {} {root} ", root.kind);
                tree.render(area, buf, ui, area_block(ui, &title, focused), focused);
            }
            None => {
                let open = ui
                    .keymap
                    .key_label(Scope::List, Command::OpenEntity)
                    .unwrap_or_default();
                let filter = ui
                    .keymap
                    .key_label(Scope::List, Command::StartFilter)
                    .unwrap_or_default();
                let text = format!(
                    "No entity open. Select one in the list and press {open}, or press \
                     {filter} and type its id."
                );
                Paragraph::new(Span::styled(text, ui.theme.style(Role::Muted)))
                    .wrap(Wrap { trim: true })
                    .block(area_block(ui, " Entity ", focused))
                    .render(area, buf);
            }
        }
    }

    fn render_references(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let focused = self.focus == Area::References;
        if let Some(references) = &mut self.references {
            references.render(area, buf, ui, area_block(ui, "", focused), focused);
        }
    }

    /// The areas drawn side by side, and where.
    ///
    /// - Below [`WIDE`] columns: only the focused area, full width.
    /// - With an entity open and room for everything (about 150 columns): the kinds,
    ///   the list, the entity tree and its references, those two 2:3 (a reference's
    ///   line is longer than a field's).
    /// - With an entity open and the entity tree or the references focused: those two
    ///   alone, the focused one 3/5 of the width and the other 2/5 (60 and 40 columns
    ///   at 100). The kinds and the list make way rather than squeezing every area to
    ///   25-33 columns: while reading an entity, its fields and what it references are
    ///   the content, and their lines are long (a nested field, a reference's
    ///   `5-2  Orbital Shield Generator  ← space[0] of 2-1  (depth 2)`). The one being
    ///   read gets the room; the other stays in view beside it. Left or Esc goes back
    ///   to the list, which brings the kinds and the list back.
    /// - Otherwise (browsing kinds and list): the kinds, the list and the entity tree,
    ///   as before references existed; the references stay out of the way until the
    ///   entity is read.
    fn columns(&self, main: Rect) -> Vec<(Area, Rect)> {
        if main.width < WIDE {
            return vec![(self.focus, main)];
        }
        let rest = main.width.saturating_sub(KINDS_WIDTH);
        if self.references.is_some() {
            let list_width = self
                .list
                .content_width()
                .clamp(MIN_LIST_WIDTH, (rest / 3).max(MIN_LIST_WIDTH));
            if main.width >= KINDS_WIDTH + list_width + TREES_WIDTH {
                // The tree being read (or, from the list, the entity's own tree) is
                // the wider of the two.
                let (tree_share, references_share) = self.tree_shares();
                let [kinds, list, tree, references] = Layout::horizontal([
                    Constraint::Length(KINDS_WIDTH),
                    Constraint::Length(list_width),
                    Constraint::Fill(tree_share),
                    Constraint::Fill(references_share),
                ])
                .areas(main);
                return vec![
                    (Area::Kinds, kinds),
                    (Area::List, list),
                    (Area::Tree, tree),
                    (Area::References, references),
                ];
            }
            if matches!(self.focus, Area::Tree | Area::References) {
                let (tree_share, references_share) = self.tree_shares();
                let [tree, references] = Layout::horizontal([
                    Constraint::Fill(tree_share),
                    Constraint::Fill(references_share),
                ])
                .areas(main);
                return vec![(Area::Tree, tree), (Area::References, references)];
            }
        }
        // The list takes what its rows need, within limits; the tree the rest.
        let list_width = self
            .list
            .content_width()
            .clamp(MIN_LIST_WIDTH, (rest / 2).max(MIN_LIST_WIDTH));
        let [kinds, list, tree] = Layout::horizontal([
            Constraint::Length(KINDS_WIDTH),
            Constraint::Length(list_width),
            Constraint::Min(0),
        ])
        .areas(main);
        vec![(Area::Kinds, kinds), (Area::List, list), (Area::Tree, tree)]
    }

    /// How the entity tree and the references share their width when they are drawn
    /// alone: 3:2 for the focused one.
    fn tree_shares(&self) -> (u16, u16) {
        if self.focus == Area::Tree {
            (3, 2)
        } else {
            (2, 3)
        }
    }

    fn render_prompt(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let mut spans = vec![
            Span::styled(" id › ", theme.style(Role::Prompt)),
            Span::styled(self.filter.clone(), theme.style(Role::Text)),
            Span::styled("█", theme.style(Role::Prompt)),
        ];
        let accept = ui
            .keymap
            .key_label(Scope::Filter, Command::KeepFilter)
            .unwrap_or_default();
        let note = match EntityId::parse(&self.filter) {
            Ok(id) => format!("   {accept} opens {id}"),
            Err(_) if self.filter.is_empty() => "   type an id or its start, e.g. 1-1".into(),
            Err(_) => format!("   {accept} keeps the filter"),
        };
        spans.push(Span::styled(note, theme.style(Role::Muted)));
        Line::from(spans).render(area, buf);
    }
}

impl Pane for EntitiesPane {
    fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match (self.focus, command) {
            (_, Command::FocusNext) => self.focus_step(true),
            (_, Command::FocusPrev) => self.focus_step(false),
            // The prompt starts empty, so typing never appends to the last filter; the
            // list keeps showing it until the first key.
            (_, Command::StartFilter) => {
                self.filter.clear();
                self.editing = true;
            }
            (Area::Kinds, command) if ROWS.contains(&command) => {
                if let Some(row) = moved(command, self.kind_index, KIND_ORDER.len(), 1) {
                    self.select_kind(row, ctx);
                }
            }
            (Area::Kinds, Command::ShowKind) => self.focus = Area::List,
            (Area::List, command) if ROWS.contains(&command) => self.list.scroll(command),
            (Area::List, Command::OpenEntity) => {
                if let Some(row) = self.list.selected()
                    && row.id.is_none()
                {
                    // An infusion or address has no id to open by: its row is all.
                    ctx.status.info(format!(
                        "{}: {} have no id on the chain, so this one opens nowhere; its row is its record",
                        row.key,
                        self.kind().plural()
                    ));
                } else if let Some(row) = self.list.selected()
                    && let Some(id) = row.id
                {
                    // A list page holds the chain's core record only. It shows at
                    // once; the references query made on opening answers the whole
                    // entity (grid attributes, inventory), which then replaces it.
                    let tree = EntityTree::loaded(id, row.entity.clone());
                    self.open(tree, ctx);
                }
            }
            (Area::List, Command::NextPage) => self.list.next_page(ctx),
            (Area::List, Command::PrevPage) => self.list.prev_page(ctx),
            (Area::List, Command::ClearFilter) => {
                self.filter.clear();
                self.list.load(self.kind(), None, ctx);
            }
            (Area::List, Command::Back) => self.focus = Area::Kinds,
            (Area::Tree, Command::Back) => self.focus = Area::List,
            (Area::References, Command::Back) => self.focus = Area::Tree,
            (Area::Tree | Area::References, Command::ReferenceDepth) => {
                if let Some(references) = &mut self.references {
                    references.toggle_depth(ctx);
                    self.reference_depth = references.depth();
                }
            }
            (Area::Tree | Area::References, Command::ReferenceKinds) => {
                if let Some(references) = &mut self.references {
                    references.cycle_kinds(ctx);
                }
            }
            (Area::Tree, command) => {
                if let Some(tree) = &mut self.tree {
                    tree.run(command, ctx);
                }
            }
            (Area::References, command) => {
                if let Some(references) = &mut self.references {
                    references.run(command, ctx);
                }
            }
            _ => {}
        }
    }

    fn poll(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.list.refit(ctx)
    }

    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        // Two commands reach the PoW tab: `w` starts a job there, and the action
        // dialog takes the nonces its jobs found. They come first, whatever has focus.
        let offered = self.commands();
        let bound: Vec<Command> = ctx.keymap.commands_for(self.scope(), key).collect();
        let wanted = |command: Command| offered.contains(&command) && bound.contains(&command);
        if wanted(Command::PowJob)
            && let Some(request) = self.take_pow_request()
        {
            ctx.push(Event::StartPow(request));
            return EventState::Consumed;
        }
        if wanted(Command::OpenActions) {
            ctx.push(Event::OpenActions);
            return EventState::Consumed;
        }
        if self.dialog.is_some() {
            return self.dialog_key(key, ctx);
        }
        if self.editing {
            return self.filter_key(key, ctx);
        }
        self.run_key(key, ctx)
    }

    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if let Some(dialog) = &mut self.dialog
            && let Some(changed) = dialog.on_reply(reply, ctx)
        {
            if changed {
                self.refresh(ctx);
            }
            return true;
        }
        if let Some(at) = self
            .closed
            .iter_mut()
            .position(|d| d.on_reply(reply, ctx).is_some())
        {
            if self.closed.swap_remove(at).changed_the_game() {
                self.refresh(ctx);
            }
            return true;
        }
        if self.list.on_reply(reply, ctx) {
            return true;
        }
        if self
            .tree
            .as_mut()
            .is_some_and(|tree| tree.on_reply(reply, ctx))
        {
            return true;
        }
        // The references query answers the whole entity: the tree, opened on a list's
        // core record, takes it. An answer over the size limit carries none, and the
        // tree asks for the entity alone.
        if let (Some(references), Some(tree)) = (&self.references, &mut self.tree)
            && references.awaits(reply.id)
            && let Ok(answer) = &reply.result
            && !tree.adopt(answer)
            && answer["status"] == "partial"
        {
            tree.refresh(ctx);
        }
        self.references
            .as_mut()
            .is_some_and(|references| references.on_reply(reply, ctx))
    }

    fn scope(&self) -> Scope {
        if let Some(dialog) = &self.dialog {
            return dialog.scope();
        }
        if self.editing {
            return Scope::Filter;
        }
        match self.focus {
            Area::Kinds => Scope::Kinds,
            Area::List => Scope::List,
            Area::Tree => Scope::Tree,
            Area::References => Scope::References,
        }
    }

    fn captures_text(&self) -> bool {
        self.editing
            || self
                .dialog
                .as_ref()
                .is_some_and(ActionDialog::captures_text)
    }

    fn commands(&self) -> Vec<Command> {
        if let Some(dialog) = &self.dialog {
            return dialog.commands();
        }
        let mut out = Vec::new();
        if self.editing {
            out.extend([Command::KeepFilter, Command::DropFilter]);
            if !self.filter.is_empty() {
                out.push(Command::EraseChar);
            }
            return out;
        }
        match self.focus {
            Area::Kinds => out.extend([
                Command::Up,
                Command::Down,
                Command::Top,
                Command::Bottom,
                Command::ShowKind,
            ]),
            Area::List => {
                if self.list.has_rows() {
                    out.extend([
                        Command::Up,
                        Command::Down,
                        Command::Top,
                        Command::Bottom,
                        Command::OpenEntity,
                    ]);
                }
                if self.list.has_next() {
                    out.push(Command::NextPage);
                }
                if self.list.has_prev() {
                    out.push(Command::PrevPage);
                }
            }
            Area::Tree => {
                if let Some(tree) = &self.tree {
                    tree.commands(&mut out);
                }
            }
            Area::References => {
                if let Some(references) = &self.references {
                    references.commands(&mut out);
                }
            }
        }
        let target = self.target().filter(|_| self.focus != Area::Kinds);
        if target.is_some_and(|id| {
            matches!(
                id.kind,
                EntityKind::Player | EntityKind::Planet | EntityKind::Struct
            )
        }) {
            // Run by the app, which holds the PoW jobs' proofs.
            out.push(Command::OpenActions);
        }
        if target.is_some_and(|id| matches!(id.kind, EntityKind::Struct | EntityKind::Fleet)) {
            // Run by the app, which owns the PoW pane.
            out.push(Command::PowJob);
        }
        if matches!(self.focus, Area::Tree | Area::References)
            && let Some(references) = &self.references
        {
            out.push(Command::ReferenceDepth);
            if references.can_cycle_kinds() {
                out.push(Command::ReferenceKinds);
            }
        }
        out.push(Command::StartFilter);
        if self.focus == Area::List && !self.filter.is_empty() {
            out.push(Command::ClearFilter);
        }
        if self.focus != Area::Kinds {
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
        for (area, rect) in self.columns(main) {
            match area {
                Area::Kinds => self.render_kinds(rect, buf, ui),
                Area::List => {
                    let focused = self.focus == Area::List;
                    self.list
                        .render(rect, buf, ui, area_block(ui, "", focused), focused);
                }
                Area::Tree => self.render_tree(rect, buf, ui),
                Area::References => self.render_references(rect, buf, ui),
            }
        }
        if let Some(prompt) = prompt {
            self.render_prompt(prompt, buf, ui);
        }
        if let Some(dialog) = &mut self.dialog {
            dialog.render(area, buf, ui);
        }
    }
}

/// The kind whose code `text` starts with, when the code is complete: `1`, `1-` and
/// `1-2` name players; `1` could still become `10`, but the list follows the text as
/// typed.
fn kind_named_by(text: &str) -> Option<EntityKind> {
    let code_len = text.bytes().take_while(u8::is_ascii_digit).count();
    if code_len == 0 {
        return None;
    }
    let (code, rest) = text.split_at(code_len);
    if !(rest.is_empty() || rest.starts_with('-')) {
        return None;
    }
    EntityKind::from_code(code.parse().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::tab::Tab;
    use crate::tui::testing::TestDesk;

    fn loaded() -> (TestDesk, EntitiesPane) {
        let mut desk = TestDesk::new(Tab::Entities);
        let mut pane = EntitiesPane::new(true, &mut desk.ctx());
        desk.settle(&mut pane);
        (desk, pane)
    }

    #[test]
    fn the_list_opens_on_the_first_kinds_first_page() {
        let (_desk, pane) = loaded();
        assert_eq!(pane.scope(), Scope::List);
        let ids = pane.list.ids();
        assert!(
            ids.len() > 1,
            "the demo world lists several {:?}",
            pane.kind()
        );
        assert!(ids.iter().all(|id| id.kind == KIND_ORDER[0]), "{ids:?}");
        assert_eq!(pane.target(), Some(ids[0]));
    }

    #[test]
    fn opening_a_row_shows_its_tree_and_references_and_back_returns() {
        let (mut desk, mut pane) = loaded();
        desk.press(&mut pane, Command::Down);
        let second = pane.list.ids()[1];
        assert_eq!(pane.target(), Some(second));

        desk.press(&mut pane, Command::OpenEntity);
        assert_eq!(pane.focus, Area::Tree);
        assert_eq!(pane.tree.as_ref().map(EntityTree::root), Some(second));
        assert!(pane.references.is_some());
        assert_eq!(pane.target(), Some(second));

        desk.press(&mut pane, Command::FocusNext);
        assert_eq!(pane.scope(), Scope::References);
        desk.press(&mut pane, Command::Back);
        desk.press(&mut pane, Command::Back);
        assert_eq!(pane.scope(), Scope::List);
        assert_eq!(pane.target(), Some(second), "the row stays selected");
    }

    #[test]
    fn another_kind_lists_its_own_entities() {
        let (mut desk, mut pane) = loaded();
        desk.press(&mut pane, Command::Back);
        assert_eq!(pane.scope(), Scope::Kinds);
        desk.press(&mut pane, Command::Down);
        assert_eq!(pane.kind(), KIND_ORDER[1]);
        desk.press(&mut pane, Command::ShowKind);
        assert_eq!(pane.scope(), Scope::List);
        let ids = pane.list.ids();
        assert!(!ids.is_empty());
        assert!(ids.iter().all(|id| id.kind == KIND_ORDER[1]), "{ids:?}");
    }

    #[test]
    fn the_filter_prompt_starts_empty_and_offers_its_own_commands() {
        let (mut desk, mut pane) = loaded();
        pane.filter = "1-".into();
        desk.press(&mut pane, Command::StartFilter);
        assert!(pane.editing && pane.filter.is_empty());
        assert_eq!(pane.scope(), Scope::Filter);
        assert_eq!(pane.commands(), [Command::KeepFilter, Command::DropFilter]);
    }
}
