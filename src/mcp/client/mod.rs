//! The console as an MCP client of another server (`--connect`): a child process
//! spoken to over stdio, or a streamable HTTP endpoint.
//!
//! [`Remote`] holds the connection. It keeps what an operator debugging a server wants
//! to see: the server's tools with their schemas, every JSON-RPC message in both
//! directions ([`Wire`]), and the notifications among them. Its [`Remote::call`] is a
//! tool call with the core's contract (a result, or a [`ToolError`]; progress into the
//! call's context; cancelling the context sends `notifications/cancelled`), so a
//! [`Core`](crate::core::Core) built over it serves the console's panes as a local one
//! does.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolResult, ProgressToken, ProtocolVersion, Tool};
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::{ClientLifecycleMode, RoleClient};
use serde_json::{Value, json};

use crate::context::CallContext;
use crate::error::{ErrorCode, ToolError};
use crate::source::SourceInfo;

mod attached;
mod cache;
mod child;
mod handler;
mod http;
mod inspect;
mod listen;
pub mod oauth;
mod open;
pub mod rounds;
pub mod script;
mod skills;
pub mod tasks;
mod traffic;
mod words;

use crate::mcp::wire::{content_text, tool_outcome};
pub use attached::{RemoteSource, attached_core, register_remote};
pub use cache::{CACHE_KEEP, hints as cache_hints};
pub use handler::{
    Answers, AskKind, Asks, ElicitPolicy, OPERATOR_MODEL, Reply, RootDir, SAMPLING_REJECTED,
    Script, client_info, defaults,
};
use handler::{Listener, ProgressSinks, Shared};
pub use inspect::{CompleteRef, LOG_LEVELS, MAX_PAGES};
pub use open::MAX_LISTED;
use open::{all_pages, open, page_params};
use traffic::lock;
pub use traffic::{Direction, Filter, Which, Wire, WireMessage};
pub(crate) use words::split_words;

/// The method name a child's stderr lines are kept under, among the notifications.
pub const STDERR: &str = "stderr";

/// How often the header's block height is asked for.
const STATUS_EVERY: Duration = Duration::from_secs(3);

/// How long a tool call may go without an answer or a progress report before it is
/// given up (and the server told so with `notifications/cancelled`). Long work that
/// reports progress, as the proof-of-work search does every 200 ms, runs on.
pub const CALL_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long connecting (spawning or reaching the server, and `initialize`) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where `--connect` goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A program and its arguments, started as a child process and spoken to over its
    /// stdin and stdout.
    Command(Vec<String>),
    /// A streamable HTTP endpoint.
    Url(String),
}

impl Target {
    /// `http://` or `https://` is a URL; anything else is a command line, split into
    /// words as a shell would (single and double quotes, backslash escapes; no
    /// variables, globs or pipes).
    pub fn parse(spec: &str) -> Result<Target, String> {
        let spec = spec.trim();
        if spec.starts_with("http://") || spec.starts_with("https://") {
            return reqwest::Url::parse(spec)
                .map(|_| Target::Url(spec.to_string()))
                .map_err(|e| format!("{spec:?} is not a URL: {e}"));
        }
        let words = split_words(spec)?;
        if words.is_empty() {
            return Err("--connect needs a command to start or an http(s) URL".into());
        }
        Ok(Target::Command(words))
    }

    /// One line for the header and the Server tab (a URL's password, if any, is
    /// never shown).
    pub fn describe(&self) -> String {
        match self {
            Target::Url(url) => crate::guard::redact_url(url),
            Target::Command(words) => words.join(" "),
        }
    }
}

/// Which protocol version the client offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protocol {
    /// The newest the library speaks (through `server/discover`); a server that does
    /// not speak it gets the newest version with an `initialize` handshake instead,
    /// on the same connection when it says it is older, or on a new one when it
    /// answers the probe with versions this client does not offer.
    Newest,
    /// Exactly this version.
    Pinned(ProtocolVersion),
}

