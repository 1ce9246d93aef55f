//! The selected call as trees, drawn with the tree every pane shares
//! (`widgets/tree.rs`, its nodes made by the entity tree's [`Fields`]):
//!
//! ```text
//! ▾ arguments {1}
//!     player_id: 1-1 player
//! ▾ answer {2}
//!   ▾ player {1}
//!     ▸ Player {12}
//!     timestamp: 2026-11-26T09:00:01Z
//! ▾ handle structs:player:1795262400:3f9a1c07… · page 1/5 · rows 1-20 of 103
//! ▾ run again here {2}
//! ```
//!
//! - The arguments, the server's answer while a breakpoint holds it, the answer (a
//!   failed call's error object), a page of its result handle once fetched, and the
//!   answer of running it again here: each a top-level node, open the first time it
//!   shows. A lone branch under the answer opens with it, down to where it forks; a
//!   fetched page or an answer run again is selected as it comes.
//! - The references the answer carries are left out of the answer's node: they have
//!   a tree of their own ([`ReferenceTree::of_answer`]).
//! - A field naming an entity opens into it: from the answer's references when they
//!   hold it (what the watched server said), else fetched on this console's core.
//!
//! The trees are built again when the selected call, or what is known of it, changes;
//! what is open stays open while the call stays selected.
//!
//! A result handle lives in the store of the server that made it
//! ([`LivePane::fetch_handle`]): watching a proxy, it is fetched from the watched server
//! through the proxy; otherwise on this console's core, which finds one the watched
//! server made only when the two share a store, and the status line says so.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::{CallKey, HandleFetch, LivePane, Rerun, handle_of};
use crate::error::ErrorCode;
use crate::record::live::{LiveCall, Status};
use crate::tui::dispatch::Reply;
use crate::tui::keymap::Command;
use crate::tui::pane::Ctx;
use crate::tui::theme::Role;
use crate::tui::widgets::fields::{Fetched, Fields};
use crate::tui::widgets::page::{FETCH_TOOL, Page, cut_handle, first_collection};
use crate::tui::widgets::reference_tree::ReferenceTree;
use crate::tui::widgets::tree::{Node, NodeId, NodeKind, TreeView};

/// How deep a lone branch under the answer opens by itself.
const LONE_BRANCH_DEPTH: usize = 4;

/// What of a call its trees were built from: when any of it changes, they are built
/// again.
#[derive(Debug, Clone, PartialEq)]
struct Built {
    key: CallKey,
    status: Status,
    size: Option<usize>,
    held: Option<u64>,
    released: Option<String>,
}

impl Built {
    fn of(call: &LiveCall) -> Built {
        Built {
            key: (call.session, call.call),
            status: call.status.clone(),
            size: call.size,
            held: call.held.as_ref().map(|h| h.id),
            released: call.released.clone(),
        }
    }
}

/// The selected call's trees.
#[derive(Default)]
pub(super) struct Detail {
    built: Option<Built>,
    /// The call: arguments, answer, handle page, answer run again.
    pub view: TreeView,
    /// The entities its ids open into: the answer's references, and those fetched.
    fetched: Fetched,
    /// The references the answer carries, when it carries any.
    pub references: Option<ReferenceTree>,
    /// The answer as its node shows it: without its references; a failed call's
    /// error object.
    answer: Option<Value>,
    /// The top-level nodes opened once for this call (one closed stays closed).
    opened: HashSet<&'static str>,
    /// Something the trees show changed (an answer run again, a fetch).
    dirty: bool,
}

impl Detail {
    /// The trees must be built again before they are next used.
    pub fn touch(&mut self) {
        self.dirty = true;
    }

    /// Builds the trees of `call` again when it is another call, or more is known of
    /// it, or something they show changed.
    pub fn sync(
        &mut self,
        call: Option<&LiveCall>,
        rerun: Option<&Rerun>,
        fetch: Option<&HandleFetch>,
    ) {
        let built = call.map(Built::of);
        if built != self.built {
            let same_call = built.as_ref().map(|b| b.key) == self.built.as_ref().map(|b| b.key);
            if !same_call {
                self.view = TreeView::default();
                self.fetched = Fetched::default();
                self.opened.clear();
            }
            let answer = call.and_then(|c| c.answer.as_ref());
            self.references = answer.and_then(ReferenceTree::of_answer);
            if let Some(references) = &self.references {
                let seeds: Vec<_> = references
                    .entities()
                    .into_iter()
                    .map(|(id, entity)| (id, entity.clone()))
                    .collect();
                for (id, entity) in seeds {
                    self.fetched.insert(id, entity);
                }
            }
            self.answer = match (call, answer) {
                (Some(call), Some(answer)) => Some(shown_answer(
                    answer,
                    &call.status,
                    self.references.is_some(),
                )),
                _ => None,
            };
            self.built = built;
            self.dirty = true;
        }
        if self.dirty {
            self.dirty = false;
            self.rebuild(call, rerun, fetch);
        }
    }

