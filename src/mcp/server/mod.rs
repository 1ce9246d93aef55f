//! The MCP server: an rmcp server handler over the core ([`McpServer`]), served over
//! stdio ([`stdio`]) or streamable HTTP ([`http`], its sessions in [`sessions`]). It
//! lists every registered tool with its input schema and calls the core for
//! `tools/call`, through the recorder ([`crate::record::Recorded`]); it holds no game
//! logic of its own. Every message is checked ([`strict`]) before rmcp reads it.

pub mod ask;
mod call;
mod client_ask;
pub mod complete;
pub mod http;
pub mod listen;
pub mod logging;
pub mod offer;
pub mod polling;
pub mod prompts;
pub mod resources;
pub mod sessions;
pub mod skills;
pub mod stateless;
pub mod stdio;
pub mod strict;
pub mod task_input;
pub mod tasks;
pub mod traced;

pub use resources::HANDLE_URI;
pub use stdio::serve as serve_lines;

use std::sync::Arc;

use crate::throttle::{Every, WARN_EVERY};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
#[allow(deprecated)]
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ResourceUpdatedNotificationParam, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::Value;

use crate::context::subscriptions::Subscriptions;
use crate::context::{ClientHandles, Principal};
use crate::core::Core;
use crate::entity::entity_uri;
use crate::tools::{Hints, ToolSpec};

/// Instructions sent to clients at initialize.
const INSTRUCTIONS: &str = "Tools for the Structs strategy game. Entity ids are {type}-{index} \
(guild 0, player 1, planet 2, reactor 3, substation 4, struct 5, allocation 6, infusion 7, \
address 8, fleet 9, provider 10, agreement 11); struct types are plain integers. Errors come \
back with isError and {\"error\": {code, message, details: {field, reason}}}.";

/// The rmcp handler: a core plus its tool list, built once, and this client's
/// subscriptions with the task that turns game events into resource updates.
#[derive(Clone)]
pub struct McpServer {
    core: Core,
    /// The reference docs served as resources (the same the docs tools read).
    docs: Arc<crate::docs::Docs>,
    /// The tools as listed, each with whether its open-world hint is the source's.
    tools: Arc<Vec<(Tool, bool)>>,
    subscriptions: Arc<Subscriptions>,
    /// The result handles this client made (its `resources/list` and handle list).
    handles: Arc<ClientHandles>,
    /// This client's running proof-of-work searches and plan runs, each capped (a
    /// stateless request's are its caller's, counted by [`stateless::CallerWork`]).
    work: Arc<crate::context::ClientWork>,
    /// Each HTTP caller's running work, shared by every session and request.
    caller_work: Arc<stateless::CallerWork>,
    watcher: Arc<Watcher>,
    /// Where this server's exchanges are recorded (`--record`).
    recorder: Option<Arc<crate::record::Recorder>>,
    prompts: prompts::Prompts,
    /// The task sending `notifications/prompts/list_changed`.
    prompt_watcher: Arc<Watcher>,
    /// This client's log level, throttle and `notifications/message` sender.
    log: Arc<logging::ClientLog>,
    /// Where a stateless (2026-07-28) request's state lives.
    scope: stateless::Scope,
    /// Long calls run as tasks, for clients that declare the extension.
    tasks: Arc<tasks::Tasks>,
    /// The docs' skills, served when the docs are a folder (which may hold them).
    skills: Option<Arc<skills::Skills>>,
    /// How a person is asked (the sealing key of the question's state).
    asker: Arc<ask::Asker>,
    /// The task ids of listen requests read off a stdio connection, until their
    /// streams start.
    pub(crate) pending_listens: Arc<listen::PendingListens>,
    /// `--confirm-actions`: a person confirms every destructive call.
    confirm_actions: bool,
    /// How long a listen stream may carry nothing before it is ended.
    pub(crate) stream_idle: std::time::Duration,
    /// Resources and prompts offered besides the core's ([`McpServer::with_offer`]).
    offer: Option<Arc<dyn offer::Offer>>,
    /// The HTTP face's sessions, where a call closes its response stream
    /// ([`polling`]).
    polling: Option<Arc<polling::Resumable>>,
}

