//! Tracing by OpenTelemetry, the part every layer shares: whether it is on, the
//! `tracing` target its spans use, the attribute names of the MCP conventions, the
//! trace context a request carries in `params._meta` (SEP-414), and the current span's
//! ids for a log line.
//!
//! Every span meant for the trace is made with `target: TARGET`. Nothing listens to
//! that target unless `--otlp` (or `OTEL_EXPORTER_OTLP_ENDPOINT`) turned tracing on,
//! so when it is off making one costs a cached check and nothing is kept
//! (`crate::telemetry` sets the listener up; the faces log under other targets).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::metrics::{Gauge, Histogram, UpDownCounter};

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// The `tracing` target of every span and event meant for the trace.
pub const TARGET: &str = "structs_console::otel";

/// The `_meta` keys that carry the trace context (SEP-414), unprefixed as W3C names them.
pub const META_KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

static ON: AtomicBool = AtomicBool::new(false);

/// Whether spans are exported (set once, when tracing starts).
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Says that spans are exported from now on; `crate::telemetry` calls it once its
/// listener is installed.
pub fn set_on() {
    ON.store(true, Ordering::Relaxed);
}

static CONTENT: AtomicBool = AtomicBool::new(false);

/// Whether tool arguments and results go on the spans (`--otlp-content`).
pub fn content() -> bool {
    CONTENT.load(Ordering::Relaxed)
}

/// Says whether tool arguments and results go on the spans.
pub fn set_content(on: bool) {
    CONTENT.store(on, Ordering::Relaxed);
}

/// Attribute names, from the MCP and GenAI semantic conventions and the general ones
/// they build on (RPC, network, HTTP, database, error).
pub mod attr {
    pub const MCP_METHOD: &str = "mcp.method.name";
    pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
    pub const MCP_SESSION: &str = "mcp.session.id";
    pub const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
    pub const JSONRPC_ID: &str = "jsonrpc.request.id";
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    pub const PROMPT_NAME: &str = "gen_ai.prompt.name";
    pub const OPERATION: &str = "gen_ai.operation.name";
    pub const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    pub const TOOL_RESULT: &str = "gen_ai.tool.call.result";
    pub const STATUS_CODE: &str = "rpc.response.status_code";
    pub const ERROR_TYPE: &str = "error.type";
    pub const TRANSPORT: &str = "network.transport";
}

/// The trace context a request's `params._meta` carries, as a parent for the span
/// that serves it; an empty context when it carries none (or a malformed one).
pub fn extract(meta: Option<&Map<String, Value>>) -> opentelemetry::Context {
    let Some(meta) = meta else {
        return opentelemetry::Context::new();
    };
    if !meta.contains_key("traceparent") {
        return opentelemetry::Context::new();
    }
    let carrier = Meta(meta);
    let cx = TraceContextPropagator::new().extract(&carrier);
    BaggagePropagator::new().extract_with_context(&cx, &carrier)
}

/// Writes the current span's trace context into `meta` (`traceparent`, and
/// `tracestate` and `baggage` when there are any), unless `meta` already carries a
/// `traceparent`: a context the caller sent is passed on unchanged. Returns whether it
/// wrote one (not when tracing is off or no span is current).
pub fn inject(meta: &mut Map<String, Value>) -> bool {
    inject_from(&tracing::Span::current().context(), meta)
}

/// [`inject`] with the context `cx`.
pub fn inject_from(cx: &opentelemetry::Context, meta: &mut Map<String, Value>) -> bool {
    if meta.contains_key("traceparent") || !cx.span().span_context().is_valid() {
        return false;
    }
    let mut carrier = MetaMut(meta);
    TraceContextPropagator::new().inject_context(cx, &mut carrier);
    BaggagePropagator::new().inject_context(cx, &mut carrier);
    true
}

