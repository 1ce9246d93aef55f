//! Opening a connection: the transport for a target (a child over stdio, a URL over
//! streamable HTTP) and one handshake over it, its errors in plain words, and the
//! paged lists read at attach, capped.

use std::sync::Arc;

use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt as _, RoleClient};

use super::handler::Listener;
use super::traffic::{Logged, Wire};
use super::{MAX_PAGES, Target, child, http};

/// A handshake that failed, and whether trying another is pointless (the program
/// cannot be started).
pub(super) struct Failed {
    pub(super) error: anyhow::Error,
    pub(super) transport: bool,
}

/// The most entries one list may give at attach (tools, prompts), over at most
/// [`MAX_PAGES`] pages.
pub const MAX_LISTED: usize = 10_000;

pub(super) fn page_params(cursor: Option<String>) -> rmcp::model::PaginatedRequestParams {
    rmcp::model::PaginatedRequestParams::default().with_cursor(cursor)
}

/// Every page of a list, following its cursors up to [`MAX_PAGES`] pages and
/// [`MAX_LISTED`] entries; a list that goes on past either is refused, saying so.
pub(super) async fn all_pages<T, F, Fut>(mut page: F) -> Result<Vec<T>, String>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let (list, next) = page(cursor.clone()).await.map_err(|e| e.to_string())?;
        items.extend(list);
        if items.len() > MAX_LISTED {
            return Err(format!(
                "the list went on past {MAX_LISTED} entries; stopped there"
            ));
        }
        match next {
            Some(next) if !next.is_empty() && Some(&next) != cursor.as_ref() => {
                cursor = Some(next);
            }
            _ => return Ok(items),
        }
    }
    Err(format!(
        "the list still had more after {MAX_PAGES} pages; stopped there"
    ))
}

/// Starts the child or reaches the URL and runs one handshake over it.
pub(super) async fn open(
    target: &Target,
    token: Option<&str>,
    auth: Option<Arc<super::oauth::Authorizer>>,
    wire: &Arc<Wire>,
    listener: Listener,
    lifecycle: ClientLifecycleMode,
) -> Result<RunningService<RoleClient, Listener>, Failed> {
    let served = match target {
        Target::Command(words) => {
            let mut cmd = tokio::process::Command::new(&words[0]);
            cmd.args(&words[1..]);
            let child = child::ChildTransport::spawn(cmd, wire).map_err(|e| Failed {
                error: anyhow::anyhow!("cannot start {:?}: {e}", words[0]),
                transport: true,
            })?;
            let transport = Logged {
                inner: child,
                wire: wire.clone(),
            };
            listener.serve_with_lifecycle(transport, lifecycle).await
        }
        Target::Url(url) => {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let mut config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                    url.clone(),
                );
            if let Some(token) = token {
                config = config.auth_header(token.to_string());
            }
            let client = http::Gated::new(reqwest::Client::new(), auth);
            let transport = Logged {
                inner: StreamableHttpClientTransport::with_client(client.clone(), config),
                wire: wire.clone(),
            };
            let served = listener.serve_with_lifecycle(transport, lifecycle).await;
            if served.is_ok() {
                client.stream_answered(http::STREAM_WAIT).await;
            }
            served
        }
    };
    // Any answer may be a server of another era turning the probe down (an HTTP
    // server may refuse it with an error status before any session exists), so only
    // a program that cannot start is final.
    served.map_err(|e| Failed {
        error: match target {
            // A library's message may quote the URL whole, password and all.
            Target::Url(url) => {
                anyhow::anyhow!(crate::guard::redact_in(
                    &plain_init_error(e).to_string(),
                    url
                ))
            }
            Target::Command(_) => plain_init_error(e),
        },
        transport: false,
    })
}

/// An rmcp handshake error in words a user can act on: a transport failure is its
/// chain of causes (`… tcp connect error: Connection refused`), without the transport's
/// Rust type name that rmcp puts first.
fn plain_init_error(e: rmcp::service::ClientInitializeError) -> anyhow::Error {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    match e {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
            // rmcp's HTTP client error shows the request error but does not give it as
            // its source, so the causes under it (refused, timed out, TLS) are read
            // from the request error itself.
            let words = match error
                .error
                .downcast_ref::<StreamableHttpError<reqwest::Error>>()
            {
                Some(StreamableHttpError::Client(request)) => causes(request),
                _ => causes(error.error.as_ref()),
            };
            anyhow::anyhow!(words)
        }
        other => anyhow::Error::from(other),
    }
}

/// An error and its causes, `: `-separated, each said once.
fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut words = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !words.contains(&text) {
            words.push_str(": ");
            words.push_str(&text);
        }
        cause = c.source();
    }
    words
}