/// The task sending `notifications/resources/updated`; stopped when the server goes.
#[derive(Default)]
struct Watcher(std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>);

impl Drop for Watcher {
    fn drop(&mut self) {
        if let Some(h) = self.0.lock().unwrap_or_else(|e| e.into_inner()).take() {
            h.abort();
        }
    }
}

impl McpServer {
    /// A server for `core`, serving `docs` as resources.
    pub fn new(core: Core, docs: Arc<crate::docs::Docs>) -> McpServer {
        let tools = core.tools().map(listed).collect();
        let tasks = tasks::Tasks::new(core.handle_store().clone());
        let skills = matches!(docs.root(), crate::docs::Root::Dir(_)).then(Arc::default);
        McpServer {
            prompts: prompts::Prompts::new(core.clone(), docs.clone()),
            core,
            docs,
            tools: Arc::new(tools),
            subscriptions: Arc::new(Subscriptions::new()),
            handles: Arc::new(ClientHandles::default()),
            work: Arc::default(),
            caller_work: Arc::default(),
            watcher: Arc::new(Watcher::default()),
            recorder: None,
            prompt_watcher: Arc::new(Watcher::default()),
            log: logging::ClientLog::new(None),
            scope: stateless::Scope::Connection,
            tasks,
            skills,
            asker: Arc::new(ask::Asker::new()),
            pending_listens: Arc::default(),
            confirm_actions: false,
            stream_idle: listen::STREAM_IDLE,
            offer: None,
            polling: None,
        }
    }

    /// A server for another client of the same core: the same tools, its own
    /// subscriptions, handle list and event watcher, and its own session in the log.
    pub fn for_new_client(&self) -> McpServer {
        let recorder = self.recorder.as_ref().map(|r| Arc::new(r.new_session()));
        McpServer {
            core: self.core.clone(),
            docs: self.docs.clone(),
            tools: self.tools.clone(),
            subscriptions: Arc::new(Subscriptions::new()),
            handles: Arc::new(ClientHandles::default()),
            work: Arc::default(),
            caller_work: self.caller_work.clone(),
            watcher: Arc::new(Watcher::default()),
            recorder: recorder.clone(),
            prompts: self.prompts.clone(),
            prompt_watcher: Arc::new(Watcher::default()),
            log: logging::ClientLog::new(recorder),
            scope: self.scope.clone(),
            tasks: self.tasks.clone(),
            skills: self.skills.clone(),
            asker: self.asker.clone(),
            pending_listens: self.pending_listens.clone(),
            confirm_actions: self.confirm_actions,
            stream_idle: self.stream_idle,
            offer: self.offer.clone(),
            polling: self.polling.clone(),
        }
    }

    /// The server as HTTP serves it: a stateless request keeps nothing of its caller
    /// past its answer, and every stateless request is recorded in one session of the
    /// log. Call once, before [`McpServer::for_new_client`] makes the sessions.
    pub fn serving_http(mut self) -> McpServer {
        let recorder = self.recorder.as_ref().map(|r| Arc::new(r.new_session()));
        self.scope = stateless::Scope::Shared { recorder };
        self
    }

    /// A session's calls may close their response streams in `sessions` ([`polling`]).
    pub fn with_polling(mut self, sessions: Arc<polling::Resumable>) -> McpServer {
        self.polling = Some(sessions);
        self
    }

