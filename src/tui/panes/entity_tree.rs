//! One entity as a tree of its fields. A field naming another entity expands into
//! that entity, fetched through `structs_query_entity` the first time it is opened.
//!
//! Cycle safety: an id already open on the path from the root (the root included) is
//! shown as a marked leaf (`↺ owner: 1-1 (already open above)`) that cannot expand.
//! Nodes are built only under open nodes, so the tree is never larger than what the
//! user opened, whatever the references between entities.
//!
//! The pieces any tree of entities needs live here too, shared with the references
//! tree (`reference_tree.rs`): the node model ([`Node`]), the nodes of an entity's
//! fields ([`Fields`]), the entities fetched for links ([`Fetched`]) and the widget
//! with its keys ([`TreeView`]).

use std::collections::{HashMap, HashSet};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Paragraph, StatefulWidget, Widget};
use serde_json::{Value, json};
use tui_tree_widget::{Tree, TreeItem, TreeState};

use crate::entity::EntityId;
use crate::tui::component::SELECTED_MARK;
use crate::tui::component::{Ctx, Ui};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::Command;
use crate::tui::theme::Role;

/// The tool that fetches an entity when a field naming it is expanded.
pub(crate) const QUERY_TOOL: &str = "structs_query_entity";

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

    fn to_item(&self, ui: &Ui<'_>) -> TreeItem<'static, NodeId> {
        let line = Line::from(
            self.spans
                .iter()
                .map(|(role, text)| Span::styled(text.clone(), ui.theme.style(*role)))
                .collect::<Vec<_>>(),
        );
        let mut text = Text::from(line);
        if let Some((role, detail)) = &self.detail {
            text.push_line(Span::styled(detail.clone(), ui.theme.style(*role)));
        }
        let children: Vec<_> = self.children.iter().map(|c| c.to_item(ui)).collect();
        // Sibling ids are unique by construction (object keys, array indices).
        TreeItem::new(self.id.clone(), text.clone(), children)
            .unwrap_or_else(|_| TreeItem::new_leaf(self.id.clone(), text))
    }
}

/// Where an entity's data stands.
#[derive(Debug)]
pub(crate) enum Fetch {
    Loading,
    Loaded(Value),
    Failed(String),
}

/// The entities a tree has fetched, or was given, for its links, and its fetches in
/// flight.
#[derive(Debug, Default)]
pub(crate) struct Fetched {
    cache: HashMap<EntityId, Fetch>,
    inflight: HashMap<RequestId, EntityId>,
}

impl Fetched {
    /// Keeps an entity at hand (from a list page or another tool result).
    pub fn insert(&mut self, id: EntityId, entity: Value) {
        self.cache.insert(id, Fetch::Loaded(entity));
    }

    pub fn get(&self, id: EntityId) -> Option<&Fetch> {
        self.cache.get(&id)
    }

    /// Asks for `id` through the query tool.
    pub fn fetch(&mut self, id: EntityId, ctx: &mut Ctx<'_>) {
        let request = ctx
            .dispatcher
            .call(QUERY_TOOL, json!({ "id": id.to_string() }));
        self.inflight.insert(request, id);
        self.cache.insert(id, Fetch::Loading);
    }

    /// Asks again for every entity at hand, keeping what is shown until the answers
    /// come (after an action changed the game).
    pub fn refetch_all(&mut self, ctx: &mut Ctx<'_>) {
        let loaded: Vec<EntityId> = self
            .cache
            .iter()
            .filter(|(_, f)| matches!(f, Fetch::Loaded(_)))
            .map(|(id, _)| *id)
            .collect();
        for id in loaded {
            let request = ctx
                .dispatcher
                .call(QUERY_TOOL, json!({ "id": id.to_string() }));
            self.inflight.insert(request, id);
        }
    }

    /// Asks for `id` unless it is at hand or on its way; a failed fetch is tried again.
    pub fn fetch_if_needed(&mut self, id: EntityId, ctx: &mut Ctx<'_>) {
        if matches!(self.cache.get(&id), None | Some(Fetch::Failed(_))) {
            self.fetch(id, ctx);
        }
    }

    /// Applies the result of one of these fetches; false when it is not one of them.
    pub fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        let Some(id) = self.inflight.remove(&reply.id) else {
            return false;
        };
        let fetch = match &reply.result {
            Ok(answer) => Fetch::Loaded(answer.get("entity").cloned().unwrap_or(Value::Null)),
            Err(e) => {
                ctx.status.tool_error(&format!("fetching {id}"), e);
                Fetch::Failed(format!("{}: {}", e.code.as_str(), e.message))
            }
        };
        self.cache.insert(id, fetch);
        true
    }
}

/// Builds the nodes of entities' fields. A field naming an entity is a link whose
/// children exist only while it is open: the entity's fields once [`Fetched`] has it,
/// a loading or error note until then.
pub(crate) struct Fields<'a> {
    pub fetched: &'a Fetched,
    pub opened: &'a HashSet<Vec<NodeId>>,
}

