//! The entities an opened entity references, as a tree beside its own.
//!
//! Opening an entity asks `structs_query_entity` for it with `include_references`, at
//! the pane's depth (1 or 2) and kind filter, and shows the answer's `references`:
//!
//! ```text
//! ▾ guild (1)
//!   ▸ 0-1  ← guildId of 1-1
//! ▾ struct (2) · 1 failed
//!   ▸ 5-2  Orbital Shield Generator  ← space[0] of 2-1  (depth 2)
//!     ✗ 5-9 failed  ← water[0] of 9-1
//!         the source failed to answer for 5-9
//! ```
//!
//! - Top-level nodes group the references by kind, in the kinds list's order
//!   ([`KIND_ORDER`]), each with its count (and its failures).
//! - Under a kind, one node per referenced entity in the answer's order (depth 1
//!   first): its id, a name where the entity has one (a player's name, a struct's
//!   type), where it was found (`← planetId of 1-1`), and `(depth 2)` for what was
//!   reached through another reference. It expands into the entity's fields, drawn as
//!   the entity tree draws them ([`Fields`]); a field naming an entity expands in turn,
//!   from the answer when it holds that entity, otherwise fetched on demand.
//! - A reference that could not be resolved is a red `✗` leaf, its error on a second
//!   line.
//! - The title says the depth and kind filter asked for, the bottom border what came
//!   back (`4 resolved, 0 failed`, `· 3 left out (limit)` when limits cut the list).
//!
//! Changing the depth or the kind filter asks again; only the latest question's answer
//! is applied, so an answer overtaken by a newer question is dropped.
//!
//! The tree can also show the references an answer already carries
//! ([`ReferenceTree::of_answer`]: the Live tab's calls), asking nothing. Such an answer
//! may have been made with lean bookkeeping (`failures`, `none`): an entry without a
//! `status` is a resolved one, and without a `references_summary` the footer counts
//! the map itself.
//!
//! The kind filter cycles through all kinds, then each kind the last unfiltered answer
//! held (at its depth), then all kinds again. The filter only decides what is shown:
//! at depth 2 the tool still walks through first-level entities of other kinds, so
//! filtering a player's references to `struct` shows the structs on its planet.

use std::collections::HashSet;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;
use serde_json::{Map, Value, json};