    /// How a session call over HTTP closes its response stream: by its session id and
    /// its request's id.
    fn stream_closer(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Option<crate::context::StreamCloser> {
        let sessions = self.polling.clone()?;
        let session = context
            .extensions
            .get::<axum::http::request::Parts>()?
            .headers
            .get("mcp-session-id")?
            .to_str()
            .ok()?
            .to_string();
        let request = serde_json::to_string(&context.id).ok()?;
        Some(Arc::new(move |retry| {
            let (sessions, session, request) = (sessions.clone(), session.clone(), request.clone());
            Box::pin(async move { sessions.close(&session, &request, retry).await })
        }))
    }

    /// Serves `offer`'s resources, templates and prompts besides the core's ([`offer`]).
    pub fn with_offer(mut self, offer: Arc<dyn offer::Offer>) -> McpServer {
        self.offer = Some(offer);
        self
    }

    /// Ends a listen stream that has carried nothing for `idle` ([`listen::STREAM_IDLE`]
    /// unless told).
    pub fn with_stream_idle(mut self, idle: std::time::Duration) -> McpServer {
        self.stream_idle = idle;
        self
    }

    /// Whose state `context`'s request uses: its session's, or for a stateless request
    /// over HTTP its own (see [`stateless`]). A stateless request logs only at the level
    /// its `_meta` asks for.
    /// Whether calls are written to a session log (this server's, or the stateless
    /// requests' shared one).
    fn records(&self) -> bool {
        self.recorder.is_some()
            || matches!(&self.scope, stateless::Scope::Shared { recorder: Some(_) })
    }

    fn caller(&self, context: &RequestContext<RoleServer>) -> stateless::Caller {
        let principal = self.principal(context);
        // This connection's or session's state, with the log given: a session is a
        // client, and its running work is its own.
        let own = |log| stateless::Caller {
            handles: Some(self.handles.clone()),
            subscriptions: self.subscriptions.clone(),
            work: self.work.clone(),
            recorder: self.recorder.clone(),
            log,
            sessionless: false,
            principal: principal.clone(),
            client: None,
            stream: None,
        };
        if !stateless::is_stateless(context) {
            self.log.connect(context.peer.clone());
            let mut caller = own(Some(self.log.clone()));
            caller.client = Some(client_ask::asker(
                context.peer.clone(),
                context.client_capabilities(),
            ));
            caller.stream = self.stream_closer(context);
            return caller;
        }
        match &self.scope {
            // A stateless request's work counts with every other of its caller's.
            stateless::Scope::Shared { recorder } => stateless::Caller::sessionless(
                principal.clone(),
                self.caller_work.of(&principal),
                recorder.clone(),
                stateless::request_log(context, recorder.clone()),
            ),
            stateless::Scope::Connection => {
                own(stateless::request_log(context, self.recorder.clone()))
            }
        }
    }

    /// Who sent `context`'s request ([`crate::context::caller`]): over HTTP, what the
    /// guard made of its credential; over stdio, the connection's client.
    pub(crate) fn principal(&self, context: &RequestContext<RoleServer>) -> Principal {
        let sent = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>());
        match (sent, &self.scope) {
            (Some(principal), _) => principal.clone(),
            (None, stateless::Scope::Connection) => Principal::local(),
            // Over HTTP the guard names every request; one it did not is no one's.
            (None, stateless::Scope::Shared { .. }) => Principal::anonymous(),
        }
    }

    /// Asks a person to confirm every destructive call (`--confirm-actions`).
    ///
    /// # Errors
    ///
    /// A sealing key in [`ask::KEY_ENV`] too short to use.
    pub fn confirming(mut self) -> Result<McpServer, String> {
        self.asker = Arc::new(ask::Asker::from_env()?);
        self.confirm_actions = true;
        Ok(self)
    }