impl Protocol {
    /// `newest`, or a protocol version the library knows (`2025-06-18`).
    ///
    /// # Errors
    ///
    /// Any other text.
    pub fn parse(text: &str) -> Result<Protocol, String> {
        if text == "newest" {
            return Ok(Protocol::Newest);
        }
        ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .find(|v| v.as_str() == text)
            .map(|v| Protocol::Pinned(v.clone()))
            .ok_or_else(|| {
                let known: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .map(ProtocolVersion::as_str)
                    .collect();
                format!(
                    "protocol version {text:?} is not one this client speaks: newest, {}",
                    known.join(", ")
                )
            })
    }

    /// The handshakes to try, in order: how, and the version `initialize` offers.
    fn attempts(&self) -> Vec<(ClientLifecycleMode, ProtocolVersion)> {
        let handshake = ProtocolVersion::LATEST_WITH_INITIALIZE;
        match self {
            Protocol::Newest => vec![
                (
                    ClientLifecycleMode::Auto {
                        preferred_versions: vec![ProtocolVersion::LATEST],
                        legacy_version: Some(handshake.clone()),
                    },
                    ProtocolVersion::LATEST,
                ),
                (ClientLifecycleMode::Initialize, handshake),
            ],
            Protocol::Pinned(v) if v.has_initialize() => {
                vec![(ClientLifecycleMode::Initialize, v.clone())]
            }
            Protocol::Pinned(v) => vec![(
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![v.clone()],
                },
                v.clone(),
            )],
        }
    }
}

/// How the console connects.
#[derive(Debug, Clone)]
pub struct Options {
    /// Sent as `Authorization: Bearer` to a URL (never to a command).
    pub token: Option<String>,
    /// See [`CALL_IDLE_TIMEOUT`].
    pub idle_timeout: Duration,
    pub protocol: Protocol,
    /// The roots offered to the server at first.
    pub roots: Vec<RootDir>,
    /// Who answers the server's sampling and elicitation requests.
    pub answers: Answers,
    /// How long attaching may take in all: the handshake, the tool list and the prompt
    /// list (see [`CONNECT_TIMEOUT`]).
    pub connect_timeout: Duration,
    /// Declare the Tasks extension: a server may then answer long work with a task,
    /// which the client follows to its end ([`tasks`]). The console's panes leave it
    /// off, so that a long search reports its progress as it runs.
    pub tasks: bool,
    /// Against a Structs server, follow its block height (a call of
    /// `structs_query_block_height` at once, then one now and then) for the console's
    /// header. `client` does not: its request is the only call it makes.
    pub follow_height: bool,
    /// OAuth, for a URL server that asks for it (without `token`); `None` refuses it.
    pub oauth: Option<oauth::Config>,
}

impl Default for Options {
    /// No token, the newest protocol, no roots, the operator answering, the block
    /// height followed.
    fn default() -> Options {
        Options {
            token: None,
            idle_timeout: CALL_IDLE_TIMEOUT,
            connect_timeout: CONNECT_TIMEOUT,
            protocol: Protocol::Newest,
            roots: Vec::new(),
            answers: Answers::Operator,
            follow_height: true,
            tasks: false,
            oauth: None,
        }
    }
}

/// A connection to another MCP server.
pub struct Remote {
    target: Target,
    service: RunningService<RoleClient, Listener>,
    shared: Arc<Shared>,
    wire: Arc<Wire>,
    tools: Vec<Tool>,
    /// The server's prompts, listed at connect when it offers prompts.
    prompts: Vec<rmcp::model::Prompt>,
    /// The server's `initialize` answer as JSON, read once at connect.
    info: Value,
    /// The remote source's figures for the header, from `structs_query_block_height`
    /// and `structs_clock_control` answers.
    status: Mutex<SourceInfo>,
    /// See [`CALL_IDLE_TIMEOUT`].
    idle_timeout: Duration,
    /// The rounds of input requests answered since they were last taken
    /// ([`Remote::take_rounds`]), newest last.
    rounds: Mutex<Vec<Value>>,
    /// The listen streams watching resources on a 2026-07-28 server, by URI: each
    /// stops when its token is cancelled.
    listens: Mutex<std::collections::HashMap<String, tokio_util::sync::CancellationToken>>,
    /// Answers kept by the server's caching hints ([`cache`]).
    cache: cache::Cache,
    /// When the connection was made (`mcp.client.session.duration`).
    opened: std::time::Instant,
}

