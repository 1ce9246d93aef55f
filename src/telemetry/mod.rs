//! OpenTelemetry export: traces and metrics over OTLP, on when `--otlp URL` or the
//! standard variables ask for it, and absent otherwise.
//!
//! [`Settings::read`] decides from the flag and the environment
//! (`OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`, `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`,
//! `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER`); the SDK itself reads
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER[_ARG]` and the
//! exporter's headers and timeout. [`Telemetry::start`] builds the exporters and the
//! providers, and [`Telemetry::layer`] is the `tracing` layer that turns the spans of
//! [`crate::context::trace::TARGET`] into OpenTelemetry spans.
//!
//! Spans leave through [`export::Queue`]: a bounded queue and a thread of its own, so a
//! call never waits on the collector. What cannot be sent (a full queue, a collector
//! that does not answer) is dropped and counted, and said once in the log.

pub mod export;

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::filter::{Filtered, Targets};
use tracing_subscriber::registry::LookupSpan;

use crate::context::trace;
pub use export::Drops;

/// The service name spans carry unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES`
/// gives one.
pub const SERVICE_NAME: &str = "structs-console";

/// How long an exit waits for the last spans to be sent, and for the last metrics.
const SHUTDOWN_SPANS: Duration = Duration::from_secs(5);
const SHUTDOWN_METRICS: Duration = Duration::from_secs(3);

/// How often metrics are sent, unless `OTEL_METRIC_EXPORT_INTERVAL` (milliseconds) says.
const METRIC_INTERVAL: Duration = Duration::from_secs(10);

/// The OTLP transports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`, the default.
    HttpProtobuf,
    /// `grpc` (the `otlp-grpc` feature).
    Grpc,
}

/// Where and how spans and metrics go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The traces' endpoint, whole (`…/v1/traces` over HTTP).
    pub traces: String,
    /// The metrics' endpoint, whole.
    pub metrics: String,
    pub protocol: Protocol,
    /// Tool arguments and results on the spans (`--otlp-content`), redacted as a
    /// recording is.
    pub content: bool,
}