    /// A 2026-07-28 `prompts/get` left without a required argument, from a client that
    /// can be asked: asks for it (or, the answer given, puts it into the arguments).
    async fn ask_for_choices(
        &self,
        request: &mut GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<GetPromptResponse>, McpError> {
        let can_ask = stateless::is_stateless(context)
            && context
                .client_capabilities()
                .is_some_and(|caps| caps.elicitation.is_some());
        if !can_ask {
            return Ok(None);
        }
        let Ok(spec) = self.prompts.spec(&request.name).await else {
            return Ok(None);
        };
        let given = request.arguments.clone().unwrap_or_default();
        let blank = |v: Option<&Value>| {
            v.is_none_or(|v| v.is_null() || v.as_str().is_some_and(|s| s.trim().is_empty()))
        };
        let mut missing = Vec::new();
        for a in spec
            .args
            .iter()
            .filter(|a| a.required && blank(given.get(&a.name)))
        {
            missing.push(ask::Missing {
                name: a.name.clone(),
                description: a.description.clone(),
                values: complete::choices(
                    &self.core,
                    &self.docs,
                    &self.prompts,
                    &spec.name,
                    &a.name,
                )
                .await,
            });
        }
        if missing.is_empty() {
            return Ok(None);
        }
        match self.asker.choose(
            &request.name,
            &given,
            &missing,
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
        )? {
            ask::Choice::Ready(args) => {
                request.arguments = Some(args);
                Ok(None)
            }
            ask::Choice::Ask(asked) => Ok(Some(GetPromptResponse::InputRequired(asked))),
        }
    }

    /// Records every tool call, its answer and the notifications sent to a session log.
    pub fn with_recorder(mut self, recorder: Arc<crate::record::Recorder>) -> McpServer {
        self.log = logging::ClientLog::new(Some(recorder.clone()));
        self.recorder = Some(recorder);
        self
    }

    /// The core this server serves.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// The tasks this server runs (shared by all its clients), to stop at shutdown.
    pub fn tasks(&self) -> Arc<tasks::Tasks> {
        self.tasks.clone()
    }

    /// This client's log: its level, throttle and sender.
    pub fn client_log(&self) -> Arc<logging::ClientLog> {
        self.log.clone()
    }

    /// The tools as `tools/list` gives them now: a tool that reads the game source
    /// has the source's open-world hint (a live chain's node is open, the embedded
    /// world closed), which a console's source switch changes.
    pub fn tools(&self) -> Vec<Tool> {
        let open = self.core.status().open_world();
        self.tools
            .iter()
            .map(|(tool, follows)| {
                let mut tool = tool.clone();
                if *follows && let Some(a) = tool.annotations.as_mut() {
                    a.open_world_hint = open;
                }
                tool
            })
            .collect()
    }

    /// This client's subscriptions.
    pub fn subscriptions(&self) -> &Arc<Subscriptions> {
        &self.subscriptions
    }

    /// Starts (once) the task that reads the game's events and sends
    /// `notifications/resources/updated` to `peer` for every changed entity this client
    /// watches, once per event.
    fn ensure_watcher(&self, peer: Peer<RoleServer>) {
        let mut slot = self.watcher.0.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        let Some(bus) = self.core.events() else {
            return;
        };
        let mut rx = bus.subscribe();
        let subs = self.subscriptions.clone();
        let recorder = self.recorder.clone();
        *slot = Some(tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(event) => {
                        let mut sent = std::collections::HashSet::new();
                        for id in event.changed {
                            if subs.watches(id) && sent.insert(id) {
                                let param = ResourceUpdatedNotificationParam::new(entity_uri(id));
                                if let Some(r) = &recorder {
                                    r.notification(
                                        "notifications/resources/updated",
                                        serde_json::to_value(&param).unwrap_or_default(),
                                    );
                                }
                                if peer.notify_resource_updated(param).await.is_err() {
                                    return;
                                }
                            }
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                        // Every lagging client says so on every event it misses: once
                        // in a while for the whole process is enough.
                        static FELL_BEHIND: Every = Every::new(WARN_EVERY);
                        if let Some(unlogged) = FELL_BEHIND.ready() {
                            tracing::warn!(
                                missed,
                                unlogged_since_last = unlogged,
                                "resource updates fell behind the game events (logged at most once in 10 s)"
                            );
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        }));
    }

    /// Starts (once) the task that sends `notifications/prompts/list_changed` to `peer`
    /// when a docs change adds, removes or renames a prompt.
    fn ensure_prompt_watcher(&self, peer: Peer<RoleServer>) {
        let mut slot = self
            .prompt_watcher
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if slot.is_some() {
            return;
        }
        let mut changes = self.docs.changes();
        let docs = self.docs.clone();
        let recorder = self.recorder.clone();
        let listed = |snap: Option<Arc<crate::docs::Snapshot>>| -> Vec<(String, String)> {
            prompts::catalog(snap.as_deref())
                .into_iter()
                .map(|p| (p.name, p.description))
                .collect()
        };
        let mut last = listed(docs.current());
        changes.mark_unchanged();
        // An offer's prompt list changes apart from the docs.
        let mut offered = self.offer.as_ref().and_then(|o| o.prompt_changes());
        if let Some(rx) = offered.as_mut() {
            rx.mark_unchanged();
        }
        *slot = Some(tokio::spawn(async move {
            loop {
                let from_offer = async {
                    match offered.as_mut() {
                        Some(rx) => rx.changed().await.is_ok(),
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        let now = listed(docs.current());
                        if now == last {
                            continue;
                        }
                        last = now;
                    }
                    alive = from_offer => {
                        if !alive {
                            offered = None;
                            continue;
                        }
                    }
                }
                if let Some(r) = &recorder {
                    r.notification("notifications/prompts/list_changed", Value::Null);
                }
                if peer.notify_prompt_list_changed().await.is_err() {
                    return;
                }
            }
        }));
    }
}

/// A tool as `tools/list` shows it: name, title, description, input and output
/// schemas, and its hints as annotations; with whether its open-world hint is left to
/// the source (a catalog tool reading the game). A forwarded tool shows its server's.
fn listed(spec: &ToolSpec) -> (Tool, bool) {
    let object = |v: &Value| match v {
        Value::Object(o) => Some(Arc::new(o.clone())),
        _ => None,
    };
    let mut tool = Tool::new(
        spec.name,
        spec.description,
        object(&spec.input_schema).unwrap_or_default(),
    );
    tool.output_schema = object(&spec.output_schema);
    let title = (!spec.title.is_empty()).then(|| spec.title.to_string());
    tool.title = title.clone();
    let h = spec.hints;
    // A forwarded tool's source is its server, whose hint is `None`: unchanged.
    let follows = h.open_world.is_none();
    if h != Hints::default() || title.is_some() {
        tool.annotations = Some(ToolAnnotations::from_raw(
            title,
            h.read_only,
            h.destructive,
            h.idempotent,
            h.open_world,
        ));
    }
    (tool, follows)
}

/// rmcp runs each request as a task whose future is as large as the largest handler's,
/// moved whole into the task: a handler that holds much across an await boxes it, so
/// that a `tools/call` does not pay for the largest (`prompts/get`'s, 5 KB).
impl ServerHandler for McpServer {
    // Logging is deprecated in rmcp for a later protocol revision; see logging.rs.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .enable_logging()
            .enable_tasks();
        let capabilities = match self.skills {
            Some(_) => capabilities.enable_skills_with_directory_read().build(),
            None => capabilities.build(),
        };
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new(crate::mcp::wire::SERVER_NAME, env!("CARGO_PKG_VERSION"))
                    .with_title("Structs console"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    /// Every revision rmcp knows: the ones with a session (`initialize`) and the
    /// stateless 2026-07-28, told apart per request by its `_meta`.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        strict::no_cursor("tools/list", request.as_ref())?;
        // The catalog is fixed for the process's life; another server's tools are not.
        let hints = if self.core.is_forwarded() {
            stateless::Hints::Volatile
        } else {
            stateless::Hints::Fixed
        };
        Ok(stateless::hint!(
            &context,
            ListToolsResult::with_all_items(self.tools()),
            hints
        ))
    }

    /// A tool as listed, for rmcp's HTTP transport to check a `tools/call`'s
    /// `Mcp-Param-*` headers against the arguments its `x-mcp-header` properties name
    /// (a missing, undecodable or contradicting header is `-32020`, HTTP 400).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools
            .iter()
            .find(|(tool, _)| tool.name == name)
            .map(|(tool, _)| tool.clone())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        strict::no_cursor("prompts/list", request.as_ref())?;
        // Listed first, so that the watcher starts from the docs this list was read from.
        let all = self.prompts.list().await?;
        if !stateless::is_stateless(&context) {
            self.ensure_prompt_watcher(context.peer.clone());
        }
        let mut listed: Vec<_> = all.iter().map(prompts::PromptSpec::to_mcp).collect();
        if let Some(offer) = &self.offer {
            listed.extend(offer.prompts());
        }
        Ok(stateless::hint!(
            &context,
            ListPromptsResult::with_all_items(listed),
            stateless::Hints::Volatile
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        Box::pin(async {
            let mut request = request;
            if let Some(offered) = self.offered_prompt(&request, &context).await {
                return offered;
            }
            if let Some(asked) = self.ask_for_choices(&mut request, &context).await? {
                return Ok(asked);
            }
            let result = self.prompts.get(&request.name, request.arguments).await;
            if !stateless::is_stateless(&context) {
                self.ensure_prompt_watcher(context.peer.clone());
            }
            let result = result?;
            Ok(result.into())
        })
        .await
        .map_err(|e| strict::bounded("prompts/get", e))
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log.set_level(logging::from_wire(request.level));
        self.log.connect(context.peer.clone());
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let who = self.principal(&context);
        Box::pin(async {
            let info =
                complete::complete(&self.core, &self.docs, &self.prompts, &request, &who).await?;
            Ok(CompleteResult::new(info))
        })
        .await
        .map_err(|e| strict::bounded("completion/complete", e))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        strict::no_cursor("resources/list", request.as_ref())?;
        self.list_all_resources(context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        strict::no_cursor("resources/templates/list", request.as_ref())?;
        self.resource_templates(context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        Box::pin(self.read_any(request, context)).await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, McpError> {
        strict::no_cursor("skills/list", request.as_ref())?;
        let catalog = self.skill_catalog().await?;
        let all = catalog.skills.iter().map(|s| s.skill.clone()).collect();
        Ok(stateless::hint!(
            &context,
            rmcp::model::ListSkillsResult::with_all_items(all),
            stateless::Hints::Volatile
        ))
    }

    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, McpError> {
        let catalog = self.skill_catalog().await?;
        let Some(skill) = catalog.get(&request.uri) else {
            return Err(McpError::invalid_params(
                format!("no skill at {}", crate::error::quote(&request.uri)),
                Some(serde_json::json!({"uri": request.uri})),
            ));
        };
        Ok(stateless::hint!(
            &context,
            rmcp::model::GetSkillResult::new(skill.clone()),
            stateless::Hints::Volatile
        ))
    }

    async fn read_resource_directory(
        &self,
        request: rmcp::model::ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceDirectoryResult, McpError> {
        strict::no_cursor_given("resources/directory/read", request.cursor.as_deref())?;
        let catalog = self.skill_catalog().await?;
        let listed = catalog.directory(&request.uri)?;
        Ok(stateless::hint!(
            &context,
            listed,
            stateless::Hints::Volatile
        ))
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        let who = self.principal(&context);
        let task = Box::pin(self.tasks.get(&request.task_id, Some(&who))).await?;
        Ok(rmcp::model::GetTaskResult::new(task))
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let who = self.principal(&context);
        Box::pin(
            self.tasks
                .update(&request.task_id, Some(&who), &request.input_responses),
        )
        .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let who = self.principal(&context);
        Box::pin(self.tasks.cancel(&request.task_id, Some(&who))).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        Some(listen::accepted(requested))
    }

    async fn listen(
        &self,
        subscription: rmcp::service::SubscriptionContext,
    ) -> Result<(), McpError> {
        Box::pin(listen::listen(self, subscription)).await
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        async {
            if self
                .offer
                .as_ref()
                .is_some_and(|o| o.watchable(&request.uri))
            {
                return Ok(());
            }
            let id = Self::entity_of(&request.uri)?;
            match self.core.source().get(id).await {
                Ok(Some(_)) => {}
                Ok(None) => {
                    return Err(McpError::resource_not_found(
                        format!("{id} does not exist"),
                        None,
                    ));
                }
                Err(e) => return Err(McpError::internal_error(e.to_string(), None)),
            }
            self.ensure_watcher(context.peer.clone());
            self.subscriptions
                .subscribe(id, self.core.timestamp(), "resource")
                .map(|_| ())
                .map_err(|e| McpError::invalid_request(e.to_string(), None))
        }
        .await
        .map_err(|e| strict::bounded("resources/subscribe", e))
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        async {
            if self
                .offer
                .as_ref()
                .is_some_and(|o| o.watchable(&request.uri))
            {
                return Ok(());
            }
            let id = Self::entity_of(&request.uri)?;
            self.subscriptions.unsubscribe_entity(id, "resource");
            Ok(())
        }
        .await
        .map_err(|e| strict::bounded("resources/unsubscribe", e))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Boxed, as the impl's note says.
        Box::pin(self.answer_call(request, context)).await
    }
}

/// Serves the core over stdin/stdout until the client closes the connection, recording
/// the exchanges when a recorder is given.
pub async fn serve_stdio(server: McpServer) -> anyhow::Result<()> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    stdio::serve(server, read, write, crate::mcp::wire::MAX_MESSAGE_BYTES).await
}
