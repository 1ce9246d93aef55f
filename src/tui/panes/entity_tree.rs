//! One entity as a tree of its fields. A field naming another entity expands into
//! that entity, fetched through `structs_query_entity` the first time it is opened.
//!
//! Cycle safety: an id already open on the path from the root (the root included) is
//! shown as a marked leaf (`↺ owner: 1-1 (already open above)`) that cannot expand.
//! Nodes are built only under open nodes, so the tree is never larger than what the
//! user opened, whatever the references between entities.
//!
//! The pieces any tree of entities needs live here too, shared with the references
//! tree (`reference_tree.rs`), the Handles and the Plans panes: the nodes of an
//! entity's fields ([`Fields`]) and the entities fetched for links ([`Fetched`]). The
//! node model and the widget with its keys are in `widgets/tree.rs`.

use std::collections::{HashMap, HashSet};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Block;
use serde_json::{Value, json};

use crate::entity::EntityId;
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::Command;
use crate::tui::pane::{Ctx, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::tree::{Change, Node, NodeId, NodeKind, TreeView};

/// The tool that fetches an entity when a field naming it is expanded.
pub(crate) const QUERY_TOOL: &str = "structs_query_entity";

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

    /// Takes the root entity from a `structs_query_entity` answer about it (the
    /// references query's), in place of what it showed. False when the answer holds
    /// no such entity.
    pub fn adopt(&mut self, answer: &Value) -> bool {
        if answer["id"].as_str() != Some(self.root.to_string().as_str()) {
            return false;
        }
        let Some(entity) = answer.get("entity").filter(|e| e.is_object()) else {
            return false;
        };
        self.fetched.insert(self.root, entity.clone());
        self.rebuild();
        true
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
