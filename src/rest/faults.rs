//! Faults a REST server can be told to inject, for tests and benchmarks of clients:
//! latency on every request, and a queue of one-shot faults (a 429 with `Retry-After`,
//! any status with the node's error body, a hang, a connection dropped mid-response)
//! applied to the next requests in order. `serve-rest --latency-ms` sets the latency
//! from the command line.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// One injected fault, used once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// `429 Too Many Requests`, with `Retry-After: N` seconds when given.
    RateLimited { retry_after_secs: Option<u64> },
    /// Any status with a node's error body carrying `message`.
    Status { status: u16, message: String },
    /// No answer for this long (then the request is served normally).
    Hang(Duration),
    /// Headers sent, then the connection is cut before the body.
    Drop,
}

#[derive(Debug, Default)]
struct State_ {
    latency: Duration,
    queue: VecDeque<Fault>,
}

/// Shared fault settings of one server; clones share them.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    state: Arc<Mutex<State_>>,
    requests: Arc<AtomicU64>,
    injected: Arc<AtomicU64>,
}

impl Faults {
    pub fn new() -> Faults {
        Faults::default()
    }

    /// Delay added before every request is served.
    pub fn set_latency(&self, latency: Duration) {
        self.lock().latency = latency;
    }

    /// Queues faults for the next requests, one each, after any already queued.
    pub fn push(&self, faults: impl IntoIterator<Item = Fault>) {
        self.lock().queue.extend(faults);
    }

    /// Drops every queued fault.
    pub fn clear(&self) {
        self.lock().queue.clear();
    }

    /// Requests received so far (faulted ones included).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Faults applied so far.
    pub fn injected(&self) -> u64 {
        self.injected.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State_> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The middleware: latency, then the next queued fault, if any.
pub async fn inject(State(faults): State<Faults>, request: Request, next: Next) -> Response {
    faults.requests.fetch_add(1, Ordering::Relaxed);
    let (latency, fault) = {
        let mut s = faults.lock();
        (s.latency, s.queue.pop_front())
    };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let Some(fault) = fault else {
        return next.run(request).await;
    };
    faults.injected.fetch_add(1, Ordering::Relaxed);
    match fault {
        Fault::RateLimited { retry_after_secs } => {
            let mut r = (
                StatusCode::TOO_MANY_REQUESTS,
                axum::Json(serde_json::json!({
                    "error": "Rate limit exceeded", "code": 429,
                    "retry_after": retry_after_secs,
                })),
            )
                .into_response();
            if let Some(secs) = retry_after_secs {
                r.headers_mut()
                    .insert("retry-after", HeaderValue::from(secs));
            }
            r
        }
        Fault::Status { status, message } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let grpc = if status == StatusCode::SERVICE_UNAVAILABLE {
                14
            } else {
                13
            };
            (
                status,
                axum::Json(crate::source::rest::wire::error_body(grpc, &message)),
            )
                .into_response()
        }
        Fault::Hang(d) => {
            tokio::time::sleep(d).await;
            next.run(request).await
        }
        Fault::Drop => {
            let mut r = Response::new(Body::new(Broken));
            r.headers_mut()
                .insert("content-type", HeaderValue::from_static("application/json"));
            r
        }
    }
}

/// A body that fails at once: the server cuts the connection after the headers.
struct Broken;

impl HttpBody for Broken {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
        Poll::Ready(Some(Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "connection dropped on purpose",
        ))))
    }
}
