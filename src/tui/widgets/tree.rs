//! The tree widget every tree pane draws with: a model of [`Node`]s the owner builds
//! from its data, and [`TreeView`], which keeps the open and selected nodes, runs the
//! keys that move and open, and draws. The entity trees, the references, a handle's
//! data and a plan step's result all use it, so they move and look alike.

use std::collections::HashSet;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Paragraph, StatefulWidget, Widget};
use tui_tree_widget::{Tree, TreeItem, TreeState};

use crate::entity::EntityId;
use crate::tui::keymap::Command;
use crate::tui::pane::Ui;
use crate::tui::theme::Role;
use crate::tui::widgets::text::SELECTED_MARK;

/// A node's name among its siblings. Prefixes keep names unique: `f:` a field of the
/// entity's core object, `s:` another section of the entity (`gridAttributes`), `k:` a
/// key of a nested object, `i:` an array index, `~` a note; the references tree adds
/// `g:` a kind's group and `r:` a referenced entity.
pub(crate) type NodeId = String;

/// What a node is, which decides what keys do on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeKind {
    /// An object or array: opens in place.
    Branch,
    /// A scalar value.
    Leaf,
    /// A field naming another entity: opening it fetches that entity.
    Link(EntityId),
    /// A field naming an entity already open above it; never expands.
    Cycle(EntityId),
    /// "loading…" or an error, standing in for a linked entity's fields.
    Note,
}

/// A node of the model the widget's items are made from. Text is kept as spans
/// tagged with theme roles, so the model does not depend on a theme.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub id: NodeId,
    pub spans: Vec<(Role, String)>,
    /// A second line under the first, for what does not fit beside it (an error).
    pub detail: Option<(Role, String)>,
    pub kind: NodeKind,
    pub children: Vec<Node>,
}

impl Node {
    pub fn new(
        id: NodeId,
        kind: NodeKind,
        spans: Vec<(Role, String)>,
        children: Vec<Node>,
    ) -> Node {
        Node {
            id,
            spans,
            detail: None,
            kind,
            children,
        }
    }

    pub fn leaf(id: NodeId, kind: NodeKind, spans: Vec<(Role, String)>) -> Node {
        Node::new(id, kind, spans, Vec::new())
    }

    /// A one-line note (`~{name}`) in `role`.
    pub fn note(name: &str, role: Role, text: impl Into<String>) -> Node {
        Node::leaf(
            format!("~{name}"),
            NodeKind::Note,
            vec![(role, text.into())],
        )
    }

    pub fn loading() -> Node {
        Node::note("loading", Role::Muted, "loading…")
    }

    pub fn failed(message: &str) -> Node {
        Node::note("error", Role::Error, message)
    }

    /// The widget's item for this node at `depth`, its text cut with `…` to what is
    /// left of `width` after the selection mark, the indent and the open symbol.
    fn to_item(&self, ui: &Ui<'_>, width: usize, depth: usize) -> TreeItem<'static, NodeId> {
        let room = width.saturating_sub(2 + 2 * depth + 2);
        let spans: Vec<Span<'static>> = self
            .spans
            .iter()
            .map(|(role, text)| Span::styled(text.clone(), ui.theme.style(*role)))
            .collect();
        let line = Line::from(crate::tui::widgets::text::fit_spans(spans, room));
        let mut text = Text::from(line);
        if let Some((role, detail)) = &self.detail {
            text.push_line(Span::styled(
                crate::tui::widgets::text::fit(detail, room),
                ui.theme.style(*role),
            ));
        }
        let children: Vec<_> = self
            .children
            .iter()
            .map(|c| c.to_item(ui, width, depth + 1))
            .collect();
        // Sibling ids are unique by construction (object keys, array indices).
        TreeItem::new(self.id.clone(), text.clone(), children)
            .unwrap_or_else(|_| TreeItem::new_leaf(self.id.clone(), text))
    }
}

/// What a key did to a [`TreeView`], and so what its owner must do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Nothing, or only the selection moved.
    None,
    /// A node opened or closed: rebuild the model.
    Reshaped,
    /// A link opened: make sure its entity is fetched, then rebuild.
    LinkOpened(EntityId),
}