impl Fields<'_> {
    /// The nodes for an entity's fields, under the node at `parent`: its core object's
    /// fields first, then its other sections (`gridAttributes`, ...). `on_path` holds
    /// the entities open from the top of the tree down to this one (itself included):
    /// a field naming one of them is a [`NodeKind::Cycle`] leaf.
    pub fn entity(
        &self,
        id: EntityId,
        entity: &Value,
        parent: &[NodeId],
        on_path: &mut Vec<EntityId>,
    ) -> Vec<Node> {
        let mut out = Vec::new();
        if let Some(Value::Object(fields)) = id.kind.core_object(entity) {
            for (key, value) in fields {
                let node_id = format!("f:{key}");
                out.push(self.value(node_id, key, value, key == "id", parent, on_path));
            }
        }
        if let Some(core_key) = id.kind.rest_key()
            && let Value::Object(sections) = entity
        {
            for (key, value) in sections.iter().filter(|(k, _)| *k != core_key) {
                let node_id = format!("s:{key}");
                out.push(self.value(node_id, key, value, false, parent, on_path));
            }
        }
        out
    }

    /// The node for one value. `own_id` marks the entity's own `id` field, which is
    /// shown as plain text rather than as a link to itself (so is the `id` of any
    /// nested object: it names that object). An array item that is a whole entity in
    /// its chain wrapper (`{"Player": {...}, ...}`, as lists hold them) is shown as that
    /// entity: `[0] 1-5 player`, opening into its fields.
    pub fn value(
        &self,
        node_id: NodeId,
        label: &str,
        value: &Value,
        own_id: bool,
        parent: &[NodeId],
        on_path: &mut Vec<EntityId>,
    ) -> Node {
        let mut path = parent.to_vec();
        path.push(node_id.clone());
        let field = (Role::Field, label.to_string());
        let sep = || (Role::Muted, ": ".to_string());
        let scalar = |role: Role, text: String| {
            Node::leaf(
                node_id.clone(),
                NodeKind::Leaf,
                vec![field.clone(), sep(), (role, text)],
            )
        };
        match value {
            Value::String(text) if text.is_empty() => scalar(Role::Muted, "—".into()),
            Value::String(text) => match EntityId::parse(text).ok().filter(|_| !own_id) {
                Some(target) if on_path.contains(&target) => Node::leaf(
                    node_id.clone(),
                    NodeKind::Cycle(target),
                    vec![
                        (Role::Cycle, "↺ ".into()),
                        field.clone(),
                        sep(),
                        (Role::Cycle, text.clone()),
                        (Role::Muted, " (already open above)".into()),
                    ],
                ),
                Some(target) => {
                    let children = if self.opened.contains(&path) {
                        match self.fetched.get(target) {
                            Some(Fetch::Loaded(entity)) => {
                                on_path.push(target);
                                let fields = self.entity(target, entity, &path, on_path);
                                on_path.pop();
                                fields
                            }
                            Some(Fetch::Failed(message)) => vec![Node::failed(message)],
                            Some(Fetch::Loading) | None => vec![Node::loading()],
                        }
                    } else {
                        // Never on show while closed; it gives the node its ▸ marker.
                        vec![Node::loading()]
                    };
                    Node::new(
                        node_id.clone(),
                        NodeKind::Link(target),
                        vec![
                            field.clone(),
                            sep(),
                            (Role::IdLink, text.clone()),
                            (Role::Muted, format!(" {}", target.kind)),
                        ],
                        children,
                    )
                }
                None => scalar(Role::Value, text.clone()),
            },
            Value::Number(n) => scalar(Role::Value, n.to_string()),
            Value::Bool(b) => scalar(Role::Value, b.to_string()),
            Value::Null => scalar(Role::Muted, "null".into()),
            Value::Array(items) if items.is_empty() => scalar(Role::Muted, "[]".into()),
            Value::Object(map) if map.is_empty() => scalar(Role::Muted, "{}".into()),
            Value::Array(items) => Node::new(
                node_id.clone(),
                NodeKind::Branch,
                vec![field.clone(), (Role::Muted, format!(" [{}]", items.len()))],
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let item_id = format!("i:{i}");
                        let label = format!("[{i}]");
                        match wrapped_entity(item) {
                            Some(id) => self.entity_item(item_id, &label, id, item, &path, on_path),
                            None => self.value(item_id, &label, item, false, &path, on_path),
                        }
                    })
                    .collect(),
            ),
            Value::Object(map) => Node::new(
                node_id.clone(),
                NodeKind::Branch,
                vec![field.clone(), (Role::Muted, format!(" {{{}}}", map.len()))],
                map.iter()
                    .map(|(key, item)| {
                        self.value(format!("k:{key}"), key, item, key == "id", &path, on_path)
                    })
                    .collect(),
            ),
        }
    }
}