impl Settings {
    /// The settings `--otlp` (`flag`, a collector's base URL as
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` takes it) and the environment (`env`) give, or
    /// `None` when tracing stays off: no endpoint, `OTEL_SDK_DISABLED=true` or
    /// `OTEL_TRACES_EXPORTER=none` (the flag wins over both).
    ///
    /// # Errors
    ///
    /// A protocol this build cannot speak, or an endpoint that is not an http(s) URL.
    pub fn read(
        flag: Option<&str>,
        content: bool,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Settings>, String> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if let Some(url) = flag.filter(|u| !(u.starts_with("http://") || u.starts_with("https://")))
        {
            return Err(format!(
                "--otlp {url:?} is not an http:// or https:// URL (a collector's base URL, \
                 http://localhost:4318)"
            ));
        }
        if flag.is_none()
            && (var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
                || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim() == "none"))
        {
            return Ok(None);
        }
        let protocol = match var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .as_deref()
            .map(str::trim)
        {
            None | Some("http/protobuf") => Protocol::HttpProtobuf,
            Some("grpc") if cfg!(feature = "otlp-grpc") => Protocol::Grpc,
            Some("grpc") => {
                return Err(
                    "OTLP over grpc is not in this build (the otlp-grpc feature); \
                            use OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"
                        .into(),
                );
            }
            Some(other) => {
                return Err(format!(
                    "OTEL_EXPORTER_OTLP_PROTOCOL={other:?} is not spoken here; use \
                     http/protobuf or grpc"
                ));
            }
        };
        let signal = |name: &str, path: &str| -> Option<String> {
            let base = match flag {
                Some(url) => url.to_string(),
                None => match var(name) {
                    Some(whole) => return Some(whole.trim().to_string()),
                    None => var("OTEL_EXPORTER_OTLP_ENDPOINT")?.trim().to_string(),
                },
            };
            Some(match protocol {
                Protocol::Grpc => base,
                Protocol::HttpProtobuf => format!("{}/{path}", base.trim_end_matches('/')),
            })
        };
        let Some(traces) = signal("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "v1/traces") else {
            return Ok(None);
        };
        let metrics = signal("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "v1/metrics")
            .unwrap_or_else(|| traces.clone());
        for url in [&traces, &metrics] {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "the OTLP endpoint {url:?} is not an http:// or https:// URL"
                ));
            }
        }
        Ok(Some(Settings {
            traces,
            metrics,
            protocol,
            content,
        }))
    }

    /// [`Settings::read`] from the process's environment.
    ///
    /// # Errors
    ///
    /// As [`Settings::read`].
    pub fn from_env(flag: Option<&str>, content: bool) -> Result<Option<Settings>, String> {
        Settings::read(flag, content, |name| std::env::var(name).ok())
    }
}

/// Traces and metrics being exported; [`Telemetry::shutdown`] (or dropping it) sends
/// what is left.
pub struct Telemetry {
    settings: Settings,
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    drops: Arc<Drops>,
    /// The gRPC exporters' runtime, kept while they live.
    _grpc: Option<tokio::runtime::Runtime>,
}

impl Telemetry {
    /// Builds the exporters and providers `settings` describe and says that tracing is
    /// on ([`trace::set_on`]). Nothing is sent until a span ends.
    ///
    /// # Errors
    ///
    /// An exporter that cannot be built (an endpoint the HTTP client refuses).
    pub fn start(settings: Settings) -> anyhow::Result<Telemetry> {
        // The HTTP client's TLS, as the other clients of the process install it.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let resource = resource();
        let drops = Arc::new(Drops::new(settings.traces.clone()));
        let grpc = (settings.protocol == Protocol::Grpc)
            .then(|| {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("otlp-grpc")
                    .enable_all()
                    .build()
            })
            .transpose()?;
        let driver = export::Driver::new(grpc.as_ref().map(|rt| rt.handle().clone()));
        let _entered = grpc.as_ref().map(|rt| rt.enter());
        let (mut spans, metrics) = exporters(&settings)?;
        opentelemetry_sdk::trace::SpanExporter::set_resource(&mut spans, &resource);
        let queue = export::Queue::spawn(spans, driver.clone(), drops.clone())?;
        let tracer = SdkTracerProvider::builder()
            .with_span_processor(queue)
            .with_resource(resource.clone())
            .build();
        let interval = std::env::var("OTEL_METRIC_EXPORT_INTERVAL")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map_or(METRIC_INTERVAL, Duration::from_millis);
        let reader = opentelemetry_sdk::metrics::PeriodicReader::builder(export::Counted::new(
            metrics,
            driver,
            drops.clone(),
        ))
        .with_interval(interval)
        .build();
        let meter = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_meter_provider(meter.clone());
        trace::set_content(settings.content);
        trace::set_on();
        Ok(Telemetry {
            settings,
            tracer,
            meter,
            drops,
            _grpc: grpc,
        })
    }

    /// The `tracing` layer that exports the spans of [`trace::TARGET`] (and no others).
    pub fn layer<S>(&self) -> Filtered<TraceLayer<S>, Targets, S>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        use tracing_subscriber::Layer as _;
        // Only the conventions' attributes: not the source line, thread or busy time of
        // every span, which cost bytes on each and say nothing to a trace's reader.
        tracing_opentelemetry::layer()
            .with_tracer(self.tracer.tracer(SERVICE_NAME))
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_target(false)
            .with_filter(Targets::new().with_target(trace::TARGET, tracing::Level::TRACE))
    }

    /// Where spans go.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// What was dropped so far.
    pub fn drops(&self) -> Arc<Drops> {
        self.drops.clone()
    }

    /// Sends what is queued and stops the exporters, waiting at most a few seconds; says
    /// in the log how many spans were dropped in all, if any.
    pub fn shutdown(self) {
        let _ = self.tracer.shutdown_with_timeout(SHUTDOWN_SPANS);
        let _ = self.meter.shutdown_with_timeout(SHUTDOWN_METRICS);
        self.drops.say_total();
    }
}

/// The `tracing` layer [`Telemetry::layer`] filters.
pub type TraceLayer<S> =
    tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::SdkTracer>;

/// The resource every span and metric carries: the SDK's (the environment's service
/// name and attributes), named [`SERVICE_NAME`] when the environment names no service.
fn resource() -> Resource {
    let env = Resource::builder().build();
    let named = env
        .get(&opentelemetry::Key::new("service.name"))
        .is_some_and(|v| !v.as_str().starts_with("unknown_service"));
    if named {
        env
    } else {
        Resource::builder().with_service_name(SERVICE_NAME).build()
    }
}

/// The span and metric exporters `settings` name. A gRPC one is built inside the runtime
/// that drives it (the caller entered it).
fn exporters(
    settings: &Settings,
) -> anyhow::Result<(
    opentelemetry_otlp::SpanExporter,
    opentelemetry_otlp::MetricExporter,
)> {
    use opentelemetry_otlp::{MetricExporter, SpanExporter};
    match settings.protocol {
        Protocol::HttpProtobuf => {
            let client = || {
                reqwest::blocking::Client::builder()
                    .timeout(Duration::from_secs(10))
                    .build()
            };
            Ok((
                SpanExporter::builder()
                    .with_http()
                    .with_http_client(client()?)
                    .with_endpoint(&settings.traces)
                    .build()?,
                MetricExporter::builder()
                    .with_http()
                    .with_http_client(client()?)
                    .with_endpoint(&settings.metrics)
                    .build()?,
            ))
        }
        #[cfg(feature = "otlp-grpc")]
        Protocol::Grpc => Ok((
            SpanExporter::builder()
                .with_tonic()
                .with_endpoint(&settings.traces)
                .build()?,
            MetricExporter::builder()
                .with_tonic()
                .with_endpoint(&settings.metrics)
                .build()?,
        )),
        #[cfg(not(feature = "otlp-grpc"))]
        Protocol::Grpc => anyhow::bail!("OTLP over grpc is not in this build"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(flag: Option<&str>, vars: &[(&str, &str)]) -> Result<Option<Settings>, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        Settings::read(flag, false, |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn off_without_an_endpoint_and_when_the_environment_says_so() {
        assert_eq!(read(None, &[]), Ok(None));
        let on = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")];
        assert!(read(None, &on).unwrap().is_some());
        for off in [
            ("OTEL_SDK_DISABLED", "true"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ] {
            assert_eq!(read(None, &[on[0], off]), Ok(None), "{off:?}");
            assert!(read(Some("http://c:4318"), &[off]).unwrap().is_some());
        }
    }

    #[test]
    fn the_flag_and_the_base_endpoint_take_the_signals_paths_and_a_signals_own_is_whole() {
        let s = read(Some("http://c:4318/"), &[]).unwrap().unwrap();
        assert_eq!(s.traces, "http://c:4318/v1/traces");
        assert_eq!(s.metrics, "http://c:4318/v1/metrics");
        assert_eq!(s.protocol, Protocol::HttpProtobuf);
        let s = read(
            None,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9/x"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.traces, "http://t:9/x");
        assert_eq!(s.metrics, "http://c:4318/v1/metrics");
        let s = read(
            None,
            &[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9/x"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            s.metrics, "http://t:9/x",
            "no metrics endpoint: the traces'"
        );
    }

    #[test]
    fn grpc_takes_the_endpoint_as_it_is_and_other_protocols_are_refused() {
        let grpc = read(
            Some("http://c:4317"),
            &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
        );
        if cfg!(feature = "otlp-grpc") {
            let s = grpc.unwrap().unwrap();
            assert_eq!(
                (s.protocol, s.traces.as_str()),
                (Protocol::Grpc, "http://c:4317")
            );
        } else {
            assert!(grpc.unwrap_err().contains("otlp-grpc"));
        }
        let json = read(
            Some("http://c:4318"),
            &[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")],
        );
        assert!(json.unwrap_err().contains("http/json"));
        assert!(
            read(Some("c:4318"), &[])
                .unwrap_err()
                .contains("not an http")
        );
    }
}