    /// Runs a tree command on the call's tree; the caller has checked it is offered.
    pub fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        if self.fetched.follow(self.view.run(command), ctx) {
            self.dirty = true;
        }
    }

    /// Applies the answer to a fetch for an opened link, in either tree.
    pub fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self.fetched.on_reply(reply, ctx) {
            self.dirty = true;
            return true;
        }
        self.references
            .as_mut()
            .is_some_and(|r| r.on_reply(reply, ctx))
    }

    fn rebuild(
        &mut self,
        call: Option<&LiveCall>,
        rerun: Option<&Rerun>,
        fetch: Option<&HandleFetch>,
    ) {
        let Some(call) = call else {
            self.view.set_nodes(Vec::new());
            return;
        };
        let key = (call.session, call.call);
        let rerun = rerun.filter(|r| r.key == key);
        let fetch = fetch.filter(|f| f.key == key);
        let held = call.held.as_ref().and_then(|h| h.answer.as_ref());
        let fetched_page = fetch.is_some_and(|f| matches!(f.page, Some(Ok(_))));
        let rerun_answered = rerun.is_some_and(|r| matches!(r.answer, Some(Ok(_))));
        let mut first_answer = false;
        let mut first_page = false;
        let mut first_rerun = false;
        for (id, shown) in [
            (ARGUMENTS, true),
            (HELD, held.is_some()),
            (ANSWER, self.answer.is_some()),
            (HANDLE, fetched_page),
            (RERUN, rerun_answered),
        ] {
            if shown && self.opened.insert(id) {
                self.view.open(vec![id.to_string()]);
                first_answer |= id == ANSWER;
                first_page |= id == HANDLE;
                first_rerun |= id == RERUN;
            }
        }
        let fields = Fields {
            fetched: &self.fetched,
            opened: self.view.opened(),
        };
        let top = |id: &str, label: &str, value: &Value| {
            fields.value(id.to_string(), label, value, false, &[], &mut Vec::new())
        };
        let mut nodes = vec![top(ARGUMENTS, "arguments", &call.arguments)];
        if let Some(answer) = held {
            nodes.push(top(HELD, "the server's answer, held", answer));
        }
        match &self.answer {
            Some(answer) => {
                let label = match call.status {
                    Status::Failed(_) | Status::Cancelled => "error",
                    Status::Running | Status::Answered => "answer",
                };
                nodes.push(top(ANSWER, label, answer));
            }
            None if call.status == Status::Running => nodes.push(Node::leaf(
                ANSWER.to_string(),
                NodeKind::Note,
                vec![(Role::Muted, "answer: not yet".into())],
            )),
            None => {}
        }
        if let Some(fetch) = fetch {
            nodes.push(handle_node(fetch, &fields));
        }
        if let Some(rerun) = rerun {
            nodes.push(rerun_node(rerun, &fields));
        }
        let lone = if first_answer {
            lone_branch(&nodes, ANSWER)
        } else {
            Vec::new()
        };
        let collection = if first_page {
            fetch
                .and_then(|f| f.page.as_ref()?.as_ref().ok())
                .and_then(|page| page.data.as_object())
                .and_then(first_collection)
                .map(|k| vec![HANDLE.to_string(), format!("k:{k}")])
        } else {
            None
        };
        self.view.set_nodes(nodes);
        // Only branches open here, whose children are built whether open or not.
        for path in lone.into_iter().chain(collection) {
            self.view.open(path);
        }
        // What a key asked for is selected as it comes, so that it is on show.
        if first_page {
            self.view.select_at_top(vec![HANDLE.to_string()]);
        } else if first_rerun {
            self.view.select_at_top(vec![RERUN.to_string()]);
        }
    }
}