impl Fields<'_> {
    /// An array item that is a whole entity: its id beside the index, its fields below.
    fn entity_item(
        &self,
        node_id: NodeId,
        label: &str,
        id: EntityId,
        entity: &Value,
        parent: &[NodeId],
        on_path: &mut Vec<EntityId>,
    ) -> Node {
        let mut path = parent.to_vec();
        path.push(node_id.clone());
        on_path.push(id);
        let children = self.entity(id, entity, &path, on_path);
        on_path.pop();
        Node::new(
            node_id,
            NodeKind::Branch,
            vec![
                (Role::Field, label.to_string()),
                (Role::Muted, " ".into()),
                (Role::Value, id.to_string()),
                (Role::Muted, format!(" {}", id.kind)),
            ],
            children,
        )
    }
}

/// The id of an entity in its chain wrapper (`{"Player": {"id": "1-5", ...}}`), the
/// form list results hold entities in. Addresses have no wrapper and are not matched.
fn wrapped_entity(item: &Value) -> Option<EntityId> {
    let Value::Object(map) = item else {
        return None;
    };
    let id = crate::references::extract::own_id(map)?;
    id.kind.core_object(item)?.is_object().then_some(id)
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
    /// The widget items, made from `nodes` when first drawn after a change.
    items: Option<Vec<TreeItem<'static, NodeId>>>,
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
            Command::Up => self.move_by(-1),
            Command::Down => self.move_by(1),
            Command::Top => self.select_index(0),
            Command::Bottom => self.select_index(usize::MAX),
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

    fn move_by(&mut self, delta: isize) {
        let visible = self.visible();
        let current = visible
            .iter()
            .position(|p| p.as_slice() == self.state.selected());
        let next = match current {
            Some(i) => i.saturating_add_signed(delta),
            None => 0,
        };
        if let Some(path) = visible.get(next.min(visible.len().saturating_sub(1))) {
            self.state.select(path.clone());
        }
    }

    fn select_index(&mut self, index: usize) {
        let visible = self.visible();
        if let Some(path) = visible.get(index.min(visible.len().saturating_sub(1))) {
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
        if self.items.is_none() {
            self.items = Some(self.nodes.iter().map(|n| n.to_item(ui)).collect());
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

/// An opened entity: its fetched entities and the tree of its fields.
pub(crate) struct EntityTree {
    root: EntityId,
    fetched: Fetched,
    view: TreeView,
}

impl EntityTree {
    /// A tree over an entity already at hand (from a list page).
    pub fn loaded(root: EntityId, entity: Value) -> EntityTree {
        let mut tree = EntityTree::empty(root);
        tree.fetched.insert(root, entity);
        tree.rebuild();
        tree
    }

    /// A tree whose root entity is fetched first.
    pub fn fetching(root: EntityId, ctx: &mut Ctx<'_>) -> EntityTree {
        let mut tree = EntityTree::empty(root);
        tree.fetched.fetch(root, ctx);
        tree.rebuild();
        tree
    }

    fn empty(root: EntityId) -> EntityTree {
        EntityTree {
            root,
            fetched: Fetched::default(),
            view: TreeView::default(),
        }
    }

    /// The entity at the root.
    pub fn root(&self) -> EntityId {
        self.root
    }

    /// The root entity's data, once at hand.
    pub fn entity(&self) -> Option<&Value> {
        match self.fetched.get(self.root) {
            Some(Fetch::Loaded(entity)) => Some(entity),
            _ => None,
        }
    }

    /// Fetches the root and every opened entity again; the tree stays as it is until
    /// the answers come.
    pub fn refresh(&mut self, ctx: &mut Ctx<'_>) {
        self.fetched.refetch_all(ctx);
    }

    /// Applies the result of one of this tree's fetches.
    pub fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if !self.fetched.on_reply(reply, ctx) {
            return false;
        }
        self.rebuild();
        true
    }

    /// The commands the selected node offers.
    pub fn commands(&self, out: &mut Vec<Command>) {
        self.view.commands(out);
    }

    /// Runs a tree command; the caller has checked it is offered.
    pub fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match self.view.run(command) {
            Change::None => {}
            Change::Reshaped => self.rebuild(),
            Change::LinkOpened(target) => {
                self.fetched.fetch_if_needed(target, ctx);
                self.rebuild();
            }
        }
    }

    /// Rebuilds the model after the data or the open nodes changed.
    fn rebuild(&mut self) {
        let nodes = match self.fetched.get(self.root) {
            Some(Fetch::Loaded(entity)) => {
                let fields = Fields {
                    fetched: &self.fetched,
                    opened: self.view.opened(),
                }
                .entity(self.root, entity, &[], &mut vec![self.root]);
                if fields.is_empty() {
                    vec![Node::note("empty", Role::Muted, "no fields")]
                } else {
                    fields
                }
            }
            Some(Fetch::Failed(message)) => vec![Node::failed(message)],
            Some(Fetch::Loading) | None => vec![Node::loading()],
        };
        self.view.set_nodes(nodes);
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
        self.view.render(area, buf, ui, block, focused);
    }
}
