//! `subscriptions/listen`: the stream a 2026-07-28 client opens for what changes.
//!
//! It carries what this server can say changed: updates of the entities it names
//! (`structs://entities/{id}`, one per game event that changed them), changes of the
//! prompt list (the docs' skills and playbooks are prompts), and, for a client that
//! declares the Tasks extension, the status of the tasks it names
//! (`notifications.taskIds`, sent as `notifications/tasks`, each with the whole task as
//! `tasks/get` answers it).
//!
//! rmcp 3.9 reads the filter into a type without the extension's `taskIds`, and
//! acknowledges the filter itself before this server's handler runs. The ids are
//! therefore read from the request's own text on its way in ([`task_ids_of`]): the HTTP
//! face puts them in the request's extensions ([`ListenTaskIds`]), the stdio face keeps
//! them by request id ([`PendingListens`]) until the stream starts. The acknowledgement
//! cannot list them; the first notification of each task follows at once, with its
//! status then.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ErrorCode, GetMeta, RequestId, ServerNotification, SubscriptionFilter, TaskStatus,
    TaskStatusNotification, TaskStatusNotificationParams,
};
use rmcp::service::SubscriptionContext;
use serde_json::{Value, json};

use crate::context::Principal;
use crate::context::caller::{Full, Place, Places};
use crate::entity::{ENTITY_URI, EntityId};
use crate::error::ToolError;

/// Listen streams one HTTP server holds open at once, whoever opened them.
pub const MAX_STREAMS: usize = 256;

/// Listen streams one caller ([`crate::context::caller`]) holds open at once.
pub const MAX_STREAMS_PER_CALLER: usize = 8;

/// A stream that has carried nothing for this long is ended with its final result;
/// its client opens another if it still wants one.
pub const STREAM_IDLE: Duration = Duration::from_secs(300);

/// The listen streams open over HTTP, in all and by caller.
pub struct Streams(Arc<Places>);

impl Default for Streams {
    fn default() -> Streams {
        Streams(Places::new(MAX_STREAMS, MAX_STREAMS_PER_CALLER))
    }
}

/// One open stream's place; given back when dropped (the stream's body ended).
pub type StreamSlot = Place;

/// Why a stream was not opened: the caller's cap or the server's.
pub enum NoRoom {
    Caller(ToolError),
    Server(ToolError),
}

impl Streams {
    /// A place for one more stream of `caller`, or why there is none.
    pub fn take(&self, caller: &Principal) -> Result<StreamSlot, NoRoom> {
        self.0.take(Some(caller.id())).map_err(|full| match full {
            Full::Caller => NoRoom::Caller(
                ToolError::new(
                    crate::error::ErrorCode::RateLimitExceeded,
                    format!(
                        "this caller has {MAX_STREAMS_PER_CALLER} subscriptions/listen streams \
                         open, the most it may; cancel one, or follow more entities on one stream"
                    ),
                )
                .with_extra("limit", json!(MAX_STREAMS_PER_CALLER)),
            ),
            Full::All => NoRoom::Server(
                ToolError::new(
                    crate::error::ErrorCode::ResourceUnavailable,
                    format!(
                        "this server holds at most {MAX_STREAMS} subscriptions/listen streams \
                         and all are open; try again shortly"
                    ),
                )
                .with_extra("limit", json!(MAX_STREAMS))
                .with_extra("retry_after_ms", json!(1000)),
            ),
        })
    }

    /// Streams open now.
    pub fn open(&self) -> usize {
        self.0.total()
    }
}

/// Most tasks one stream follows; the rest of a longer list is not followed.
pub const TASKS_MAX: usize = 64;

/// Listen requests read but not yet started, that one connection keeps at most (over
/// stdio, a request rmcp refused before the stream started leaves its entry behind).
const PENDING_MAX: usize = 256;

/// The task ids a `subscriptions/listen` request names, as the HTTP face hands them on
/// in the request's extensions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListenTaskIds(pub Vec<String>);

/// The task ids of the listen requests one stdio connection has read, by request id,
/// until their streams start.
#[derive(Debug, Default)]
pub struct PendingListens(Mutex<HashMap<String, Vec<String>>>);

impl PendingListens {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<String>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps what a listen request read off the wire names.
    pub fn put(&self, id: &Value, tasks: Vec<String>) {
        let mut map = self.map();
        if map.len() >= PENDING_MAX {
            map.clear();
        }
        map.insert(id.to_string(), tasks);
    }

    fn take(&self, id: &RequestId) -> Vec<String> {
        let key = serde_json::to_value(id).unwrap_or_default().to_string();
        self.map().remove(&key).unwrap_or_default()
    }
}

/// The request id and `notifications.taskIds` of a `subscriptions/listen` request's
/// text; `None` for any other message, or one that names no task. Cheap for the rest:
/// a message that does not hold the method's name is not parsed.
pub fn task_ids_of(message: &[u8]) -> Option<(Value, Vec<String>)> {
    const METHOD: &[u8] = b"subscriptions/listen";
    memchr::memmem::find(message, METHOD)?;
    let value: Value = serde_json::from_slice(message).ok()?;
    if value["method"] != "subscriptions/listen" {
        return None;
    }
    let ids: Vec<String> = value["params"]["notifications"]["taskIds"]
        .as_array()?
        .iter()
        .filter_map(|id| id.as_str().map(str::to_string))
        .take(TASKS_MAX)
        .collect();
    (!ids.is_empty()).then(|| (value["id"].clone(), ids))
}