impl LivePane {
    /// Fetches the first page of the selected call's result handle. Handles live in
    /// the store of the server that made them: a proxy's endpoint fetches it from the
    /// watched server, through the call's session; otherwise (a log, a server's own
    /// endpoint) this console's core looks for it, which finds it only when the two
    /// share a store.
    pub(super) fn fetch_handle(&mut self, ctx: &mut Ctx<'_>) {
        let Some((_, call)) = self.selected() else {
            return;
        };
        let Some(handle) = handle_of(call).map(str::to_string) else {
            return;
        };
        let key = (call.session, call.call);
        if self
            .watch
            .feed
            .as_ref()
            .is_some_and(|f| f.commands.is_some())
        {
            let session = self
                .live
                .sessions()
                .get(call.session.saturating_sub(1))
                .cloned()
                .unwrap_or_default();
            let command = json!({"cmd": "fetch", "handle": handle, "page": 1, "session": session});
            if let Err(why) = self.watch.send(&command) {
                ctx.status.error(why);
                return;
            }
            ctx.status.info(format!(
                "fetching {} through the watched server",
                cut_handle(&handle)
            ));
            self.fetch = Some(HandleFetch {
                key,
                handle,
                request: None,
                page: None,
            });
            self.detail.touch();
            return;
        }
        let request = ctx
            .dispatcher
            .call(FETCH_TOOL, json!({"handle": handle, "page": 1}));
        ctx.status.info(format!(
            "fetching {} on this console's core",
            cut_handle(&handle)
        ));
        self.fetch = Some(HandleFetch {
            key,
            handle,
            request: Some(request),
            page: None,
        });
        self.detail.touch();
    }

    /// Applies what the watched server answered to the handles fetched through it,
    /// saying so on the status line.
    pub(super) fn on_fetched_through(&mut self) {
        for (handle, outcome) in std::mem::take(&mut self.live.fetched) {
            let Some(fetch) = self.fetch.as_mut().filter(|f| f.handle == handle) else {
                continue;
            };
            fetch.page = Some(match outcome {
                Ok(answer) => {
                    let page = Page::parse(&answer);
                    self.live.answers.push((
                        true,
                        format!(
                            "page {} of {} of {} fetched through the watched server",
                            page.current,
                            page.total_pages,
                            cut_handle(&handle)
                        ),
                    ));
                    Ok(page)
                }
                Err(why) => {
                    let why = format!(
                        "fetching {} through the watched server: {why}",
                        cut_handle(&handle)
                    );
                    self.live.answers.push((false, why.clone()));
                    Err(why)
                }
            });
            self.detail.touch();
        }
    }

    /// Applies the answer to the handle fetch.
    pub(super) fn on_fetched(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) {
        let server = self
            .live
            .about
            .as_ref()
            .and_then(|a| a["server"].as_str())
            .map_or(String::new(), |s| format!(" ({s})"));
        let Some(fetch) = &mut self.fetch else {
            return;
        };
        fetch.request = None;
        let handle = cut_handle(&fetch.handle);
        fetch.page = Some(match &reply.result {
            Ok(answer) => {
                let page = Page::parse(answer);
                ctx.status.info(format!(
                    "page {} of {} of {handle} fetched on this console's core",
                    page.current, page.total_pages
                ));
                Ok(page)
            }
            // Not in this core's store: the server that answered the call made it.
            Err(e) if e.code == ErrorCode::ResourceNotFound => {
                let why = format!(
                    "{handle} belongs to the watched server{server}, not this console's core: \
                     its handle store does not hold it (a --handle-store redis://… both use \
                     would)"
                );
                ctx.status.error(why.clone());
                Err(why)
            }
            Err(e) => {
                ctx.status
                    .tool_error(&format!("fetching {handle} on this console's core"), e);
                Err(format!("{}: {}", e.code.as_str(), e.message))
            }
        });
        self.detail.touch();
    }
}

/// The ids of the top-level nodes.
const ARGUMENTS: &str = "k:arguments";
const HELD: &str = "k:held";
const ANSWER: &str = "k:answer";
const HANDLE: &str = "k:handle";
const RERUN: &str = "k:rerun";

/// The answer as its node shows it: a failed call's error object (not its wrapper),
/// an answer without the references another tree shows.
fn shown_answer(answer: &Value, status: &Status, references_apart: bool) -> Value {
    match (status, answer) {
        (Status::Failed(_) | Status::Cancelled, _) => answer
            .get("error")
            .filter(|e| e.is_object())
            .unwrap_or(answer)
            .clone(),
        (_, Value::Object(map)) if references_apart => Value::Object(
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "references" | "references_summary"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Map<String, Value>>(),
        ),
        _ => answer.clone(),
    }
}