/// The tree widget over a model of [`Node`]s: the open and selected nodes, and the keys
/// that move and open. The owner builds the nodes (it holds the data) and hands them
/// over with [`TreeView::set_nodes`].
#[derive(Default)]
pub(crate) struct TreeView {
    state: TreeState<NodeId>,
    nodes: Vec<Node>,
    /// The widget items, made from `nodes` when first drawn after a change (or at
    /// another width: their text is cut to it), and that width.
    items: Option<Vec<TreeItem<'static, NodeId>>>,
    items_width: u16,
    /// The selected node is drawn as the first row next time (it was just asked for).
    to_top: bool,
}

impl TreeView {
    /// The paths of the open nodes.
    pub fn opened(&self) -> &HashSet<Vec<NodeId>> {
        self.state.opened()
    }

    /// Opens the node at `path`, without selecting it.
    pub fn open(&mut self, path: Vec<NodeId>) {
        self.state.open(path);
    }

    /// The selected node's path.
    pub fn selected(&self) -> &[NodeId] {
        self.state.selected()
    }

    /// Replaces the model, keeping the selection on a row that is still on show.
    pub fn set_nodes(&mut self, nodes: Vec<Node>) {
        self.nodes = nodes;
        self.items = None;
        let visible = self.visible();
        let mut selected = self.state.selected().to_vec();
        while !selected.is_empty() && !visible.contains(&selected) {
            selected.pop();
        }
        if selected.is_empty() {
            selected = visible.first().cloned().unwrap_or_default();
        }
        self.state.select(selected);
    }

    /// Selects the node at `path` if it is on show.
    pub fn select_if_visible(&mut self, path: Vec<NodeId>) {
        if self.visible().contains(&path) {
            self.state.select(path);
        }
    }

    /// Selects the node at `path` if it is on show, and draws it as the first row next
    /// time, so that what opens under it shows too.
    pub fn select_at_top(&mut self, path: Vec<NodeId>) {
        if self.visible().contains(&path) {
            self.state.select(path);
            self.to_top = true;
        }
    }

    /// The commands the selected node offers.
    pub fn commands(&self, out: &mut Vec<Command>) {
        if self.visible().len() > 1 {
            out.extend([Command::Up, Command::Down, Command::Top, Command::Bottom]);
        }
        let selected = self.state.selected();
        let open = self.state.opened().contains(selected);
        if let Some(node) = self.node(selected)
            && matches!(node.kind, NodeKind::Branch | NodeKind::Link(_))
        {
            out.extend([Command::Expand, Command::Toggle]);
        }
        if open || selected.len() > 1 {
            out.push(Command::Collapse);
        }
    }

    /// Runs a tree command; the caller has checked it is offered.
    pub fn run(&mut self, command: Command) -> Change {
        match command {
            Command::Up | Command::Down | Command::Top | Command::Bottom => self.move_on(command),
            Command::Expand => return self.expand(),
            Command::Collapse => return self.collapse(),
            Command::Toggle => {
                let selected = self.state.selected().to_vec();
                if self.state.opened().contains(&selected) {
                    self.state.close(&selected);
                    return Change::Reshaped;
                }
                return self.expand();
            }
            _ => {}
        }
        Change::None
    }

    fn expand(&mut self) -> Change {
        let selected = self.state.selected().to_vec();
        let Some(node) = self.node(&selected) else {
            return Change::None;
        };
        let kind = node.kind;
        let first_child = node.children.first().map(|c| c.id.clone());
        if self.state.opened().contains(&selected) {
            // Already open: step into it.
            if let Some(child) = first_child {
                let mut path = selected;
                path.push(child);
                self.state.select(path);
            }
            return Change::None;
        }
        let change = match kind {
            NodeKind::Branch => Change::Reshaped,
            NodeKind::Link(target) => Change::LinkOpened(target),
            NodeKind::Leaf | NodeKind::Cycle(_) | NodeKind::Note => return Change::None,
        };
        self.state.open(selected);
        change
    }

