//! What each fuzz target checks, one function per target taking the raw input. The
//! targets in `fuzz_targets/` call these under libFuzzer; `tests/fuzz_regressions.rs`
//! calls them on the seeds and on every input that once failed, in `cargo test`.

#![allow(dead_code)]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use structs_console::Core;
use structs_console::EntityId;
use structs_console::docs::front::{parse, split};
use structs_console::handles::{LIMIT, Request};
use structs_console::mcp::server::McpServer;
use structs_console::plan::template::{Part, Template, walk};
use structs_console::source::sim::SimSource;
use structs_console::store::MemoryStore;
use tokio::io::AsyncWriteExt;

/// One runtime for every input (two workers, like the machine).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
    })
}

/// The memory handle store's limit in the fuzzed core: small, so that a run reaches it
/// often and any result it keeps past it shows.
pub const FUZZ_STORE_LIMIT: usize = 4 << 20;

/// The handle store of [`core`].
fn store() -> &'static Arc<MemoryStore> {
    static STORE: OnceLock<Arc<MemoryStore>> = OnceLock::new();
    STORE.get_or_init(|| Arc::new(MemoryStore::with_limit(FUZZ_STORE_LIMIT)))
}

/// One demo-world core for every input.
fn core() -> &'static Core {
    static CORE: OnceLock<Core> = OnceLock::new();
    CORE.get_or_init(|| {
        structs_console::assembly::builder(Arc::new(SimSource::demo()))
            .handle_store(store().clone())
            .build()
            .expect("the fuzz core")
    })
}

/// The entity-id parser: any text is an id or a refusal, never a panic, and an id
/// prints back to text that parses to the same id.
pub fn entity_id(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(id) = text.parse::<EntityId>() {
        let again: EntityId = id.to_string().parse().expect("a printed id parses");
        assert_eq!(again, id);
    }
}

/// The step-reference parser and resolver: the first line is a parameter string; it
/// parses to a template or a syntax error with an offset inside the string, and every
/// reference walks the rest of the input (when it is JSON, else a fixed step view) to
/// a value or a named missing part.
pub fn step_reference(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (param, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let value: Value = serde_json::from_str(rest).unwrap_or_else(|_| {
        json!({"success": true, "data": {"players": [{"Player": {"id": "1-1"}}], "n": 3},
               "error": null})
    });
    match Template::parse(param) {
        Ok(Some(template)) => {
            for part in &template.parts {
                if let Part::Ref(reference) = part {
                    for skip in 0..3 {
                        let _ = walk(reference, &value, skip, &mut Vec::new());
                    }
                }
            }
        }
        Ok(None) => {}
        Err(e) => assert!(e.at <= param.len(), "offset {} past {}", e.at, param.len()),
    }
}

/// Front matter: any file text splits into YAML and body, the pieces lie inside the
/// text, and the YAML parses to metadata or an error.
pub fn front_matter(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parts = split(text);
    if let Some(range) = &parts.yaml_range {
        assert!(range.end <= text.len());
        assert_eq!(Some(&text[range.clone()]), parts.yaml);
    }
    assert!(parts.body.len() <= text.len());
    if let Some(yaml) = parts.yaml {
        let _ = parse(yaml, "fuzz/doc");
    }
}

const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

/// The message limit of the server [`jsonrpc_stdin`] fuzzes.
pub const FUZZ_MESSAGE_LIMIT: usize = 600;

/// The JSON-RPC input path: after a valid handshake, the input on the server's stdin
/// side, read by the stdio transport the headless server uses. The server answers,
/// refuses or closes, never panics, and ends within 20 s of its input closing.
pub fn jsonrpc_stdin(data: &[u8]) {
    let input = data.to_vec();
    runtime().block_on(async move {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_end);
        // A small message limit, so lines over it (dropped, answered under the id
        // found in their first bytes) are as common as lines under it.
        let server = tokio::spawn(structs_console::mcp::server::stdio::serve(
            McpServer::new(
                core().clone(),
                Arc::new(structs_console::docs::Docs::embedded()),
            ),
            server_read,
            server_write,
            FUZZ_MESSAGE_LIMIT,
        ));
        let (mut from_server, mut to_server) = tokio::io::split(client_end);
        // Read (and drop) whatever the server answers, so it never blocks on writing.
        let reader = tokio::spawn(async move {
            let _ = tokio::io::copy(&mut from_server, &mut tokio::io::sink()).await;
        });
        let _ = to_server.write_all(HANDSHAKE.as_bytes()).await;
        let _ = to_server.write_all(&input).await;
        let _ = to_server.write_all(b"\n").await;
        let _ = to_server.shutdown().await;
        let ended = tokio::time::timeout(Duration::from_secs(20), server)
            .await
            .expect("the server ends within 20 s of its input closing");
        if let Err(e) = ended {
            assert!(!e.is_panic(), "the server panicked: {e}");
        }
        reader.abort();
    });
}

/// The response builder's limit: any result with any shaping options
/// (`{"options": {...}, "value": ...}`, or any JSON as the value) leaves the core at
/// 25,600 bytes or less, whole, shaped or as a handle envelope, or as an error.
pub fn response_limit(data: &[u8]) {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let (mut options, value) = match input {
        Value::Object(mut o) if o.contains_key("value") => (
            o.remove("options").unwrap_or(Value::Null),
            o.remove("value").unwrap_or(Value::Null),
        ),
        other => (Value::Null, other),
    };
    let request = Request::take(&mut options);
    let out = runtime().block_on(core().handles().finish("structs_fuzz", &request, value));
    if let Ok(v) = out {
        let size = serde_json::to_vec(&v).expect("serializes").len();
        assert!(size <= LIMIT, "{size} bytes left the core");
    }
    // What the store keeps stays within its limit however many results came before (one
    // result larger than the limit on its own is kept alone; from an input of at most a
    // few KB it cannot be, and 4x the input bounds its JSON generously).
    let held = store().bytes();
    assert!(
        held <= FUZZ_STORE_LIMIT.max(4 * data.len()),
        "the handle store holds {held} bytes"
    );
}