impl Remote {
    /// Starts or reaches the server, initializes the session and lists its tools.
    /// `token` is sent as `Authorization: Bearer` to a URL (never to a command).
    ///
    /// # Errors
    ///
    /// When the program cannot be started, the URL cannot be reached, the server
    /// refuses (a wrong token), or initialization and the tool list do not complete
    /// within 30 s.
    pub async fn connect(target: Target, token: Option<String>) -> anyhow::Result<Arc<Remote>> {
        Remote::connect_with(target, token, CALL_IDLE_TIMEOUT).await
    }

    /// [`Remote::connect`] with another idle timeout for tool calls.
    ///
    /// # Errors
    ///
    /// As [`Remote::connect`].
    pub async fn connect_with(
        target: Target,
        token: Option<String>,
        idle_timeout: Duration,
    ) -> anyhow::Result<Arc<Remote>> {
        let options = Options {
            token,
            idle_timeout,
            ..Options::default()
        };
        Remote::connect_with_options(target, options).await
    }

    /// Starts or reaches the server with these options, initializes the session
    /// (offering the protocol version they say, with the fallback of
    /// [`Protocol::Newest`]) and lists its tools.
    ///
    /// # Errors
    ///
    /// As [`Remote::connect`]; and when no handshake the options allow succeeds (the
    /// error of the last one tried).
    pub async fn connect_with_options(
        target: Target,
        options: Options,
    ) -> anyhow::Result<Arc<Remote>> {
        let wire = Arc::new(Wire::new());
        let attach = Attach {
            target: &target,
            options: &options,
            wire: &wire,
            // One deadline for the whole attach: the handshake, then the lists.
            deadline: tokio::time::Instant::now() + options.connect_timeout,
        };
        let (service, shared) = attach.handshake().await?;
        let peer = service.peer().clone();
        let tools = attach.tools(&peer).await?;
        let mut info = service
            .peer_info()
            .and_then(|info| serde_json::to_value(&*info).ok())
            .unwrap_or(Value::Null);
        attach.supported_versions(&peer, &mut info).await;
        let prompts = attach.prompts(&peer, &info).await;
        let description = attach.description(&info);
        let remote = Arc::new(Remote {
            target,
            service,
            shared,
            wire,
            tools,
            prompts,
            info,
            status: Mutex::new(SourceInfo {
                name: "mcp",
                description,
                block_height: 0,
                paused: false,
            }),
            idle_timeout: options.idle_timeout,
            rounds: Mutex::default(),
            listens: Mutex::default(),
            cache: cache::Cache::default(),
            opened: std::time::Instant::now(),
        });
        if options.follow_height && remote.has_tool(BLOCK_HEIGHT_TOOL) {
            let _ = remote
                .call(BLOCK_HEIGHT_TOOL, json!({}), CallContext::new())
                .await;
            tokio::spawn(poll_status(Arc::downgrade(&remote)));
        }
        Ok(remote)
    }

    /// Where the console is attached.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The server's tools, as it listed them when the console attached.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The server's prompts, as it listed them when the console attached.
    pub fn prompts(&self) -> &[rmcp::model::Prompt] {
        &self.prompts
    }

    /// The server as its refusals name it: the name it gave in its handshake (a
    /// command line can be long), else where it is.
    pub(crate) fn server_name(&self) -> String {
        match self.info["serverInfo"]["name"].as_str() {
            Some(name) if !name.is_empty() => name.to_string(),
            _ => self.target.describe(),
        }
    }

