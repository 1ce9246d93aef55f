//! The HTTP client under rmcp's streamable HTTP transport: reqwest, plus a gate that
//! holds a 2025 session's first request until its server-to-client stream is open.
//!
//! After the handshake of a session with an id, rmcp opens the GET stream on which the
//! server sends what belongs to no request (an elicitation, a list change) in a task
//! of its own, while the caller's next request goes out at once. A server that sends
//! on that stream as soon as the call arrives, and drops what has no stream to go on
//! (the TypeScript SDK does), loses the message when the POST wins the race. So
//! [`open`](super::open) waits, after the handshake, until the GET has been answered
//! (a stream, a refusal, an error) or [`STREAM_WAIT`] has passed.
//!
//! Where the server may ask for OAuth, every request carries what the
//! [`Authorizer`] says (`Authorization`, a DPoP proof), and a request the server
//! challenges (401, or 403 for a scope) is sent again once the authorizer has a token
//! for it, or fails with the authorizer's reason.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;
use tokio::sync::watch;

use super::oauth::Authorizer;

/// How long the first request after a handshake waits for the session's stream.
pub(super) const STREAM_WAIT: Duration = Duration::from_secs(2);

/// Where the session's server-to-client stream is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stream {
    /// No session yet, or none at all (a stateless server, the 2026 era).
    NotExpected,
    /// The handshake gave a session id; its GET has not been answered.
    Opening,
    /// The GET was answered.
    Answered,
}

/// reqwest, telling [`Gated::stream_answered`] when the session's stream has opened.
#[derive(Clone)]
pub(super) struct Gated {
    inner: reqwest::Client,
    stream: Arc<watch::Sender<Stream>>,
    auth: Option<Arc<Authorizer>>,
}

type Events = BoxStream<'static, Result<Sse, SseError>>;
type Headers = HashMap<HeaderName, HeaderValue>;
type Answer<T> = Result<T, StreamableHttpError<reqwest::Error>>;

impl Gated {
    pub(super) fn new(inner: reqwest::Client, auth: Option<Arc<Authorizer>>) -> Self {
        Self {
            inner,
            stream: Arc::new(watch::Sender::new(Stream::NotExpected)),
            auth,
        }
    }

    /// `send` (given the token header and the headers to send), authorized: sent
    /// again after each challenge the authorizer answers with a token.
    async fn authorized<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        auth_header: Option<String>,
        custom: Headers,
        send: F,
    ) -> Answer<T>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: Future<Output = Answer<T>>,
    {
        let Some(auth) = &self.auth else {
            return send(auth_header, custom).await;
        };
        let mut tries = 0;
        loop {
            let (extra, generation) = auth.headers(method, uri);
            let mut headers = custom.clone();
            headers.extend(extra);
            let answer = send(None, headers).await;
            let (challenge, forbidden) = match &answer {
                Err(StreamableHttpError::AuthRequired(e)) => (&e.www_authenticate_header, false),
                Err(StreamableHttpError::InsufficientScope(e)) => {
                    (&e.www_authenticate_header, true)
                }
                _ => return answer,
            };
            if let Err(why) = auth
                .challenged(uri, challenge, forbidden, generation, &mut tries)
                .await
            {
                return Err(StreamableHttpError::UnexpectedServerResponse(
                    format!("authorization failed: {why}").into(),
                ));
            }
        }
    }

    /// Returns once the session's GET has been answered, at once where no stream is
    /// expected, or after `within`.
    pub(super) async fn stream_answered(&self, within: Duration) {
        let mut seen = self.stream.subscribe();
        let _ = tokio::time::timeout(within, seen.wait_for(|s| *s != Stream::Opening)).await;
    }

    /// An answered handshake with a session id means a stream is being opened.
    fn posted<E>(&self, initialize: bool, answer: &Result<StreamableHttpPostResponse, E>) {
        if initialize
            && let Ok(
                StreamableHttpPostResponse::Json(_, Some(_))
                | StreamableHttpPostResponse::Sse(_, Some(_)),
            ) = answer
        {
            self.stream.send_replace(Stream::Opening);
        }
    }

    /// Any answer to a GET ends the wait: a server that refuses the stream sends
    /// nothing there.
    fn answered(&self) {
        self.stream.send_if_modified(|s| {
            let opening = *s == Stream::Opening;
            if opening {
                *s = Stream::Answered;
            }
            opening
        });
    }
}

fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_)))
}

impl StreamableHttpClient for Gated {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let initialize = is_initialize(&message);
        let answer = self
            .authorized(
                "POST",
                &uri,
                auth_header,
                custom_headers,
                |token, headers| {
                    self.inner.post_message(
                        uri.clone(),
                        message.clone(),
                        session_id.clone(),
                        token,
                        headers,
                    )
                },
            )
            .await;
        self.posted(initialize, &answer);
        answer
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let initialize = is_initialize(&message);
        let answer = self
            .authorized(
                "POST",
                &uri,
                auth_header,
                custom_headers,
                |token, headers| {
                    self.inner.post_message_with_max_sse_event_size(
                        uri.clone(),
                        message.clone(),
                        session_id.clone(),
                        token,
                        headers,
                        max_sse_event_size,
                    )
                },
            )
            .await;
        self.posted(initialize, &answer);
        answer
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.authorized(
            "DELETE",
            &uri,
            auth_header,
            custom_headers,
            |token, headers| {
                self.inner
                    .delete_session(uri.clone(), session_id.clone(), token, headers)
            },
        )
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let answer = self
            .authorized(
                "GET",
                &uri,
                auth_header,
                custom_headers,
                |token, headers| {
                    self.inner.get_stream(
                        uri.clone(),
                        session_id.clone(),
                        last_event_id.clone(),
                        token,
                        headers,
                    )
                },
            )
            .await;
        self.answered();
        answer
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let answer = self
            .authorized(
                "GET",
                &uri,
                auth_header,
                custom_headers,
                |token, headers| {
                    self.inner.get_stream_with_max_sse_event_size(
                        uri.clone(),
                        session_id.clone(),
                        last_event_id.clone(),
                        token,
                        headers,
                        max_sse_event_size,
                    )
                },
            )
            .await;
        self.answered();
        answer
    }
}