/// What a notification said of a task: its status and status message.
type Said = (TaskStatus, Option<String>);

/// The tasks one stream follows, each with what was last said of it.
struct Following {
    tasks: Vec<(String, Option<Said>)>,
    /// Notifications sent so far.
    sent: u64,
    /// Who listens: it follows its own tasks only.
    who: crate::context::Principal,
}

impl Following {
    /// The tasks `subscription`'s request names; refused (`-32021`) for a client that
    /// does not declare the Tasks extension.
    fn new(
        server: &super::McpServer,
        subscription: &SubscriptionContext,
    ) -> Result<Self, McpError> {
        let context = subscription.request_context();
        let from_http = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<ListenTaskIds>())
            .map(|ids| ids.0.clone());
        let ids = match from_http {
            Some(ids) => ids,
            None => server.pending_listens.take(&context.id),
        };
        if !ids.is_empty()
            && !context
                .client_capabilities()
                .is_some_and(|caps| caps.supports_tasks())
        {
            return Err(McpError::new(
                ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                "task status notifications are for clients that declare the Tasks \
                 extension (io.modelcontextprotocol/tasks in their capabilities)",
                Some(json!({"requiredCapabilities": {"extensions":
                    {rmcp::model::TASKS_EXTENSION_ID: {}}}})),
            ));
        }
        let mut tasks: Vec<(String, Option<Said>)> = Vec::new();
        for id in ids {
            if !tasks.iter().any(|(known, _)| *known == id) {
                tasks.push((id, None));
            }
        }
        Ok(Following {
            tasks,
            sent: 0,
            who: server.principal(context),
        })
    }

    fn any(&self) -> bool {
        !self.tasks.is_empty()
    }

    /// How many notifications it has sent.
    fn said(&self) -> u64 {
        self.sent
    }

    /// Sends the status of each followed task that changed since it was last sent (the
    /// first time, its status then); a task that ended, or that the store does not
    /// know, is followed no more.
    async fn send_changes(
        &mut self,
        server: &super::McpServer,
        subscription: &SubscriptionContext,
    ) -> Result<(), ()> {
        let mut done = Vec::new();
        for (i, (id, last)) in self.tasks.iter_mut().enumerate() {
            let Ok(task) = server.tasks.get(id, Some(&self.who)).await else {
                done.push(i);
                continue;
            };
            let now = (task.status(), task.task.status_message.clone());
            if last.as_ref() == Some(&now) {
                continue;
            }
            *last = Some(now);
            if task.status().is_terminal() {
                done.push(i);
            }
            if let Some(r) = &server.recorder {
                r.notification(
                    "notifications/tasks",
                    serde_json::to_value(&task).unwrap_or_default(),
                );
            }
            let mut note = ServerNotification::TaskStatusNotification(TaskStatusNotification::new(
                TaskStatusNotificationParams::new(task),
            ));
            note.get_meta_mut()
                .set_subscription_id(subscription.request_context().id.clone());
            self.sent += 1;
            if subscription
                .request_context()
                .peer
                .send_notification(note)
                .await
                .is_err()
            {
                return Err(());
            }
        }
        for i in done.into_iter().rev() {
            self.tasks.remove(i);
        }
        Ok(())
    }
}

/// What of a `subscriptions/listen` filter this server serves: prompt list changes
/// (the docs' skills and playbooks are prompts) and updates of entities
/// (`structs://entities/{id}`). The tool list changes only with an attached server,
/// which this server does not follow, so it is never offered.
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut filter = SubscriptionFilter::new();
    filter.prompts_list_changed = requested.prompts_list_changed.filter(|on| *on);
    filter.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|uri| entity_of(uri).is_some())
            .cloned()
            .collect()
    });
    filter
}

fn entity_of(uri: &str) -> Option<EntityId> {
    EntityId::parse(uri.strip_prefix(ENTITY_URI)?).ok()
}

