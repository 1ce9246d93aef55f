//! The HTTP side of the REST source: one `reqwest` client (a pool of keep-alive
//! connections), a client-side rate limit, a timeout per request, and retries with
//! exponential backoff and jitter on 429 and 5xx, honouring `Retry-After`.
//!
//! Failures become the brief's error codes: `RATE_LIMIT_EXCEEDED` (with
//! `details.retry_after_secs`) when the node keeps refusing, `API_UNAVAILABLE` when it
//! cannot be reached or does not answer in time, `API_ERROR` with the node's HTTP
//! status, gRPC code and message otherwise. A node's "object not found" is no error but
//! [`Reply::NotFound`].

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tracing::Instrument as _;

use crate::context::trace;

use crate::error::{ErrorCode, ToolError};
use crate::source::SourceHealth;

/// How the source talks to its node.
#[derive(Debug, Clone, PartialEq)]
pub struct RestConfig {
    /// The node's REST address, without a trailing slash (`http://localhost:1317`).
    pub endpoint: String,
    /// Time allowed for one request, from sending to the whole body.
    pub timeout: Duration,
    /// Requests per second at most (client-side); `None` for no limit.
    pub rate_limit: Option<f64>,
    /// Requests that may go at once before the spacing applies (the references of one
    /// answer are fetched together); 1 spaces every request.
    pub rate_burst: u32,
    /// Further attempts after a retryable failure (429, 5xx, unreachable, timeout).
    pub retries: u32,
    /// The first backoff; each retry doubles it, up to `backoff_max`, with jitter.
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// A `Retry-After` longer than this is not waited for: the call fails at once with
    /// the node's error (`RATE_LIMIT_EXCEEDED` with the retry-after, for a 429).
    pub max_retry_after: Duration,
    /// How often the block height is read.
    pub height_poll: Duration,
}

impl RestConfig {
    /// Defaults for a node at `endpoint`: 10 s per request, 20 requests per second in
    /// bursts of 5 at most, 4 retries from 250 ms up to 8 s, `Retry-After` waited up to
    /// 30 s, the height read every 2 s.
    pub fn new(endpoint: &str) -> RestConfig {
        RestConfig {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            timeout: Duration::from_secs(10),
            rate_limit: Some(20.0),
            rate_burst: 5,
            retries: 4,
            backoff_base: Duration::from_millis(250),
            backoff_max: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(30),
            height_poll: Duration::from_secs(2),
        }
    }
}

/// A client-side rate limit (the generic cell rate algorithm, delaying): requests are
/// spaced `1/rate` apart on average, up to `burst` of them may go at once after a quiet
/// spell, and each waits for its slot in the order it asked. Over any long run the rate
/// holds: n requests take at least `(n - burst) / rate`.
#[derive(Debug)]
pub struct RateLimiter {
    interval: Option<Duration>,
    /// How far ahead of the theoretical schedule a request may go.
    tolerance: Duration,
    /// The theoretical arrival time of the next request.
    tat: std::sync::Mutex<Option<tokio::time::Instant>>,
}

impl RateLimiter {
    pub fn new(per_second: Option<f64>, burst: u32) -> RateLimiter {
        // A rate too small to express is no rate (the command line refuses those).
        let interval = per_second
            .filter(|r| r.is_finite() && *r > 0.0)
            .and_then(|r| Duration::try_from_secs_f64(1.0 / r).ok());
        RateLimiter {
            interval,
            tolerance: interval.unwrap_or_default() * burst.max(1).saturating_sub(1),
            tat: std::sync::Mutex::new(None),
        }
    }

    /// Waits for this request's slot.
    pub async fn acquire(&self) {
        let Some(interval) = self.interval else {
            return;
        };
        let slot = {
            let mut tat = self.tat.lock().unwrap_or_else(|e| e.into_inner());
            let now = tokio::time::Instant::now();
            let theoretical = tat.map_or(now, |t| t.max(now));
            let slot = theoretical
                .checked_sub(self.tolerance)
                .map_or(now, |t| t.max(now));
            *tat = Some(theoretical + interval);
            slot
        };
        tokio::time::sleep_until(slot).await;
    }
}

/// What a node answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Found(Value),
    /// The node's "object not found" (HTTP 500, gRPC code 2, structs code 1050).
    NotFound,
}

