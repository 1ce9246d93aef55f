//! What the telemetry tests read traces with: an OTLP/HTTP receiver written with the
//! official protobuf definitions (tests/otel/receiver.py), which writes each span and
//! metric point it gets as a JSON line, and the Python that runs it and the
//! instrumented agent (tests/otel/agent.py), and Arize Phoenix. `.ci/run` installs them
//! under `target/peers/otel-venv` and `target/peers/phoenix-venv` (two: the
//! instrumentation patches the MCP SDK's 1.x, Phoenix needs its 2.x);
//! `STRUCTS_OTEL_PYTHON` and `STRUCTS_PHOENIX_PYTHON` may name others. Outside CI a
//! missing one skips the tests with a note, under CI it fails them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::daemon::under_ci;

/// The Python with opentelemetry-proto, the SDK and its OTLP exporter, and Traceloop's
/// MCP instrumentation with the MCP SDK it patches (1.x).
pub fn python() -> Option<PathBuf> {
    installed(
        "STRUCTS_OTEL_PYTHON",
        "target/peers/otel-venv/bin/python",
        "import opentelemetry.proto, opentelemetry.instrumentation.mcp, mcp",
        "opentelemetry-proto, opentelemetry-instrumentation-mcp, mcp 1.x",
    )
}

/// The Python with Arize Phoenix.
pub fn phoenix_python() -> Option<PathBuf> {
    installed(
        "STRUCTS_PHOENIX_PYTHON",
        "target/peers/phoenix-venv/bin/python",
        "import phoenix",
        "arize-phoenix",
    )
}

/// The Python `variable` names, else `default` under the project, when `check` runs
/// in it; else a note (a panic under CI) naming `what` it lacks.
fn installed(variable: &str, default: &str, check: &str, what: &str) -> Option<PathBuf> {
    let python = std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(default));
    let ready = python.is_file()
        && Command::new(&python)
            .args(["-c", check])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if ready {
        return Some(python);
    }
    let note = format!(
        "the OpenTelemetry peers are not installed at {} ({what}); .ci/run installs them, \
         or set {variable}",
        python.display()
    );
    assert!(!under_ci(), "{note}");
    eprintln!("skipped: {note}");
    None
}

/// A folder of the test's own, emptied first.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("structs-otel-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// The receiver, running until dropped.
pub struct Collector {
    child: Child,
    /// Its base URL, as `--otlp` takes it.
    pub url: String,
    out: PathBuf,
}

impl Collector {
    pub fn start(python: &Path, dir: &Path) -> Collector {
        let port_file = dir.join("collector.port");
        let out = dir.join("collector.jsonl");
        let child = Command::new(python)
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/otel/receiver.py"
            ))
            .arg(&port_file)
            .arg(&out)
            .stdin(Stdio::null())
            .spawn()
            .expect("start the OTLP receiver");
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                break port;
            }
            assert!(Instant::now() < deadline, "the receiver did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Collector {
            child,
            url: format!("http://127.0.0.1:{}", port.trim()),
            out,
        }
    }

    /// Every line received so far.
    pub fn lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The spans received so far.
    pub fn spans(&self) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|l| l["signal"] == "span")
            .collect()
    }

    /// The metric points received so far.
    pub fn metrics(&self) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|l| l["signal"] == "metric")
            .collect()
    }

    /// The spans, once `ready` holds of them (within 30 s, else a panic naming `what`).
    pub fn spans_when(&self, what: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let spans = self.spans();
            if ready(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not received within 30 s; received {}",
                serde_json::to_string_pretty(&spans).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The span named `name` (the first), or a panic listing the names there are.
pub fn named<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    spans
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no span {name:?} among {:?}", names(spans)))
}

/// The names of `spans`.
pub fn names(spans: &[Value]) -> Vec<String> {
    spans
        .iter()
        .map(|s| s["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The span whose id is `id`.
pub fn by_id<'a>(spans: &'a [Value], id: &str) -> Option<&'a Value> {
    spans.iter().find(|s| s["span_id"] == id)
}

/// Whether `ancestor` is `span`'s parent, or its parent's, and so on.
pub fn descends(spans: &[Value], span: &Value, ancestor: &Value) -> bool {
    let mut at = span;
    for _ in 0..64 {
        let parent = at["parent_span_id"].as_str().unwrap_or_default();
        if parent.is_empty() {
            return false;
        }
        if parent == ancestor["span_id"] {
            return true;
        }
        match by_id(spans, parent) {
            Some(p) => at = p,
            None => return false,
        }
    }
    false
}

/// Arize Phoenix, started by the test (`phoenix serve`), running until dropped.
pub struct Phoenix {
    child: Child,
    /// Its base URL: OTLP/HTTP on `/v1/traces`, its REST API on `/v1/projects/…`.
    pub url: String,
    /// Its OTLP/gRPC endpoint.
    pub grpc: String,
}

impl Phoenix {
    /// Starts Phoenix with `python` (its venv's), keeping its database in `dir`, and
    /// waits until it is ready (`/readyz`).
    pub fn start(python: &Path, dir: &Path) -> Phoenix {
        let port = super::daemon::free_port();
        let grpc = super::daemon::free_port();
        let log = std::fs::File::create(dir.join("phoenix.log")).expect("a log");
        let child = Command::new(python)
            .args(["-m", "phoenix.server.main", "serve"])
            .env("PHOENIX_WORKING_DIR", dir)
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start phoenix");
        let phoenix = Phoenix {
            child,
            url: format!("http://127.0.0.1:{port}"),
            grpc: format!("http://127.0.0.1:{grpc}"),
        };
        let deadline = Instant::now() + Duration::from_secs(180);
        while super::cluster::http_status(&format!("{}/readyz", phoenix.url)) != Some(200) {
            assert!(
                Instant::now() < deadline,
                "Phoenix was not ready within 3 minutes: {}",
                std::fs::read_to_string(dir.join("phoenix.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        phoenix
    }

    /// Every span of trace `trace` Phoenix holds in its default project, through its
    /// REST API, page by page.
    pub fn trace(&self, trace: &str) -> Vec<Value> {
        let client = reqwest::blocking::Client::new();
        let mut spans = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..50 {
            let mut url = format!("{}/v1/projects/default/spans?limit=500", self.url);
            if let Some(c) = &cursor {
                url.push_str(&format!("&cursor={c}"));
            }
            let Ok(page) = client.get(&url).send().and_then(|r| r.json::<Value>()) else {
                return spans;
            };
            if let Some(data) = page["data"].as_array() {
                spans.extend(
                    data.iter()
                        .filter(|s| s["context"]["trace_id"] == trace)
                        .cloned(),
                );
            }
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        spans
    }

    /// Trace `trace`'s spans once `ready` holds of them (within 60 s).
    pub fn trace_when(&self, trace: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let spans = self.trace(trace);
            if ready(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "trace {trace} in Phoenix: {}",
                serde_json::to_string_pretty(&spans).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