    fn has_tool(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    /// Whether the server is a structs-console, by the name it gives itself in its
    /// `serverInfo` (so its tools are the Structs catalog, and the Structs tabs work).
    pub fn is_structs(&self) -> bool {
        self.info["serverInfo"]["name"] == crate::mcp::wire::SERVER_NAME
    }

    /// The server's `initialize` answer as JSON (name, version, protocol version,
    /// capabilities, instructions).
    pub fn server_info(&self) -> &Value {
        &self.info
    }

    /// The messages and notifications of this connection.
    pub fn wire(&self) -> &Arc<Wire> {
        &self.wire
    }

    /// The header's figures: the remote source's block height and clock as last seen.
    pub fn status(&self) -> SourceInfo {
        lock(&self.status).clone()
    }

    /// False once the server has gone (the child exited, the connection closed).
    pub fn is_connected(&self) -> bool {
        !self.service.is_closed()
    }

    /// The server's requests waiting for the operator (with [`Answers::Operator`]).
    pub fn asks(&self) -> &Arc<Asks> {
        &self.shared.asks
    }

    /// The protocol version agreed with the server.
    pub fn protocol_version(&self) -> String {
        self.service
            .peer_info()
            .map(|info| info.protocol_version.to_string())
            .unwrap_or_default()
    }

    /// Ends the session (a child is stopped, an HTTP session deleted).
    pub async fn close(&self) {
        // A 2025-11-25 session's length, when traces are on (a stateless server has
        // no session).
        if !self.stateless()
            && let Some(i) = crate::context::trace::instruments()
        {
            let transport = opentelemetry::KeyValue::new(
                crate::context::trace::attr::TRANSPORT,
                self.transport().name(),
            );
            i.client_session
                .record(self.opened.elapsed().as_secs_f64(), &[transport]);
        }
        let token = self.service.cancellation_token();
        token.cancel();
        // Give the transport a moment to say goodbye (an HTTP DELETE).
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    /// Calls `tool` on the server. A result comes back as the server's
    /// `structuredContent` (or its text parsed as JSON, or `{"content": [...]}`); an
    /// error result as the [`ToolError`] its error object describes. Progress reports
    /// go to `ctx`, and cancelling `ctx` sends `notifications/cancelled` and ends the
    /// call with `TOOL_CANCELLED`.
    pub async fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: CallContext,
    ) -> Result<Value, ToolError> {
        let arguments = match args {
            v @ Value::Object(_) => v,
            Value::Null => json!({}),
            other => {
                return Err(ToolError::field(
                    ErrorCode::ValidationWrongType,
                    "arguments",
                    format!("must be an object, not {other}"),
                ));
            }
        };
        let answer = self
            .request(
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
                ctx,
            )
            .await
            .map_err(|mut e| {
                e.message = e.message.replacen("tools/call", tool, 1);
                e
            })?;
        let result: CallToolResult = serde_json::from_value(answer.clone()).map_err(|_| {
            ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!(
                    "{} answered {tool} with something other than a tool result: {answer}",
                    self.target.describe(),
                ),
            )
        })?;
        let outcome = result_value(tool, result);
        if let Ok(v) = &outcome
            && (tool == BLOCK_HEIGHT_TOOL || tool == CLOCK_TOOL)
        {
            let mut status = lock(&self.status);
            if let Some(h) = v["height"].as_u64() {
                status.block_height = h;
            }
            if let Some(p) = v["paused"].as_bool() {
                status.paused = p;
            }
        }
        outcome
    }

    /// How requests reach the server, for a span's `network.transport`.
    pub(crate) fn transport(&self) -> crate::mcp::wire::span::Transport {
        match self.target {
            Target::Command(_) => crate::mcp::wire::span::Transport::Pipe,
            Target::Url(_) => crate::mcp::wire::span::Transport::Tcp,
        }
    }

    pub(crate) fn unreachable(&self, tool: &str, e: &ServiceError) -> ToolError {
        match e {
            ServiceError::Timeout { timeout } => ToolError::new(
                ErrorCode::ToolTimeout,
                format!(
                    "{} sent neither an answer to {tool} nor progress for {} s; the call was \
                     given up and the server told so{}",
                    self.target.describe(),
                    timeout.as_secs_f64(),
                    self.wire.unread_reason()
                ),
            ),
            // A server that sends the error object as the data (ours does, for an
            // unknown tool's -32602) is taken at its word.
            ServiceError::McpError(data) => data
                .data
                .as_ref()
                .and_then(ToolError::from_wire)
                .unwrap_or_else(|| {
                    ToolError::new(
                        refusal_code(data.code.0),
                        format!(
                            "{} refused {tool}: JSON-RPC error {}: {}",
                            self.server_name(),
                            data.code.0,
                            data.message
                        ),
                    )
                })
                .with_extra("jsonrpc_code", json!(data.code.0)),
            other => ToolError::new(
                ErrorCode::ApiUnavailable,
                format!("{tool} did not reach {}: {other}", self.target.describe()),
            ),
        }
    }
}