use crate::entity::struct_types::struct_type;
use crate::entity::{EntityId, EntityKind};
use crate::references::ENTRY_FIELDS;
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::Command;
use crate::tui::pane::{Ctx, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::fields::{Fetched, Fields, QUERY_TOOL};
use crate::tui::widgets::tree::{Node, NodeId, NodeKind, TreeView};

/// The kinds in the order the Entities tab's kinds list and the references tree show them: players first (what an agent
/// plays as), then what players hold, then the energy economy, then addresses.
pub(crate) const KIND_ORDER: [EntityKind; 12] = [
    EntityKind::Player,
    EntityKind::Guild,
    EntityKind::Planet,
    EntityKind::Fleet,
    EntityKind::Struct,
    EntityKind::Reactor,
    EntityKind::Substation,
    EntityKind::Allocation,
    EntityKind::Infusion,
    EntityKind::Provider,
    EntityKind::Agreement,
    EntityKind::Address,
];

/// One entry of the answer's `references`.
#[derive(Debug)]
struct Reference {
    id: EntityId,
    /// The entity's data, or why it could not be had.
    outcome: Result<Value, String>,
    /// The field it was found in (`planetId`, `space[0]`), when the answer says.
    from: Option<String>,
    /// The entity that field belongs to, when the tool says.
    within: Option<String>,
    depth: u64,
}

impl Reference {
    fn parse(key: &str, entry: &Value) -> Option<Reference> {
        let text = entry.get("id").and_then(Value::as_str).unwrap_or(key);
        let id = EntityId::parse(text).ok()?;
        // Lean bookkeeping leaves `status` out of a resolved entry; a failed one always
        // says so.
        let resolved = match entry.get("status").and_then(Value::as_str) {
            Some(status) => status == "success",
            None => entry.get("error").is_none() && entry.get("error_code").is_none(),
        };
        let outcome = if resolved {
            Ok(entity_data(id.kind, entry))
        } else {
            let message = entry["error"]
                .as_str()
                .or_else(|| entry["error_code"].as_str())
                .unwrap_or("unknown error");
            Err(message.to_string())
        };
        Some(Reference {
            id,
            outcome,
            from: entry["referenced_from"].as_str().map(str::to_string),
            within: entry["referenced_in"].as_str().map(str::to_string),
            depth: entry["depth"].as_u64().unwrap_or(1),
        })
    }

    /// A name that tells entities of one kind apart at a glance, where there is one.
    fn name(&self) -> Option<String> {
        let entity = self.outcome.as_ref().ok()?;
        let core = self.id.kind.core_object(entity)?;
        match self.id.kind {
            EntityKind::Player
            | EntityKind::Guild
            | EntityKind::Planet
            | EntityKind::Substation => core["name"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string),
            EntityKind::Struct => {
                let code = core["type"].as_str()?.parse().ok()?;
                struct_type(code).map(|t| t.name.clone())
            }
            _ => None,
        }
    }

    /// `  ← planetId of 1-1`; nothing when the answer does not say.
    fn origin(&self) -> String {
        match (&self.from, &self.within) {
            (Some(from), Some(within)) => format!("  ← {from} of {within}"),
            (Some(from), None) => format!("  ← {from}"),
            (None, _) => String::new(),
        }
    }
}

/// A reference's entity as its query returns it: the entry without the fields the
/// references add. An entity the chain does not wrap (an address) keeps its `id`.
fn entity_data(kind: EntityKind, entry: &Value) -> Value {
    let Value::Object(fields) = entry else {
        return Value::Null;
    };
    let data: Map<String, Value> = fields
        .iter()
        .filter(|(k, _)| {
            !ENTRY_FIELDS.contains(&k.as_str()) && (k.as_str() != "id" || kind.rest_key().is_none())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Object(data)
}

/// The answer's `references_summary`, as far as the footer tells it.
#[derive(Debug)]
enum Summary {
    /// References are turned off on this server, for this reason.
    Disabled(String),
    Counted {
        resolved: u64,
        failed: u64,
        /// Failed references the server leaves out of the map.
        omitted: u64,
        /// References the limits left out.
        left_out: u64,
    },
}

impl Summary {
    /// The summary as the answer gives it. Lean bookkeeping gives none when nothing
    /// failed or was left out, and no `resolved` count: those come from the map.
    fn parse(summary: &Value, references: &[Reference]) -> Summary {
        if summary["status"] == "disabled" {
            let reason = summary["reason"].as_str().unwrap_or("no reason given");
            return Summary::Disabled(reason.to_string());
        }
        let in_map = |ok: bool| {
            references
                .iter()
                .filter(|r| r.outcome.is_ok() == ok)
                .count() as u64
        };
        let count = |key: &str| summary[key].as_u64();
        Summary::Counted {
            resolved: count("resolved").unwrap_or_else(|| in_map(true)),
            failed: count("failed").unwrap_or_else(|| in_map(false)),
            omitted: count("failed_omitted").unwrap_or(0),
            left_out: count("left_out").unwrap_or(0),
        }
    }
}

/// Where the references stand.
#[derive(Debug)]
enum Answer {
    Loading,
    Loaded {
        references: Vec<Reference>,
        summary: Summary,
    },
    Failed(String),
}

/// The references of one opened entity, or of an answer at hand.
pub(crate) struct ReferenceTree {
    /// The entity whose references are asked for; `None` for an answer's own.
    root: Option<EntityId>,
    depth: u8,
    /// Only references of this kind; `None` for all kinds.
    kind: Option<EntityKind>,
    /// The kinds in the last unfiltered answer, in [`KIND_ORDER`]: what the kind filter
    /// cycles through.
    seen_kinds: Vec<EntityKind>,
    /// The question on its way, and its arguments (kept after it is answered).
    request: Option<RequestId>,
    args: Value,
    answer: Answer,
    /// The entities the answer brought, and those fetched since for opened links.
    fetched: Fetched,
    /// Kind groups opened once already: a new group starts open, but one the user
    /// closed stays closed when the answer is replaced.
    opened_groups: HashSet<EntityKind>,
    /// The selection when the question was asked, kept once the answer is in.
    reselect: Vec<NodeId>,
    view: TreeView,
}

impl ReferenceTree {
    /// The references of `root` at `depth`, of every kind, already asked for.
    pub fn new(root: EntityId, depth: u8, ctx: &mut Ctx<'_>) -> ReferenceTree {
        let mut tree = ReferenceTree {
            root: Some(root),
            depth: depth.clamp(1, 2),
            kind: None,
            seen_kinds: Vec::new(),
            request: None,
            args: Value::Null,
            answer: Answer::Loading,
            fetched: Fetched::default(),
            opened_groups: HashSet::new(),
            reselect: Vec::new(),
            view: TreeView::default(),
        };
        tree.ask(ctx);
        tree
    }

    /// The references `answer` carries (its `references` map and summary), when it
    /// carries any; nothing is asked. Links in the entities still open, from the
    /// answer when it holds the entity, else fetched.
    pub fn of_answer(answer: &Value) -> Option<ReferenceTree> {
        let carries = answer.get("references").is_some_and(Value::is_object)
            || answer["references_summary"]["status"] == "disabled";
        if !carries {
            return None;
        }
        let mut tree = ReferenceTree {
            root: None,
            depth: 1,
            kind: None,
            seen_kinds: Vec::new(),
            request: None,
            args: Value::Null,
            answer: Answer::Loading,
            fetched: Fetched::default(),
            opened_groups: HashSet::new(),
            reselect: Vec::new(),
            view: TreeView::default(),
        };
        tree.answer = tree.take(answer);
        tree.rebuild();
        Some(tree)
    }

    /// The resolved references' entities, as their queries return them.
    pub fn entities(&self) -> Vec<(EntityId, &Value)> {
        match &self.answer {
            Answer::Loaded { references, .. } => references
                .iter()
                .filter_map(|r| r.outcome.as_ref().ok().map(|e| (r.id, e)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The depth asked for.
    pub fn depth(&self) -> u8 {
        self.depth
    }

    /// The arguments of the latest question.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// Asks for the references with the current depth and filter. Any earlier question
    /// still on its way is forgotten, so its answer will be dropped.
    fn ask(&mut self, ctx: &mut Ctx<'_>) {
        // An answer's own references have no question to ask again.
        let Some(root) = self.root else {
            return;
        };
        let mut args = json!({
            "id": root.to_string(),
            "include_references": true,
            "reference_depth": self.depth,
        });
        if let Some(kind) = self.kind {
            args["reference_types"] = json!([kind.name()]);
        }
        self.request = Some(ctx.dispatcher.call(QUERY_TOOL, args.clone()));
        self.args = args;
        if !matches!(self.answer, Answer::Loading) {
            self.reselect = self.view.selected().to_vec();
        }
        self.answer = Answer::Loading;
        self.rebuild();
    }

    /// Asks the same question again (after an action changed the game).
    pub fn refresh(&mut self, ctx: &mut Ctx<'_>) {
        self.ask(ctx);
    }

    /// Switches between depth 1 and 2 and asks again.
    pub fn toggle_depth(&mut self, ctx: &mut Ctx<'_>) {
        if self.root.is_none() {
            return;
        }
        self.depth = if self.depth == 1 { 2 } else { 1 };
        self.ask(ctx);
        self.say_what_is_asked(ctx);
    }

    /// True when the kind filter has somewhere to go.
    pub fn can_cycle_kinds(&self) -> bool {
        self.root.is_some() && (self.kind.is_some() || !self.seen_kinds.is_empty())
    }

    /// Moves the kind filter on (all kinds, each kind seen, all kinds) and asks again.
    pub fn cycle_kinds(&mut self, ctx: &mut Ctx<'_>) {
        if self.root.is_none() {
            return;
        }
        self.kind = match self.kind {
            None => self.seen_kinds.first().copied(),
            Some(kind) => {
                let at = self.seen_kinds.iter().position(|k| *k == kind);
                at.and_then(|i| self.seen_kinds.get(i + 1)).copied()
            }
        };
        self.ask(ctx);
        self.say_what_is_asked(ctx);
    }

    /// Puts the new question on the status line, for terminals too narrow to show the
    /// references beside the entity.
    fn say_what_is_asked(&self, ctx: &mut Ctx<'_>) {
        if let Some(root) = self.root {
            ctx.status.info(format!(
                "references of {root}: depth {}, {}",
                self.depth,
                self.kinds_label()
            ));
        }
    }

    fn kinds_label(&self) -> String {
        match self.kind {
            Some(kind) => format!("{kind} only"),
            None => "all kinds".into(),
        }
    }

    /// True when `id` is this tree's references query, not yet answered.
    pub fn awaits(&self, id: RequestId) -> bool {
        self.request == Some(id)
    }

    /// Applies the answer to the latest question, or a fetch for an opened link.
    /// Answers to earlier questions are not claimed.
    pub fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self.request == Some(reply.id) {
            self.request = None;
            self.answer = match &reply.result {
                // Over the size limit the core answers with an envelope; the whole answer
                // waits under its handle.
                Ok(answer) if answer["status"] == "partial" => Answer::Failed(format!(
                    "the answer is over 25 KB; it is stored as {}, to read in the Handles \
                     tab; try depth 1 or a kind filter",
                    answer["result_handle"].as_str().unwrap_or("a handle")
                )),
                Ok(answer) => self.take(answer),
                // The tree says what went wrong; the status line is left to the entity
                // tree, which asked the same core about the same id at the same time.
                Err(e) => Answer::Failed(format!("{}: {}", e.code.as_str(), e.message)),
            };
            self.rebuild();
            let reselect = std::mem::take(&mut self.reselect);
            if !reselect.is_empty() {
                self.view.select_if_visible(reselect);
            }
            return true;
        }
        if self.fetched.on_reply(reply, ctx) {
            self.rebuild();
            return true;
        }
        false
    }

    /// Reads an answer: the references in order, the summary, and the entities for
    /// links to expand into.
    fn take(&mut self, answer: &Value) -> Answer {
        if let (Some(root), Some(entity)) = (self.root, answer.get("entity")) {
            self.fetched.insert(root, entity.clone());
        }
        let references: Vec<Reference> = answer["references"]
            .as_object()
            .map(|map| {
                map.iter()
                    .filter_map(|(key, entry)| Reference::parse(key, entry))
                    .collect()
            })
            .unwrap_or_default();
        for reference in &references {
            if let Ok(entity) = &reference.outcome {
                self.fetched.insert(reference.id, entity.clone());
            }
        }
        if self.kind.is_none() {
            self.seen_kinds.clear();
            for reference in &references {
                if !self.seen_kinds.contains(&reference.id.kind) {
                    self.seen_kinds.push(reference.id.kind);
                }
            }
            self.seen_kinds.sort_by_key(|k| kind_rank(*k));
        }
        let summary = Summary::parse(&answer["references_summary"], &references);
        Answer::Loaded {
            references,
            summary,
        }
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

    /// Rebuilds the model after the answer or the open nodes changed.
    fn rebuild(&mut self) {
        let nodes = match &self.answer {
            Answer::Loading => vec![Node::note("loading", Role::Muted, "loading references…")],
            Answer::Failed(message) => vec![Node::failed(message)],
            Answer::Loaded {
                summary: Summary::Disabled(reason),
                ..
            } => vec![Node::note(
                "disabled",
                Role::Muted,
                format!("references are off: {reason}"),
            )],
            Answer::Loaded { references, .. } if references.is_empty() => {
                let text = match self.kind {
                    Some(kind) => format!("no {kind} references"),
                    None => "no references".into(),
                };
                vec![Node::note("none", Role::Muted, text)]
            }
            Answer::Loaded { references, .. } => {
                let mut groups = Vec::new();
                for kind in KIND_ORDER {
                    let of_kind: Vec<&Reference> =
                        references.iter().filter(|r| r.id.kind == kind).collect();
                    if of_kind.is_empty() {
                        continue;
                    }
                    let group_id = format!("g:{kind}");
                    if self.opened_groups.insert(kind) {
                        self.view.open(vec![group_id.clone()]);
                    }
                    groups.push((kind, group_id, of_kind));
                }
                let fields = Fields {
                    fetched: &self.fetched,
                    opened: self.view.opened(),
                };
                groups
                    .into_iter()
                    .map(|(kind, group_id, of_kind)| group_node(kind, group_id, &of_kind, &fields))
                    .collect()
            }
        };
        self.view.set_nodes(nodes);
    }

    /// Draws the tree in `block`, titled with the question and footed with the
    /// answer's counts.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        ui: &Ui<'_>,
        block: Block<'_>,
        focused: bool,
    ) {
        let theme = ui.theme;
        let title = if self.root.is_some() {
            format!(
                " references · depth {} · {} ",
                self.depth,
                self.kinds_label()
            )
        } else {
            " references in the answer ".to_string()
        };
        let mut footer = vec![Span::raw(" ")];
        match &self.answer {
            Answer::Loading => footer.push(Span::styled("loading…", theme.style(Role::Muted))),
            Answer::Failed(_) => {
                footer.push(Span::styled("query failed", theme.style(Role::Error)));
            }
            Answer::Loaded {
                summary: Summary::Disabled(_),
                ..
            } => footer.push(Span::styled("disabled", theme.style(Role::Muted))),
            Answer::Loaded {
                summary:
                    Summary::Counted {
                        resolved,
                        failed,
                        omitted,
                        left_out,
                    },
                ..
            } => {
                footer.push(Span::styled(
                    format!("{resolved} resolved, "),
                    theme.style(Role::Muted),
                ));
                let failed_role = if *failed > 0 {
                    Role::Error
                } else {
                    Role::Muted
                };
                footer.push(Span::styled(
                    format!("{failed} failed"),
                    theme.style(failed_role),
                ));
                if *omitted > 0 {
                    footer.push(Span::styled(
                        format!(" ({omitted} not shown)"),
                        theme.style(Role::Muted),
                    ));
                }
                if *left_out > 0 {
                    footer.push(Span::styled(
                        format!(" · {left_out} left out (limit)"),
                        theme.style(Role::Muted),
                    ));
                }
            }
        }
        footer.push(Span::raw(" "));
        let block = block
            .title(Span::styled(title, theme.style(Role::Title)))
            .title_bottom(Line::from(footer));
        self.view.render(area, buf, ui, block, focused);
    }
}

/// A kind's group: `struct (3)`, and its failures, over one node per reference.
fn group_node(
    kind: EntityKind,
    group_id: NodeId,
    references: &[&Reference],
    fields: &Fields<'_>,
) -> Node {
    let mut spans = vec![
        (Role::Text, kind.name().to_string()),
        (Role::Muted, format!(" ({})", references.len())),
    ];
    let failed = references.iter().filter(|r| r.outcome.is_err()).count();
    if failed > 0 {
        spans.push((Role::Error, format!(" · {failed} failed")));
    }
    let children = references
        .iter()
        .map(|r| reference_node(r, &group_id, fields))
        .collect();
    Node::new(group_id, NodeKind::Branch, spans, children)
}

/// One referenced entity: its fields under it once opened, or a marked leaf when it
/// could not be resolved, its error on a second line (errors are long, and beside the
/// origin they would be cut short).
fn reference_node(reference: &Reference, group_id: &NodeId, fields: &Fields<'_>) -> Node {
    let id = format!("r:{}", reference.id);
    let origin = (Role::Muted, reference.origin());
    let entity = match &reference.outcome {
        Ok(entity) => entity,
        Err(message) => {
            let mut node = Node::leaf(
                id,
                NodeKind::Leaf,
                vec![(Role::Error, format!("✗ {} failed", reference.id)), origin],
            );
            node.detail = Some((Role::Error, format!("  {message}")));
            return node;
        }
    };
    let mut spans = vec![(Role::IdLink, reference.id.to_string())];
    if let Some(name) = reference.name() {
        spans.push((Role::Text, format!("  {name}")));
    }
    spans.push(origin);
    if reference.depth >= 2 {
        spans.push((Role::Muted, format!("  (depth {})", reference.depth)));
    }
    let path = vec![group_id.clone(), id.clone()];
    let children = if fields.opened.contains(&path) {
        let nodes = fields.entity(reference.id, entity, &path, &mut vec![reference.id]);
        if nodes.is_empty() {
            vec![Node::note("empty", Role::Muted, "no fields")]
        } else {
            nodes
        }
    } else {
        // Never on show while closed; it gives the node its ▸ marker.
        vec![Node::loading()]
    };
    Node::new(id, NodeKind::Branch, spans, children)
}

/// A kind's place in [`KIND_ORDER`].
fn kind_rank(kind: EntityKind) -> usize {
    KIND_ORDER
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(KIND_ORDER.len())
}