/// The trace context of `span` as W3C headers (`traceparent`, `tracestate`, `baggage`),
/// for a request to another service; none when tracing is off or `span` is not traced.
pub fn headers_of(span: &tracing::Span) -> Vec<(String, String)> {
    if !on() || span.is_disabled() {
        return Vec::new();
    }
    let mut meta = Map::new();
    inject_from(&span.context(), &mut meta);
    meta.into_iter()
        .filter_map(|(k, v)| Some((k, v.as_str()?.to_string())))
        .collect()
}

/// The current span's trace and span ids, as 32 and 16 hex digits, when tracing is on
/// and a span is current (for a log line).
pub fn current_ids() -> Option<(String, String)> {
    if !on() {
        return None;
    }
    let cx = tracing::Span::current().context();
    let span = cx.span();
    let sc = span.span_context();
    sc.is_valid()
        .then(|| (sc.trace_id().to_string(), sc.span_id().to_string()))
}

/// The current span's context as a `traceparent`, when tracing is on and a span is
/// current: what a later request links back to (a round's state, a task's record).
pub fn current_traceparent() -> Option<String> {
    traceparent_of_span(&tracing::Span::current())
}

/// `span`'s context as a `traceparent`, when tracing is on and it is traced.
pub fn traceparent_of_span(span: &tracing::Span) -> Option<String> {
    if !on() || span.is_disabled() {
        return None;
    }
    let cx = span.context();
    let span = cx.span();
    let sc = span.span_context();
    sc.is_valid().then(|| traceparent_of(sc))
}

/// Makes the span `traceparent` names the parent of `span` (made, not yet entered).
pub fn set_parent(span: &tracing::Span, traceparent: &str) {
    if let Some(sc) = parse_traceparent(traceparent) {
        let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(sc));
    }
}

/// Links the current span to the span `traceparent` names (a call an input round or a
/// task poll belongs to); nothing when tracing is off or the text is not one.
pub fn link_current(traceparent: &str) {
    link(&tracing::Span::current(), traceparent);
}

/// Links `span` to the span `traceparent` names.
pub fn link(span: &tracing::Span, traceparent: &str) {
    if !on() {
        return;
    }
    if let Some(sc) = parse_traceparent(traceparent) {
        span.add_link(sc);
    }
}

/// The span context that `traceparent` text names, for a link to a recorded call.
pub fn parse_traceparent(text: &str) -> Option<opentelemetry::trace::SpanContext> {
    let mut meta = Map::new();
    meta.insert("traceparent".into(), Value::String(text.to_string()));
    let cx = TraceContextPropagator::new().extract(&Meta(&meta));
    let sc = cx.span().span_context().clone();
    sc.is_valid().then_some(sc)
}

/// A `traceparent` for span context `sc`, sampled or not as it is.
pub fn traceparent_of(sc: &opentelemetry::trace::SpanContext) -> String {
    format!(
        "00-{}-{}-{:02x}",
        sc.trace_id(),
        sc.span_id(),
        sc.trace_flags().to_u8()
    )
}

/// The metrics of the MCP conventions (durations in seconds) and the project's own.
pub struct Instruments {
    /// `mcp.server.operation.duration`.
    pub server_operation: Histogram<f64>,
    /// `mcp.client.operation.duration`.
    pub client_operation: Histogram<f64>,
    /// `mcp.server.session.duration` (2025-11-25 sessions).
    pub server_session: Histogram<f64>,
    /// `mcp.client.session.duration`.
    pub client_session: Histogram<f64>,
    /// `structs.pow.hash_rate`: the last proof-of-work search's hashes a second.
    pub pow_hash_rate: Gauge<f64>,
    /// `structs.tasks.running`: MCP tasks working now.
    pub tasks_running: UpDownCounter<i64>,
    /// `structs.store.bytes`: the JSON size of the results the handle store holds.
    pub store_bytes: Gauge<u64>,
}