impl Reply {
    /// The answer, or `None` for "object not found".
    pub fn found(self) -> Option<Value> {
        match self {
            Reply::Found(v) => Some(v),
            Reply::NotFound => None,
        }
    }
}

#[derive(Debug, Default)]
struct Stats {
    requests: u64,
    errors: u64,
    latency_ms: f64,
    last_latency_ms: f64,
    connected: bool,
    last_error: Option<(String, Instant)>,
}

/// The node's HTTP client.
#[derive(Debug)]
pub struct Client {
    http: reqwest::Client,
    pub config: RestConfig,
    limiter: RateLimiter,
    stats: Mutex<Stats>,
    /// The highest block height an answer's header named (0 before any).
    heard_height: std::sync::atomic::AtomicU64,
}

/// One failed attempt: the error it would end in, whether a retry may help, and how
/// long the node asked to wait.
struct Failure {
    error: ToolError,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl Client {
    pub fn new(config: RestConfig) -> Result<Client, ToolError> {
        crate::source::rest::install_crypto();
        let http = reqwest::Client::builder()
            .connect_timeout(config.timeout.min(Duration::from_secs(5)))
            .pool_idle_timeout(Duration::from_secs(30))
            .user_agent(concat!("structs-console/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::ApiUnavailable,
                    format!("cannot set up the HTTP client: {e}"),
                )
            })?;
        Ok(Client {
            http,
            limiter: RateLimiter::new(config.rate_limit, config.rate_burst),
            config,
            stats: Mutex::new(Stats::default()),
            heard_height: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// `GET path?query`, retried as configured.
    pub async fn get(&self, path: &str, query: &[(&str, String)]) -> Result<Reply, ToolError> {
        self.send(reqwest::Method::GET, path, query, None, true)
            .await
    }

    /// `POST path` with a JSON body. Not repeated after the node may have taken it: only
    /// a 429 (refused before it was read) or a connection that never opened is retried.
    pub async fn post(&self, path: &str, body: Value) -> Result<Reply, ToolError> {
        self.send(reqwest::Method::POST, path, &[], Some(body), false)
            .await
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Value>,
        idempotent: bool,
    ) -> Result<Reply, ToolError> {
        let url = format!("{}{path}", self.config.endpoint);
        let mut attempt = 0u32;
        loop {
            self.limiter.acquire().await;
            let started = Instant::now();
            let mut request = self
                .http
                .request(method.clone(), &url)
                .timeout(self.config.timeout);
            if !query.is_empty() {
                request = request.query(query);
            }
            if let Some(b) = &body {
                request = request.json(b);
            }
            let span = http_span(&method, &url, query, attempt);
            for (name, value) in trace::headers_of(&span) {
                request = request.header(name, value);
            }
            let outcome = self
                .attempt(request, path, idempotent)
                .instrument(span.clone())
                .await;
            if let Err(f) = &outcome {
                let kind = match f.error.extra.get("status").and_then(Value::as_u64) {
                    Some(status) => status.to_string(),
                    None => f.error.code.as_str().to_string(),
                };
                span.record("error.type", kind.as_str());
            }
            self.record(started.elapsed(), outcome.as_ref().err());
            let failure = match outcome {
                Ok(reply) => return Ok(reply),
                Err(f) => f,
            };
            let give_up = !failure.retryable || attempt >= self.config.retries;
            if let Some(wait) = failure.retry_after
                && wait > self.config.max_retry_after
            {
                return Err(failure.error.with_extra("attempts", json!(attempt + 1)));
            }
            if give_up {
                return Err(failure.error.with_extra("attempts", json!(attempt + 1)));
            }
            let wait = failure.retry_after.unwrap_or_else(|| self.backoff(attempt));
            tracing::debug!(path, attempt, wait_ms = wait.as_millis() as u64, error = %failure.error.message, "retrying");
            crate::context::log::log(
                crate::context::log::Level::Warning,
                "structs.node",
                serde_json::json!({"message": format!(
                    "{path}: {}; retry {} of {} in {} ms",
                    failure.error.message, attempt + 1, self.config.retries, wait.as_millis()),
                    "path": path, "attempt": attempt + 1, "wait_ms": wait.as_millis() as u64,
                    "error_code": failure.error.code.as_str()}),
            );
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// The highest block height a node's answer named in its height header, when one
    /// did (a node's gateway sends it with every answer).
    pub fn heard_height(&self) -> Option<u64> {
        Some(self.heard_height.load(std::sync::atomic::Ordering::Relaxed)).filter(|h| *h > 0)
    }

    /// Exponential backoff with jitter: `base * 2^attempt`, capped, then a random
    /// point in its upper half (so retries of many clients spread out).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exp = self
            .config
            .backoff_base
            .saturating_mul(1u32 << attempt.min(16))
            .min(self.config.backoff_max);
        let jitter = 0.5 + 0.5 * unit_random();
        exp.mul_f64(jitter)
    }

    /// Sends `request` once and reads the node's answer: a reply, or the failure it
    /// ends in, with whether a retry may help.
    async fn attempt(
        &self,
        request: reqwest::RequestBuilder,
        path: &str,
        idempotent: bool,
    ) -> Result<Reply, Failure> {
        let mut response = request
            .send()
            .await
            .map_err(|e| self.unavailable(&e, false, path, idempotent))?;
        let status = response.status();
        tracing::Span::current().record("http.response.status_code", i64::from(status.as_u16()));
        let retry_after = retry_after(response.headers());
        self.hear_height(response.headers());
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.unavailable(&e, true, path, idempotent))?
        {
            if bytes.len() + chunk.len() > MAX_BODY {
                return Err(Failure {
                    error: ToolError::new(
                        ErrorCode::ApiError,
                        format!(
                            "the node's answer to {path} is over {} MB; ask for smaller pages",
                            MAX_BODY >> 20
                        ),
                    )
                    .with_extra("status", json!(status.as_u16()))
                    .with_extra("path", json!(path)),
                    retryable: false,
                    retry_after: None,
                });
            }
            bytes.extend_from_slice(&chunk);
        }
        answer(status, &bytes, retry_after, path, idempotent)
    }

    /// The failure of a request that got no answer (`sent`: it went out, and the
    /// connection failed after): the node is unavailable.
    fn unavailable(&self, e: &reqwest::Error, sent: bool, path: &str, idempotent: bool) -> Failure {
        let what = if e.is_timeout() {
            format!(
                "the node did not answer {path} within {} ms",
                self.config.timeout.as_millis()
            )
        } else if e.is_connect() {
            format!("cannot connect to {}: {}", self.config.endpoint, root(e))
        } else {
            format!(
                "the connection to {} failed: {}",
                self.config.endpoint,
                root(e)
            )
        };
        Failure {
            error: ToolError::new(ErrorCode::ApiUnavailable, what)
                .with_extra("endpoint", json!(self.config.endpoint))
                .with_extra("path", json!(path)),
            // A request that never left (no connection) is safe to send again.
            retryable: idempotent || (!sent && e.is_connect()),
            retry_after: None,
        }
    }

    /// Notes the block height an answer's header names, when it is the highest heard.
    fn hear_height(&self, headers: &reqwest::header::HeaderMap) {
        if let Some(height) = headers
            .get(super::wire::HEIGHT_HEADER)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.trim().parse::<u64>().ok())
        {
            self.heard_height
                .fetch_max(height, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn record(&self, took: Duration, error: Option<&Failure>) {
        let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        let ms = took.as_secs_f64() * 1000.0;
        s.requests += 1;
        s.last_latency_ms = ms;
        s.latency_ms = if s.requests == 1 {
            ms
        } else {
            s.latency_ms * 0.8 + ms * 0.2
        };
        match error {
            None => s.connected = true,
            Some(f) => {
                s.errors += 1;
                s.connected = f.error.code != ErrorCode::ApiUnavailable;
                s.last_error = Some((f.error.message.clone(), Instant::now()));
            }
        }
    }

    /// The connection's figures for the console's header.
    pub fn health(&self) -> SourceHealth {
        let s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        SourceHealth {
            endpoint: self.config.endpoint.clone(),
            connected: s.connected,
            requests: s.requests,
            errors: s.errors,
            latency_ms: s.latency_ms,
            last_latency_ms: s.last_latency_ms,
            last_error: s
                .last_error
                .as_ref()
                .map(|(m, at)| format!("{m} ({} s ago)", at.elapsed().as_secs())),
            cache_hits: 0,
            cache_reads: 0,
        }
    }
}

/// The span of one request to the node, by the HTTP client conventions: named by its
/// method, its URL whole (credentials in it hidden), a resend counted.
fn http_span(
    method: &reqwest::Method,
    url: &str,
    query: &[(&str, String)],
    attempt: u32,
) -> tracing::Span {
    if !trace::on() {
        return tracing::Span::none();
    }
    let mut parsed = reqwest::Url::parse(url).ok();
    let host = parsed
        .as_ref()
        .and_then(|u| u.host_str().map(str::to_string));
    let port = parsed
        .as_ref()
        .and_then(reqwest::Url::port_or_known_default);
    // Credentials in the URL stay out of the trace.
    let mut full = match parsed.as_mut() {
        Some(u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        None => url.to_string(),
    };
    if !query.is_empty() {
        let pairs: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        full = format!("{full}?{}", pairs.join("&"));
    }
    let span = tracing::info_span!(
        target: trace::TARGET, "http", otel.name = %method, otel.kind = "client",
        http.request.method = %method, url.full = %full,
        server.address = host.as_deref().unwrap_or_default(), server.port = i64::from(port.unwrap_or(0)),
        http.response.status_code = tracing::field::Empty, error.type = tracing::field::Empty,
        http.request.resend_count = tracing::field::Empty
    );
    if attempt > 0 {
        span.record("http.request.resend_count", i64::from(attempt));
    }
    span
}

/// What a node's whole answer (`status`, `bytes`) means: its JSON, "object not found",
/// or the failure it is (a 429 is always worth a retry, a 5xx when `idempotent`).
fn answer(
    status: reqwest::StatusCode,
    bytes: &[u8],
    retry_after: Option<Duration>,
    path: &str,
    idempotent: bool,
) -> Result<Reply, Failure> {
    let body: Option<Value> = serde_json::from_slice(bytes).ok();
    if status.is_success() {
        return match body {
            Some(v) => Ok(Reply::Found(v)),
            None => Err(Failure {
                error: ToolError::new(
                    ErrorCode::ApiError,
                    format!("the node answered {path} with something that is not JSON"),
                )
                .with_extra("status", json!(status.as_u16())),
                retryable: false,
                retry_after: None,
            }),
        };
    }
    let node_message = body
        .as_ref()
        .and_then(|b| b.get("message").or_else(|| b.get("error")))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(bytes).chars().take(300).collect());
    let node_code = body.as_ref().and_then(|b| b.get("code")).cloned();
    if status.as_u16() == 429 {
        return Err(rate_limited(retry_after, path));
    }
    if node_message.contains("object not found") || node_message.contains("code 1050") {
        return Ok(Reply::NotFound);
    }
    let error = ToolError::new(
        ErrorCode::ApiError,
        format!(
            "the node answered {path} with HTTP {}: {node_message}",
            status.as_u16()
        ),
    )
    .with_extra("status", json!(status.as_u16()))
    .with_extra("node_code", node_code.unwrap_or(Value::Null))
    .with_extra("node_message", json!(node_message))
    .with_extra("path", json!(path));
    // 501 is a route the node does not have: asking again will not help.
    let retryable = status.is_server_error() && status.as_u16() != 501 && idempotent;
    Err(Failure {
        error,
        retryable,
        retry_after,
    })
}

/// The failure of a 429: `RATE_LIMIT_EXCEEDED`, with the wait the node asked for.
fn rate_limited(retry_after: Option<Duration>, path: &str) -> Failure {
    let secs = retry_after.map(|d| d.as_secs_f64().ceil() as u64);
    let mut error = ToolError::new(
        ErrorCode::RateLimitExceeded,
        match secs {
            Some(s) => format!("the node is rate limiting requests; retry after {s} s"),
            None => "the node is rate limiting requests".to_string(),
        },
    )
    .with_extra("status", json!(429))
    .with_extra("path", json!(path));
    if let Some(s) = secs {
        // Seconds as the node says them; milliseconds as plans read them.
        error = error
            .with_extra("retry_after_secs", json!(s))
            .with_extra("retry_after_ms", json!(s.saturating_mul(1000)));
    }
    Failure {
        error,
        retryable: true,
        retry_after,
    }
}

/// A number in `0..1` that differs from call to call (std's per-instance random hash
/// keys; jitter needs no better).
fn unit_random() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// The innermost cause of a reqwest error (`connection refused`, not the URL again).
fn root(e: &reqwest::Error) -> String {
    let mut cur: &dyn std::error::Error = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// `Retry-After` in seconds or as an HTTP date.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let text = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    let wait = if let Ok(secs) = text.parse::<f64>() {
        if secs.is_nan() || secs < 0.0 {
            return None;
        }
        Duration::try_from_secs_f64(secs).unwrap_or(MAX_RETRY_AFTER)
    } else {
        let at = chrono::DateTime::parse_from_rfc2822(text).ok()?;
        let wait = at.signed_duration_since(chrono::Utc::now());
        wait.to_std().unwrap_or(Duration::ZERO)
    };
    // Whatever a node writes, a day is the longest wait it can ask for.
    Some(wait.min(MAX_RETRY_AFTER))
}

/// The longest `Retry-After` taken from a node.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(86_400);

/// The largest answer read from a node; a bigger one is an error, not a memory spike.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "3".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        let later = chrono::Utc::now() + chrono::Duration::seconds(60);
        h.insert("retry-after", later.to_rfc2822().parse().unwrap());
        let d = retry_after(&h).unwrap();
        assert!(
            d > Duration::from_secs(55) && d <= Duration::from_secs(60),
            "{d:?}"
        );
        h.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
        // Absurd values are capped at a day, never a panic.
        for absurd in ["1e20", "18446744073709551616", "inf"] {
            h.insert("retry-after", absurd.parse().unwrap());
            assert_eq!(
                retry_after(&h),
                Some(Duration::from_secs(86_400)),
                "{absurd}"
            );
        }
        for bad in ["-3", "NaN"] {
            h.insert("retry-after", bad.parse().unwrap());
            assert_eq!(retry_after(&h), None, "{bad}");
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_up_to_the_cap() {
        let mut config = RestConfig::new("http://x");
        config.backoff_base = Duration::from_millis(100);
        config.backoff_max = Duration::from_millis(1000);
        let c = Client::new(config).unwrap();
        for (attempt, full) in [(0, 100), (1, 200), (2, 400), (3, 800), (4, 1000), (9, 1000)] {
            for _ in 0..20 {
                let d = c.backoff(attempt).as_millis() as u64;
                assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d} ms");
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_goes_at_once_then_the_rate_holds() {
        let limiter = std::sync::Arc::new(RateLimiter::new(Some(10.0), 4));
        let start = tokio::time::Instant::now();
        let mut times = Vec::new();
        for _ in 0..24 {
            limiter.acquire().await;
            times.push(tokio::time::Instant::now() - start);
        }
        // Four at once, then one every 100 ms: 24 requests by 2 s.
        assert!(times[..4].iter().all(|t| t.is_zero()), "{times:?}");
        assert_eq!(times[4], Duration::from_millis(100));
        assert_eq!(times[23], Duration::from_millis(2000));
        // After a quiet spell the burst is available again, and only the burst.
        tokio::time::sleep(Duration::from_secs(5)).await;
        let quiet = tokio::time::Instant::now();
        for _ in 0..5 {
            limiter.acquire().await;
        }
        assert_eq!(
            tokio::time::Instant::now() - quiet,
            Duration::from_millis(100)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_limiter_spaces_requests_evenly() {
        let limiter = std::sync::Arc::new(RateLimiter::new(Some(50.0), 1));
        let start = tokio::time::Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..100 {
            let l = limiter.clone();
            tasks.push(tokio::spawn(async move {
                l.acquire().await;
                tokio::time::Instant::now()
            }));
        }
        let mut times = Vec::new();
        for t in tasks {
            times.push(t.await.unwrap());
        }
        times.sort();
        // 100 requests at 50 per second: the last starts 99 intervals after the first.
        let span = times[99] - start;
        assert_eq!(span, Duration::from_millis(20) * 99);
        for pair in times.windows(2) {
            assert_eq!(pair[1] - pair[0], Duration::from_millis(20));
        }
    }
}
