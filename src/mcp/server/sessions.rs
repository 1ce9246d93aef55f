//! MCP sessions over HTTP, bounded in number and in time.
//!
//! - At most [`SessionLimits::max`] sessions at once. The next `initialize` gets 503
//!   with a JSON-RPC error and `Retry-After`: the seconds until the first idle session
//!   is due to end, or the idle time when every session is busy.
//! - A session with no request in flight and no stream open (the GET stream of server
//!   messages included) for [`SessionLimits::idle`] is ended, as a `DELETE` would end
//!   it: its searches and plan runs are cancelled and its subscriptions go. A client
//!   that is still there gets 404 on its next request and starts a new session, as the
//!   transport's rules say it must. A client holding its stream open is never idle.
//!
//! Each session's own memory is bounded by the caps of what it holds (subscriptions,
//! handle list, work slots, the message channel and the short cache of completed
//! answers), so the sessions together are bounded by the count.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::error::{ErrorCode, ToolError};
pub use crate::mcp::wire::http::SessionLimits;
use crate::throttle::{Every, WARN_EVERY};

/// The header carrying a session's id.
const SESSION_HEADER: &str = "mcp-session-id";

/// What is known of one session.
#[derive(Debug)]
struct Activity {
    /// Requests in flight and streams open.
    open: usize,
    /// When the last of them ended (or the session began).
    last: Instant,
    /// When the session began.
    began: Instant,
}

/// Records a session's length in `mcp.server.session.duration`, when traces are on.
fn ended(a: &Activity) {
    if let Some(i) = crate::context::trace::instruments() {
        i.server_session.record(
            a.began.elapsed().as_secs_f64(),
            &[opentelemetry::KeyValue::new(
                crate::context::trace::attr::TRANSPORT,
                "tcp",
            )],
        );
    }
}

#[derive(Default)]
struct State_ {
    sessions: HashMap<String, Activity>,
    /// `initialize` requests on their way, each holding a place.
    starting: usize,
}

/// The sessions the server holds, their activity, and the limits.
pub struct Tracker {
    limits: SessionLimits,
    state: Mutex<State_>,
}

impl Tracker {
    pub fn new(limits: SessionLimits) -> Arc<Tracker> {
        Arc::new(Tracker {
            limits,
            state: Mutex::new(State_::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State_> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Seconds until a place may free: the first idle session's end, or the idle time.
    fn retry_after(&self, st: &State_) -> u64 {
        let now = Instant::now();
        st.sessions
            .values()
            .filter(|a| a.open == 0)
            .map(|a| (a.last + self.limits.idle).saturating_duration_since(now))
            .min()
            .unwrap_or(self.limits.idle)
            .as_secs()
            .max(1)
    }

    /// Ends the sessions idle past the limit, and forgets those rmcp has ended itself.
    pub async fn sweep(&self, manager: &LocalSessionManager) {
        let live: std::collections::HashSet<String> = manager
            .sessions
            .read()
            .await
            .keys()
            .map(|id| id.to_string())
            .collect();
        let idle: Vec<String> = {
            let mut st = self.lock();
            st.sessions.retain(|id, a| {
                let keep = live.contains(id);
                if !keep {
                    ended(a);
                }
                keep
            });
            st.sessions
                .iter()
                .filter(|(_, a)| a.open == 0 && a.last.elapsed() >= self.limits.idle)
                .map(|(id, _)| id.clone())
                .collect()
        };
        for id in idle {
            let session: Arc<str> = id.as_str().into();
            if let Err(e) = manager.close_session(&session).await {
                tracing::warn!(%e, "could not end an idle session");
            }
            if let Some(a) = self.lock().sessions.remove(&id) {
                ended(&a);
            }
            tracing::info!(
                idle_secs = self.limits.idle.as_secs(),
                "ended an idle MCP session"
            );
        }
    }

    /// How often [`Tracker::sweep`] runs.
    pub fn sweep_every(&self) -> Duration {
        (self.limits.idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))
    }
}

/// Counts a request or stream of a session as open until dropped.
struct Open {
    tracker: Arc<Tracker>,
    id: String,
}

impl Drop for Open {
    fn drop(&mut self) {
        if let Some(a) = self.tracker.lock().sessions.get_mut(&self.id) {
            a.open = a.open.saturating_sub(1);
            a.last = Instant::now();
        }
    }
}

/// Holds a place for an `initialize` on its way, given back if no session came of it.
struct Starting(Arc<Tracker>);

impl Drop for Starting {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.starting = st.starting.saturating_sub(1);
    }
}

/// The middleware: refuses a session over the cap, and keeps each session's activity.
pub async fn track(State(tracker): State<Arc<Tracker>>, request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match id {
        Some(id) => {
            let known = match tracker.lock().sessions.get_mut(&id) {
                Some(a) => {
                    a.open += 1;
                    true
                }
                None => false,
            };
            let deleting = request.method() == Method::DELETE;
            // Made before the request runs, so a request dropped half-way counts out too.
            let open = known.then(|| Open {
                tracker: tracker.clone(),
                id: id.clone(),
            });
            let response = next.run(request).await;
            let Some(open) = open else {
                return response;
            };
            if deleting && response.status().is_success() {
                drop(open);
                if let Some(a) = tracker.lock().sessions.remove(&id) {
                    ended(&a);
                }
                return response;
            }
            crate::mcp::wire::listen::hold_until_sent(response, open)
        }
        None if request.method() == Method::POST => {
            let place = {
                let mut st = tracker.lock();
                if st.sessions.len() + st.starting >= tracker.limits.max {
                    let retry = tracker.retry_after(&st);
                    drop(st);
                    return full(tracker.limits.max, retry);
                }
                st.starting += 1;
                Starting(tracker.clone())
            };
            let response = next.run(request).await;
            let made = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let Some(id) = made else {
                return response;
            };
            {
                let mut st = tracker.lock();
                st.sessions.insert(
                    id.clone(),
                    Activity {
                        open: 1,
                        last: Instant::now(),
                        began: Instant::now(),
                    },
                );
            }
            drop(place);
            crate::mcp::wire::listen::hold_until_sent(response, Open { tracker, id })
        }
        None => next.run(request).await,
    }
}

/// 503: every place is taken.
fn full(max: usize, retry_after_secs: u64) -> Response {
    static FULL: Every = Every::new(WARN_EVERY);
    if let Some(unlogged) = FULL.ready() {
        tracing::warn!(
            max,
            unlogged_since_last = unlogged,
            "refused a new MCP session: the server is full (logged at most once in 10 s)"
        );
    }
    let error = ToolError::new(
        ErrorCode::ResourceUnavailable,
        format!(
            "this server holds at most {max} MCP sessions and all are open; try again in \
             {retry_after_secs} s, or end a session you no longer use (DELETE)"
        ),
    )
    .with_extra("max_sessions", serde_json::Value::from(max))
    .with_extra(
        "retry_after_ms",
        serde_json::Value::from(retry_after_secs * 1000),
    );
    let mut response = crate::mcp::wire::http::refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        // JSON-RPC's range for a server's own errors: the server is full.
        rmcp::model::ErrorCode(-32000),
        error,
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
    response
}
