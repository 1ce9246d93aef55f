//! One entity as a tree of its fields. A field naming another entity expands into
//! that entity, fetched through `structs_query_entity` the first time it is opened.
//!
//! Cycle safety: an id already open on the path from the root (the root included) is
//! shown as a marked leaf (`↺ owner: 1-1 (already open above)`) that cannot expand.
//! Nodes are built only under open nodes, so the tree is never larger than what the
//! user opened, whatever the references between entities.
//!
//! The nodes of an entity's fields ([`Fields`]) and the entities fetched for links
//! ([`Fetched`]) are in `widgets/fields.rs`, shared with the references tree and the
//! Handles, Plans and Live tabs; the node model and the widget with its keys are in
//! `widgets/tree.rs`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Block;
use serde_json::Value;

use crate::entity::EntityId;
use crate::tui::dispatch::Reply;
use crate::tui::keymap::Command;
use crate::tui::pane::{Ctx, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::fields::{Fetch, Fetched, Fields};
use crate::tui::widgets::tree::{Node, TreeView};

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
        if self.fetched.follow(self.view.run(command), ctx) {
            self.rebuild();
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
