//! The pieces any tree of entities needs, shared by the Entities tab's trees, the
//! references tree, and the Handles, Plans and Live tabs: the nodes of an entity's
//! fields ([`Fields`]) and the entities fetched for links ([`Fetched`]). The node
//! model and the widget with its keys are in `tree.rs`.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use crate::entity::EntityId;
use crate::entity::records::StructStatus;
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::pane::Ctx;
use crate::tui::theme::Role;
use crate::tui::widgets::tree::{Change, Node, NodeId, NodeKind};

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

    /// What a tree command's `change` calls for: true when the tree's nodes must be
    /// built again, after asking for the entity an opened link names. Every tree over
    /// entities (an entity, its references, a handle's page, a step's result, a live
    /// call) follows its commands through here.
    pub fn follow(&mut self, change: Change, ctx: &mut Ctx<'_>) -> bool {
        match change {
            Change::None => false,
            Change::Reshaped => true,
            Change::LinkOpened(target) => {
                self.fetch_if_needed(target, ctx);
                true
            }
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
                    let children = self.link_children(target, &path, on_path);
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
                // A struct's status is the chain's bitmask: its words beside the number.
                None if label == "status"
                    && parent.last().is_some_and(|p| p == "s:structAttributes") =>
                {
                    status_node(node_id.clone(), field.clone(), text)
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

/// A struct's `status`, the chain's bitmask, with its words beside the number.
fn status_node(node_id: NodeId, field: (Role, String), text: &str) -> Node {
    let words = match StructStatus::of(&json!({ "status": text })) {
        Some(s) if s.0 == 0 => "  stateless".to_string(),
        Some(s) => format!("  {} ({})", s.word(), s.flags().join(", ")),
        None => String::new(),
    };
    Node::leaf(
        node_id,
        NodeKind::Leaf,
        vec![
            field,
            (Role::Muted, ": ".to_string()),
            (Role::Value, text.to_string()),
            (Role::Muted, words),
        ],
    )
}

impl Fields<'_> {
    /// What a field naming `target` holds when opened at `path`: the entity's fields
    /// once fetched, or why not yet.
    fn link_children(
        &self,
        target: EntityId,
        path: &[NodeId],
        on_path: &mut Vec<EntityId>,
    ) -> Vec<Node> {
        if !self.opened.contains(path) {
            // Never on show while closed; it gives the node its ▸ marker.
            return vec![Node::loading()];
        }
        match self.fetched.get(target) {
            Some(Fetch::Loaded(entity)) => {
                on_path.push(target);
                let fields = self.entity(target, entity, path, on_path);
                on_path.pop();
                fields
            }
            Some(Fetch::Failed(message)) => vec![Node::failed(message)],
            Some(Fetch::Loading) | None => vec![Node::loading()],
        }
    }
}