/// The histogram buckets the MCP conventions advise for durations, in seconds.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The instruments, when tracing is on (`None` otherwise, and nothing is recorded).
pub fn instruments() -> Option<&'static Instruments> {
    static MADE: OnceLock<Instruments> = OnceLock::new();
    if !on() {
        return None;
    }
    Some(MADE.get_or_init(|| {
        let meter = opentelemetry::global::meter("structs-console");
        let duration = |name: &'static str, what: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(what)
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build()
        };
        Instruments {
            server_operation: duration(
                "mcp.server.operation.duration",
                "How long the server took to answer an MCP request",
            ),
            client_operation: duration(
                "mcp.client.operation.duration",
                "How long an MCP request took from the client's side",
            ),
            server_session: duration("mcp.server.session.duration", "An MCP session's length"),
            client_session: duration("mcp.client.session.duration", "An MCP session's length"),
            pow_hash_rate: meter
                .f64_gauge("structs.pow.hash_rate")
                .with_unit("{hash}/s")
                .with_description("The last proof-of-work search's hashes a second")
                .build(),
            tasks_running: meter
                .i64_up_down_counter("structs.tasks.running")
                .with_unit("{task}")
                .with_description("MCP tasks working now")
                .build(),
            store_bytes: meter
                .u64_gauge("structs.store.bytes")
                .with_unit("By")
                .with_description("The JSON size of the results the handle store holds")
                .build(),
        }
    }))
}

struct Meta<'a>(&'a Map<String, Value>);

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

struct MetaMut<'a>(&'a mut Map<String, Value>);

impl Injector for MetaMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        if !value.is_empty() {
            self.0.insert(key.to_string(), Value::String(value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_requests_traceparent_is_the_parent_and_a_bad_one_is_none() {
        let mut meta = Map::new();
        meta.insert("traceparent".into(), PARENT.into());
        meta.insert("baggage".into(), "agent=alpha".into());
        let cx = extract(Some(&meta));
        let sc = cx.span().span_context().clone();
        assert_eq!(
            sc.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(sc.span_id().to_string(), "00f067aa0ba902b7");
        assert!(sc.is_remote() && sc.is_sampled());
        use opentelemetry::baggage::BaggageExt as _;
        assert_eq!(
            cx.baggage().get("agent").map(|v| v.to_string()),
            Some("alpha".into())
        );
        meta.insert("traceparent".into(), "00-zz-00f067aa0ba902b7-01".into());
        assert!(!extract(Some(&meta)).span().span_context().is_valid());
        assert!(!extract(None).span().span_context().is_valid());
    }

    #[test]
    fn a_context_is_written_where_none_is_and_one_present_is_kept() {
        let sc = SpanContext::new(
            TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").unwrap(),
            SpanId::from_hex("b7ad6b7169203331").unwrap(),
            TraceFlags::SAMPLED,
            false,
            TraceState::from_key_value([("vendor", "x")]).unwrap(),
        );
        let cx = opentelemetry::Context::new().with_remote_span_context(sc.clone());
        let mut meta = Map::new();
        assert!(inject_from(&cx, &mut meta));
        assert_eq!(
            meta["traceparent"],
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        );
        assert_eq!(meta["tracestate"], "vendor=x");
        assert!(!meta.contains_key("baggage"), "no baggage, no key");
        assert_eq!(traceparent_of(&sc), meta["traceparent"]);
        // Present: unchanged.
        let mut theirs = Map::new();
        theirs.insert("traceparent".into(), PARENT.into());
        assert!(!inject_from(&cx, &mut theirs));
        assert_eq!(theirs["traceparent"], PARENT);
        // No span: nothing written.
        let mut none = Map::new();
        assert!(!inject_from(&opentelemetry::Context::new(), &mut none));
        assert!(none.is_empty());
        assert_eq!(
            parse_traceparent(PARENT).map(|s| s.span_id().to_string()),
            Some("00f067aa0ba902b7".into())
        );
        assert!(parse_traceparent("junk").is_none());
    }
}