/// The paths under the top-level node `id` that open with it: while a branch has one
/// child and that child is a branch too.
fn lone_branch(nodes: &[Node], id: &str) -> Vec<Vec<NodeId>> {
    let mut out = Vec::new();
    let Some(mut node) = nodes.iter().find(|n| n.id == id) else {
        return out;
    };
    let mut path = vec![node.id.clone()];
    while out.len() < LONE_BRANCH_DEPTH {
        let [child] = node.children.as_slice() else {
            break;
        };
        if child.kind != NodeKind::Branch {
            break;
        }
        path.push(child.id.clone());
        out.push(path.clone());
        node = child;
    }
    out
}

/// A page of the answer's result handle: its data under it, or why there is none.
fn handle_node(fetch: &HandleFetch, fields: &Fields<'_>) -> Node {
    let mut spans = vec![
        (Role::Field, "handle".to_string()),
        (Role::Muted, format!(" {}", cut_handle(&fetch.handle))),
    ];
    match &fetch.page {
        None => {
            spans.push((Role::Muted, "  fetching…".into()));
            Node::leaf(HANDLE.into(), NodeKind::Note, spans)
        }
        Some(Err(why)) => {
            let mut node = Node::leaf(HANDLE.into(), NodeKind::Note, spans);
            node.detail = Some((Role::Error, format!("  {why}")));
            node
        }
        Some(Ok(page)) => {
            spans.push((
                Role::Muted,
                format!(
                    " · page {}/{} · rows {}-{} of {}{}",
                    page.current,
                    page.total_pages,
                    page.first_row + 1,
                    page.last_row,
                    page.total_rows,
                    if page.cut { " (a row cut to fit)" } else { "" }
                ),
            ));
            let parent = [HANDLE.to_string()];
            let children = match &page.data {
                Value::Object(map) if map.is_empty() => {
                    vec![Node::note("empty", Role::Muted, "no data on this page")]
                }
                Value::Object(map) => map
                    .iter()
                    .map(|(k, v)| {
                        fields.value(format!("k:{k}"), k, v, false, &parent, &mut Vec::new())
                    })
                    .collect(),
                other => vec![fields.value(
                    "k:data".into(),
                    "data",
                    other,
                    false,
                    &parent,
                    &mut Vec::new(),
                )],
            };
            Node::new(HANDLE.into(), NodeKind::Branch, spans, children)
        }
    }
}

/// The answer of running the call again on this console's core.
fn rerun_node(rerun: &Rerun, fields: &Fields<'_>) -> Node {
    match &rerun.answer {
        None => Node::leaf(
            RERUN.into(),
            NodeKind::Note,
            vec![(Role::Muted, "run again here: waiting…".into())],
        ),
        Some(Ok(value)) => fields.value(
            RERUN.into(),
            "run again here",
            value,
            false,
            &[],
            &mut Vec::new(),
        ),
        Some(Err(e)) => Node::leaf(
            RERUN.into(),
            NodeKind::Note,
            vec![(
                Role::Error,
                format!("run again here: {} {}", e.code.as_str(), e.message),
            )],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_lone_branch_opens_down_to_where_it_forks() {
        let fields_of = |value: &Value| {
            let fetched = Fetched::default();
            let opened = HashSet::new();
            let fields = Fields {
                fetched: &fetched,
                opened: &opened,
            };
            vec![fields.value(ANSWER.into(), "answer", value, false, &[], &mut Vec::new())]
        };
        let nodes = fields_of(&json!({"player": {"Player": {"id": "1-1", "planetId": "2-1"}}}));
        assert_eq!(
            lone_branch(&nodes, ANSWER),
            [
                vec![ANSWER.to_string(), "k:player".into()],
                vec![ANSWER.to_string(), "k:player".into(), "k:Player".into()],
            ]
        );
        // Two keys: nothing opens beyond the answer.
        let nodes = fields_of(&json!({"a": {"b": 1}, "c": 2}));
        assert!(lone_branch(&nodes, ANSWER).is_empty());
    }

    #[test]
    fn the_answer_shows_without_its_references_and_an_error_without_its_wrapper() {
        let answer = json!({"player": {}, "references": {}, "references_summary": {}});
        assert_eq!(
            shown_answer(&answer, &Status::Answered, true),
            json!({"player": {}})
        );
        assert_eq!(shown_answer(&answer, &Status::Answered, false), answer);
        let error = json!({"error": {"code": "RESOURCE_NOT_FOUND", "message": "no"}});
        assert_eq!(
            shown_answer(&error, &Status::Failed("RESOURCE_NOT_FOUND".into()), false),
            error["error"]
        );
    }
}