    fn collapse(&mut self) -> Change {
        let mut selected = self.state.selected().to_vec();
        if self.state.close(&selected) {
            return Change::Reshaped;
        }
        if selected.len() > 1 {
            selected.pop();
            self.state.select(selected);
        }
        Change::None
    }

    /// Moves the selection as the one cursor moves a list's, over the rows on show; a
    /// selection not on show goes to the first row (the last for Bottom).
    fn move_on(&mut self, command: Command) {
        let visible = self.visible();
        let next = match visible
            .iter()
            .position(|p| p.as_slice() == self.state.selected())
        {
            Some(i) => super::cursor::moved(command, i, visible.len(), 1),
            None if command == Command::Bottom => visible.len().checked_sub(1),
            None => Some(0),
        };
        if let Some(path) = next.and_then(|i| visible.get(i)) {
            self.state.select(path.clone());
        }
    }

    /// The paths of the rows on show, top to bottom.
    fn visible(&self) -> Vec<Vec<NodeId>> {
        fn walk(
            nodes: &[Node],
            prefix: &mut Vec<NodeId>,
            state: &TreeState<NodeId>,
            out: &mut Vec<Vec<NodeId>>,
        ) {
            for node in nodes {
                prefix.push(node.id.clone());
                out.push(prefix.clone());
                if state.opened().contains(prefix.as_slice()) {
                    walk(&node.children, prefix, state, out);
                }
                prefix.pop();
            }
        }
        let mut out = Vec::new();
        walk(&self.nodes, &mut Vec::new(), &self.state, &mut out);
        out
    }

    fn node(&self, path: &[NodeId]) -> Option<&Node> {
        let (first, rest) = path.split_first()?;
        let mut node = self.nodes.iter().find(|n| &n.id == first)?;
        for id in rest {
            node = node.children.iter().find(|n| &n.id == id)?;
        }
        Some(node)
    }

    /// Draws the tree inside `block`; the selection is quieter when `focused` is false.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        ui: &Ui<'_>,
        block: Block<'_>,
        focused: bool,
    ) {
        let width = block.inner(area).width;
        if self.items.is_none() || self.items_width != width {
            let w = usize::from(width);
            self.items = Some(self.nodes.iter().map(|n| n.to_item(ui, w, 0)).collect());
            self.items_width = width;
        }
        let items = self.items.as_deref().unwrap_or_default();
        let highlight = if focused {
            Role::Selected
        } else {
            Role::SelectedInactive
        };
        match Tree::new(items) {
            Ok(tree) => {
                let tree = tree
                    .block(block)
                    .style(ui.theme.style(Role::Text))
                    .highlight_style(ui.theme.style(highlight))
                    .highlight_symbol(SELECTED_MARK)
                    .node_closed_symbol("▸ ")
                    .node_open_symbol("▾ ")
                    .node_no_children_symbol("  ");
                if std::mem::take(&mut self.to_top) {
                    // The widget scrolls a selected row into view from where it was
                    // (above the view: to the top) and no further down than its last
                    // row as last drawn: drawn once aside, the view can go to the end,
                    // and the selection then comes in at the top.
                    let mut aside = Buffer::empty(area);
                    StatefulWidget::render(tree.clone(), area, &mut aside, &mut self.state);
                    self.state.scroll_down(usize::MAX);
                    self.state.scroll_selected_into_view();
                }
                StatefulWidget::render(tree, area, buf, &mut self.state);
            }
            // Sibling ids are unique by construction; should that ever break, say so
            // instead of drawing a wrong tree.
            Err(e) => Paragraph::new(Span::styled(
                format!("cannot show this tree: {e}"),
                ui.theme.style(Role::Error),
            ))
            .block(block)
            .render(area, buf),
        }
    }
}