/// What attaching goes by: where to, how, the traffic seen so far (for a reason the
/// server gave no answer), and the one deadline for the handshake and the lists.
struct Attach<'a> {
    target: &'a Target,
    options: &'a Options,
    wire: &'a Arc<Wire>,
    deadline: tokio::time::Instant,
}

impl Attach<'_> {
    /// The first handshake of those the options allow that the server takes, with the
    /// state its listener shares.
    async fn handshake(
        &self,
    ) -> anyhow::Result<(RunningService<RoleClient, Listener>, Arc<Shared>)> {
        let (target, options) = (self.target, self.options);
        let attempts = options.protocol.attempts();
        let last = attempts.len() - 1;
        // One authorizer for every attempt: a token got in one is used by the next.
        let auth = match (&options.oauth, &options.token, target) {
            (Some(config), None, Target::Url(url)) => {
                Some(oauth::Authorizer::new(config.clone(), url)?)
            }
            _ => None,
        };
        for (n, (lifecycle, version)) in attempts.into_iter().enumerate() {
            let shared = Arc::new(Shared {
                progress: ProgressSinks::default(),
                asks: Arc::default(),
                roots: Mutex::new(options.roots.clone()),
                answers: options.answers.clone(),
                protocol: version,
                log_level: Mutex::new(None),
                tasks: options.tasks,
            });
            let listener = Listener {
                shared: shared.clone(),
            };
            let started = open(
                target,
                options.token.as_deref(),
                auth.clone(),
                self.wire,
                listener,
                lifecycle,
            );
            match tokio::time::timeout_at(self.deadline, started).await {
                Err(_) => anyhow::bail!(
                    "{} did not complete the MCP handshake within {} s{}",
                    target.describe(),
                    options.connect_timeout.as_secs(),
                    self.wire.unread_reason()
                ),
                Ok(Ok(service)) => return Ok((service, shared)),
                // A server that would not agree on a version may still take the
                // handshake of an older one.
                Ok(Err(e)) if n < last && !e.transport => {
                    tracing::info!(target = %target.describe(), error = %e.error, "falling back to the initialize handshake");
                }
                Ok(Err(e)) => return Err(e.error),
            }
        }
        anyhow::bail!("{} took no handshake", target.describe());
    }

    /// Every page of the server's tools, within the time to attach.
    async fn tools(&self, peer: &Peer<RoleClient>) -> anyhow::Result<Vec<Tool>> {
        tokio::time::timeout_at(
            self.deadline,
            all_pages(|cursor| {
                let peer = peer.clone();
                async move {
                    let page = peer.list_tools(Some(page_params(cursor))).await?;
                    Ok((page.tools, page.next_cursor))
                }
            }),
        )
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "{} did not list its tools within {} s{}",
                self.target.describe(),
                self.options.connect_timeout.as_secs(),
                self.wire.unread_reason()
            )
        })?
        .map_err(|e| {
            anyhow::anyhow!(
                "{} did not list its tools: {e}{}",
                self.target.describe(),
                self.wire.unread_reason()
            )
        })
    }

    /// Adds to `info` the versions a stateless (2026-07-28) server speaks: it said more
    /// in `server/discover` than the handshake keeps. Asked once more, within the time
    /// to attach; a server that does not answer still serves.
    async fn supported_versions(&self, peer: &Peer<RoleClient>, info: &mut Value) {
        if info["protocolVersion"]
            .as_str()
            .is_some_and(|v| v >= ProtocolVersion::NO_INITIALIZE.as_str())
        {
            // The library keeps the answer for as long as the server said it holds.
            let asked = peer.discover(rmcp::model::RequestMetaObject::default());
            if let Ok(Ok(found)) = tokio::time::timeout_at(self.deadline, asked).await {
                info["supportedVersions"] = json!(found.supported_versions);
            }
        }
    }

    /// The server's prompts, when it offers prompts: listed once, within what is left
    /// of the time to attach; a server that fails to list them still serves its tools.
    async fn prompts(&self, peer: &Peer<RoleClient>, info: &Value) -> Vec<rmcp::model::Prompt> {
        if !info["capabilities"]["prompts"].is_object() {
            return Vec::new();
        }
        let listed = tokio::time::timeout_at(
            self.deadline,
            all_pages(|cursor| {
                let peer = peer.clone();
                async move {
                    let page = peer.list_prompts(Some(page_params(cursor))).await?;
                    Ok((page.prompts, page.next_cursor))
                }
            }),
        )
        .await;
        match listed {
            Ok(Ok(prompts)) => prompts,
            Ok(Err(e)) => {
                tracing::warn!(target = %self.target.describe(), "the server's prompts were not listed: {e}");
                Vec::new()
            }
            Err(_) => {
                tracing::warn!(
                    target = %self.target.describe(),
                    "the server did not list its prompts within {} s{}; attached without them",
                    self.options.connect_timeout.as_secs(),
                    self.wire.unread_reason()
                );
                Vec::new()
            }
        }
    }

    /// The header's line for the server: its name and version, if it gave them, and
    /// where it is.
    fn description(&self, info: &Value) -> String {
        match info["serverInfo"]["name"].as_str() {
            Some(name) => format!(
                "{name} {} at {}",
                info["serverInfo"]["version"].as_str().unwrap_or(""),
                self.target.describe()
            ),
            None => self.target.describe(),
        }
    }
}