/// Runs one `subscriptions/listen` stream until the client cancels it or the server
/// stops: each entity it names that a game event changed, once per event, each change
/// of the prompt list, and each change of the status of the tasks it names.
pub async fn listen(
    server: &super::McpServer,
    subscription: SubscriptionContext,
) -> Result<(), McpError> {
    let mut following = Following::new(server, &subscription)?;
    let accepted = subscription.accepted().clone();
    let sink = subscription.sink().clone();
    let recorder = server.recorder.clone();
    let watched: std::collections::HashSet<EntityId> = accepted
        .resource_subscriptions
        .iter()
        .flatten()
        .filter_map(|uri| entity_of(uri))
        .collect();
    let mut events = (!watched.is_empty())
        .then(|| server.core.events().map(|bus| bus.subscribe()))
        .flatten();
    let prompts = accepted.prompts_list_changed == Some(true);
    let mut prompt_changes = PromptChanges::new(server);
    let note = |method: &str, params: serde_json::Value| {
        if let Some(r) = &recorder {
            r.notification(method, params);
        }
    };
    let mut beat = tokio::time::interval(std::time::Duration::from_millis(
        super::tasks::POLL_INTERVAL_MS,
    ));
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Ended when nothing was sent for the idle time: the client hears the stream's
    // final result, and opens another if it still wants one.
    let idle = server.stream_idle;
    let quiet = tokio::time::sleep(idle);
    tokio::pin!(quiet);
    let mut said = following.said();
    loop {
        let now_said = following.said();
        if now_said != said {
            said = now_said;
            quiet.as_mut().reset(tokio::time::Instant::now() + idle);
        }
        tokio::select! {
            _ = subscription.cancelled() => return Ok(()),
            () = &mut quiet => return Ok(()),
            _ = beat.tick(), if following.any() => {
                if following.send_changes(server, &subscription).await.is_err() {
                    return Ok(());
                }
            }
            event = async {
                match events.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            } => match event {
                Ok(event) => {
                    let mut sent = std::collections::HashSet::new();
                    for id in event.changed {
                        if watched.contains(&id) && sent.insert(id) {
                            let uri = crate::entity::entity_uri(id);
                            note("notifications/resources/updated", serde_json::json!({"uri": uri}));
                            if sink.notify_resource_updated(uri).await.is_err() {
                                return Ok(());
                            }
                            quiet.as_mut().reset(tokio::time::Instant::now() + idle);
                        }
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => events = None,
            },
            changed = prompt_changes.next(), if prompts => {
                if changed.is_none() {
                    return Ok(());
                }
                note("notifications/prompts/list_changed", serde_json::Value::Null);
                if sink.notify_prompt_list_changed().await.is_err() {
                    return Ok(());
                }
                quiet.as_mut().reset(tokio::time::Instant::now() + idle);
            }
        }
    }
}

/// What tells a listen stream the prompt list changed: the docs (their skills and
/// playbooks are prompts), and an offer's own list.
struct PromptChanges<'a> {
    server: &'a super::McpServer,
    docs: tokio::sync::watch::Receiver<u64>,
    offered: Option<tokio::sync::watch::Receiver<u64>>,
    last: Vec<(String, String)>,
}

impl<'a> PromptChanges<'a> {
    fn new(server: &'a super::McpServer) -> PromptChanges<'a> {
        let mut docs = server.docs.changes();
        docs.mark_unchanged();
        let mut offered = server.offer.as_ref().and_then(|o| o.prompt_changes());
        if let Some(rx) = offered.as_mut() {
            rx.mark_unchanged();
        }
        let mut changes = PromptChanges {
            server,
            docs,
            offered,
            last: Vec::new(),
        };
        changes.last = changes.listed();
        changes
    }

    fn listed(&self) -> Vec<(String, String)> {
        super::prompts::catalog(self.server.docs.current().as_deref())
            .into_iter()
            .map(|p| (p.name, p.description))
            .collect()
    }

    /// The next change of the list; `None` once the docs can no longer change.
    async fn next(&mut self) -> Option<()> {
        loop {
            let offered = async {
                match self.offered.as_mut() {
                    Some(rx) => rx.changed().await.is_ok(),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = self.docs.changed() => {
                    changed.ok()?;
                    let now = self.listed();
                    if now != self.last {
                        self.last = now;
                        return Some(());
                    }
                }
                alive = offered => {
                    if alive {
                        return Some(());
                    }
                    self.offered = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listen_requests_task_ids_are_read_off_its_text() {
        let line = br#"{"jsonrpc":"2.0","id":"l1","method":"subscriptions/listen","params":{"notifications":{"taskIds":["a1","b2",7]}}}"#;
        assert_eq!(
            task_ids_of(line),
            Some((json!("l1"), vec!["a1".to_string(), "b2".to_string()]))
        );
        // Another method, one naming no task, one only mentioning the method: nothing.
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"subscriptions/listen"}}"#;
        assert_eq!(task_ids_of(call), None);
        let none = br#"{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"taskIds":[]}}}"#;
        assert_eq!(task_ids_of(none), None);
        let many: Vec<String> = (0..100).map(|i| format!("t{i}")).collect();
        let long = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 3,
            "method": "subscriptions/listen", "params": {"notifications": {"taskIds": many}}}))
        .unwrap();
        assert_eq!(task_ids_of(&long).unwrap().1.len(), TASKS_MAX);
    }

    #[test]
    fn pending_listens_are_taken_once_by_their_request_id() {
        let pending = PendingListens::default();
        pending.put(&json!(7), vec!["a".into()]);
        pending.put(&json!("seven"), vec!["b".into()]);
        assert_eq!(pending.take(&RequestId::Number(7)), ["a"]);
        assert!(pending.take(&RequestId::Number(7)).is_empty());
        assert_eq!(pending.take(&RequestId::String("seven".into())), ["b"]);
    }
}
