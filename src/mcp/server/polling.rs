//! SSE polling (SEP-1699): a call of a 2025-11-25 session over HTTP may close its own
//! response stream while it runs ([`CallContext::close_stream`](crate::context::CallContext::close_stream)),
//! so that no connection is held open through long work. The stream ends after a
//! priming event that tells the client when to come back (`retry`); the client resumes
//! with `GET` and `Last-Event-ID`, and the call's answer, sent whenever it is ready,
//! reaches it there.
//!
//! [`Resumable`] is rmcp's local session manager with one thing added: which response
//! stream each request of each session is on, so that the call can be found by its
//! session and request id.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, SessionManager,
};

/// The most requests whose stream is remembered; the oldest are forgotten first (a
/// call that old has long had its chance to close its stream).
pub const REMEMBERED: usize = 4096;

/// The longest `retry` a closed stream asks for: a finished call's answer is kept for
/// a resuming client a few seconds only (the HTTP face keeps them 10 s), and a client
/// told to come back later would find it gone.
pub const MAX_RETRY: Duration = Duration::from_secs(5);

/// A request of a session: its session id, and its JSON-RPC id as JSON text.
type Call = (String, String);

#[derive(Default)]
struct Streams {
    of: HashMap<Call, u64>,
    order: VecDeque<Call>,
}

/// rmcp's local session manager, remembering each request's response stream.
pub struct Resumable {
    inner: LocalSessionManager,
    streams: Mutex<Streams>,
}

impl Resumable {
    pub fn new(inner: LocalSessionManager) -> Resumable {
        Resumable {
            inner,
            streams: Mutex::default(),
        }
    }

    /// The sessions themselves.
    pub fn local(&self) -> &LocalSessionManager {
        &self.inner
    }

    fn streams(&self) -> std::sync::MutexGuard<'_, Streams> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn remember(&self, call: Call, stream: u64) {
        let mut streams = self.streams();
        if streams.of.insert(call.clone(), stream).is_some() {
            // An id used again: its place in the order is the new one's.
            streams.order.retain(|c| *c != call);
        }
        streams.order.push_back(call);
        while streams.order.len() > REMEMBERED {
            if let Some(old) = streams.order.pop_front() {
                streams.of.remove(&old);
            }
        }
    }

    /// Closes the response stream of `request` (JSON-RPC id, as JSON text) in
    /// `session`, after a priming event asking the client to come back in `retry` (at
    /// most [`MAX_RETRY`]). False where there is no such stream open.
    pub async fn close(&self, session: &str, request: &str, retry: Duration) -> bool {
        let retry = retry.min(MAX_RETRY);
        let key = (session.to_string(), request.to_string());
        let Some(stream) = self.streams().of.remove(&key) else {
            return false;
        };
        let handle = self.inner.sessions.read().await.get(session).cloned();
        match handle {
            Some(handle) => handle.close_sse_stream(stream, Some(retry)).await.is_ok(),
            None => false,
        }
    }
}

/// The JSON-RPC id of a request, as JSON text.
fn request_id(message: &ClientJsonRpcMessage) -> Option<String> {
    match message {
        ClientJsonRpcMessage::Request(r) => serde_json::to_string(&r.id).ok(),
        _ => None,
    }
}

impl SessionManager for Resumable {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let handle = self.inner.sessions.read().await.get(id).cloned();
        let handle = handle.ok_or_else(|| LocalSessionManagerError::SessionNotFound(id.clone()))?;
        let receiver = handle.establish_request_wise_channel().await?;
        if let (Some(stream), Some(request)) = (receiver.http_request_id, request_id(&message)) {
            self.remember((id.to_string(), request), stream);
        }
        handle
            .push_message(message, receiver.http_request_id)
            .await?;
        Ok(futures_util::stream::unfold(
            receiver.inner,
            |mut rx| async move { rx.recv().await.map(|m| (m, rx)) },
        ))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