/// The project's code for a JSON-RPC error that came without the project's error
/// object: the codes MCP gives a meaning, the rest the server's failure.
fn refusal_code(jsonrpc: i32) -> ErrorCode {
    match jsonrpc {
        // MCP's "resource not found".
        -32002 => ErrorCode::ResourceNotFound,
        -32602 => ErrorCode::ValidationError,
        _ => ErrorCode::ToolExecutionFailed,
    }
}

const BLOCK_HEIGHT_TOOL: &str = "structs_query_block_height";
const CLOCK_TOOL: &str = "structs_clock_control";

/// Takes a call's progress sink out of the map when the call ends, however it ends.
struct Unregister {
    sinks: ProgressSinks,
    token: ProgressToken,
}

impl Drop for Unregister {
    fn drop(&mut self) {
        lock(&self.sinks).remove(&self.token);
    }
}

/// A tool result as the core would answer: the structured content, else the text
/// read as JSON, else the content blocks; an error result as its error object.
fn result_value(tool: &str, result: CallToolResult) -> Result<Value, ToolError> {
    let raw = serde_json::to_value(&result).unwrap_or(Value::Null);
    match tool_outcome(&raw) {
        Ok(value) => Ok(value),
        Err(value) => Err(ToolError::from_wire(&value).unwrap_or_else(|| {
            let said = content_text(&raw);
            ToolError::new(
                ErrorCode::ToolExecutionFailed,
                if said.is_empty() {
                    format!("{tool} failed on the server and said nothing more")
                } else {
                    format!("{tool} failed on the server: {said}")
                },
            )
        })),
    }
}

/// Keeps the header's block height current while the remote is alive (these calls
/// show in the traffic like any other: they are real).
async fn poll_status(remote: std::sync::Weak<Remote>) {
    let mut every = tokio::time::interval(STATUS_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let Some(remote) = remote.upgrade() else {
            return;
        };
        if !remote.is_connected() {
            return;
        }
        let _ = remote
            .call(
                BLOCK_HEIGHT_TOOL,
                json!({}),
                CallContext::new().in_background(),
            )
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::traffic::{WIRE_KEEP, WIRE_TEXT_MAX};
    use super::*;

    #[test]
    fn targets_are_urls_or_command_lines() {
        assert_eq!(
            Target::parse("http://127.0.0.1:8080/mcp").unwrap(),
            Target::Url("http://127.0.0.1:8080/mcp".into())
        );
        assert_eq!(
            Target::parse(r#"structs-console --headless --seed 7 --world-name "a b" 'c d' e\ f"#)
                .unwrap(),
            Target::Command(
                [
                    "structs-console",
                    "--headless",
                    "--seed",
                    "7",
                    "--world-name",
                    "a b",
                    "c d",
                    "e f"
                ]
                .map(String::from)
                .to_vec()
            )
        );
        assert_eq!(
            Target::parse(r#"x "say \"hi\"" ''"#).unwrap(),
            Target::Command(vec!["x".into(), "say \"hi\"".into(), String::new()])
        );
        assert!(Target::parse("   ").is_err());
        assert!(
            Target::parse("x 'open")
                .unwrap_err()
                .contains("single quote")
        );
        assert!(
            Target::parse("x \"open")
                .unwrap_err()
                .contains("double quote")
        );
        assert!(Target::parse("http://[::1").is_err());
    }

    #[test]
    fn the_wire_keeps_the_newest_messages_and_counts_notifications() {
        let wire = Wire::new();
        for i in 0..(WIRE_KEEP + 10) {
            wire.push(
                Direction::Sent,
                &json!({"jsonrpc": "2.0", "id": i, "method": "tools/call"}),
            );
        }
        wire.push(
            Direction::Received,
            &json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}),
        );
        wire.push(
            Direction::Received,
            &json!({"jsonrpc": "2.0", "id": 3, "result": {}}),
        );
        let kept = wire.messages();
        assert_eq!(kept.len(), WIRE_KEEP);
        assert_eq!(wire.total(), (WIRE_KEEP + 12) as u64);
        assert_eq!(kept.last().unwrap().method, "response");
        assert_eq!(kept.last().unwrap().id.as_deref(), Some("3"));
        assert_eq!(wire.notified(), 1);
        let notes = wire.notifications();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].is_notification());
        assert_eq!(notes[0].method, "notifications/progress");
        let big = "x".repeat(WIRE_TEXT_MAX + 5);
        wire.push(Direction::Received, &json!({"id": 1, "result": big}));
        let last = wire.messages().pop().unwrap();
        assert!(last.text.len() < WIRE_TEXT_MAX + 40);
        assert!(
            last.text.ends_with("bytes in all)"),
            "{}",
            &last.text[last.text.len() - 30..]
        );
    }

    #[test]
    fn error_results_become_tool_errors() {
        let wire_error = ToolError::field(ErrorCode::ValidationInvalidFormat, "id", "bad")
            .to_json("2026-01-01T00:00:00Z");
        let e = result_value("t", CallToolResult::structured_error(wire_error)).unwrap_err();
        assert_eq!(e.code, ErrorCode::ValidationInvalidFormat);
        assert_eq!(e.field.as_deref(), Some("id"));
        let e = result_value(
            "t",
            CallToolResult::error(vec![rmcp::model::ContentBlock::text("it broke")]),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::ToolExecutionFailed);
        assert!(e.message.contains("it broke"));
        let v = result_value(
            "t",
            CallToolResult::success(vec![rmcp::model::ContentBlock::text("plain words")]),
        )
        .unwrap();
        assert_eq!(v["content"][0]["text"], "plain words");
        let v = result_value(
            "t",
            CallToolResult::success(vec![rmcp::model::ContentBlock::text(r#"{"a": 1}"#)]),
        )
        .unwrap();
        assert_eq!(v, json!({"a": 1}));
    }

    #[test]
    fn a_bare_json_rpc_refusal_keeps_the_meaning_mcp_gives_its_code() {
        assert_eq!(refusal_code(-32002), ErrorCode::ResourceNotFound);
        assert_eq!(refusal_code(-32602), ErrorCode::ValidationError);
        assert_eq!(refusal_code(-32603), ErrorCode::ToolExecutionFailed);
    }
}
