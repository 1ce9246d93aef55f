//! MCP logging: `logging/setLevel` per client and the `notifications/message` that tool
//! work sends, through rmcp's client talking to the server over an in-memory pipe (one
//! server per client, as each HTTP session has).

#![allow(deprecated)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use structs_console::handles::HandleConfig;
use structs_console::mcp::server::McpServer;
use structs_console::source::sim::WorldConfig;

/// A client that keeps every log message.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<LoggingMessageNotificationParam>>>);

impl ClientHandler for Log {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

impl Log {
    fn from(&self, logger: &str) -> Vec<LoggingMessageNotificationParam> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m.logger.as_deref() == Some(logger))
            .cloned()
            .collect()
    }

    /// Waits up to 3 s for a message of `logger` whose text contains `says`.
    async fn wait_for(&self, logger: &str, says: &str) -> bool {
        for _ in 0..60 {
            if self
                .from(logger)
                .iter()
                .any(|m| m.data["message"].as_str().is_some_and(|t| t.contains(says)))
            {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }
}

type Client = RunningService<RoleClient, Log>;

/// A client of `server` over an in-memory pipe.
async fn client_of(server: McpServer) -> (Client, Log) {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let log = Log::default();
    let client = log.clone().serve(client_io).await.expect("initialize");
    (client, log)
}

fn server(handles: HandleConfig) -> McpServer {
    let source = Arc::new(support::sim::paused(WorldConfig::with_players(200)));
    let core = structs_console::assembly::builder(source)
        .handles(handles)
        .build()
        .unwrap();
    McpServer::new(core, Arc::new(structs_console::docs::Docs::embedded()))
}

async fn call(client: &Client, tool: &str, args: Value) -> (Value, bool) {
    let Value::Object(args) = args else { panic!() };
    let r = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .expect("tools/call");
    (
        r.structured_content.unwrap_or(Value::Null),
        r.is_error == Some(true),
    )
}

async fn set_level(client: &Client, level: LoggingLevel) {
    client
        .set_level(SetLevelRequestParams::new(level))
        .await
        .expect("logging/setLevel");
}

/// A proof-of-work search (of a given difficulty, so nothing is read): its start and
/// its end are info.
async fn prove(client: &Client) {
    let (proof, failed) = call(
        client,
        "structs_calculate_proof_of_work",
        json!({"action_type": "struct_build_complete", "entity_id": "5-1",
               "difficulty": 700, "block_start": 1, "age": 600}),
    )
    .await;
    assert!(!failed, "{proof}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_gets_messages_at_its_own_level() {
    let base = server(HandleConfig::default());
    let caps = {
        let (client, _) = client_of(base.for_new_client()).await;
        let caps = client.peer_info().unwrap().capabilities.clone();
        client.cancel().await.unwrap();
        caps
    };
    assert!(caps.logging.is_some(), "logging is declared");

    let (chatty, chatty_log) = client_of(base.for_new_client()).await;
    let (quiet, quiet_log) = client_of(base.for_new_client()).await;
    let (unset, unset_log) = client_of(base.for_new_client()).await;
    set_level(&chatty, LoggingLevel::Info).await;
    set_level(&quiet, LoggingLevel::Error).await;
    for c in [&chatty, &quiet, &unset] {
        prove(c).await;
    }
    assert!(
        chatty_log
            .wait_for(
                "structs.pow",
                "searching for the struct_build_complete proof"
            )
            .await,
        "{:?}",
        chatty_log.0.lock().unwrap()
    );
    assert!(chatty_log.wait_for("structs.pow", "found nonce").await);
    let found = chatty_log
        .from("structs.pow")
        .into_iter()
        .find(|m| m.data["message"].as_str().unwrap().contains("found nonce"))
        .unwrap();
    assert_eq!(found.level, LoggingLevel::Info);
    assert!(found.data["iterations"].as_u64().unwrap() >= 1);
    // Error and the default (warning) both hold info back.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(quiet_log.0.lock().unwrap().is_empty());
    assert!(unset_log.0.lock().unwrap().is_empty());
    for c in [chatty, quiet, unset] {
        c.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evicted_handle_is_a_warning_to_the_client_whose_call_made_room() {
    // A 1 MB memory store, filled by full pages of 100 players.
    let base = server(HandleConfig {
        memory_limit_mb: 1,
        ..HandleConfig::default()
    });
    let (client, log) = client_of(base.for_new_client()).await;
    let mut handles = Vec::new();
    for _ in 0..40 {
        let (page, failed) = call(
            &client,
            "structs_list_players",
            json!({"page_size": 100, "verbosity": "detailed"}),
        )
        .await;
        assert!(!failed, "{page}");
        handles.push(page["result_handle"].as_str().expect("stored").to_string());
        if !log.from("structs.handles").is_empty() {
            break;
        }
    }
    assert!(
        log.wait_for("structs.handles", "was dropped to make room")
            .await
    );
    let evicted = &log.from("structs.handles")[0];
    assert_eq!(evicted.level, LoggingLevel::Warning);
    let handle = evicted.data["handle"].as_str().unwrap();
    assert_eq!(handle, handles[0], "the oldest goes first");
    // And fetching it says so.
    let (answer, failed) = call(&client, "structs_handle_fetch", json!({"handle": handle})).await;
    assert!(failed);
    assert_eq!(answer["error"]["code"], "RESOURCE_NOT_FOUND");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_is_throttled_with_a_notice_of_what_was_dropped() {
    use structs_console::context::log::Level;
    use structs_console::mcp::server::logging::{BURST, PER_SECOND};

    let base = server(HandleConfig::default());
    let (client, log) = client_of(base.clone()).await;
    set_level(&client, LoggingLevel::Debug).await;
    // Make the server's side send: a call connects the sender, then the test floods
    // the same client log the server's calls write to.
    let sink = base.client_log();
    for i in 0..500 {
        sink.send(
            Level::Info,
            "test.flood",
            json!({"message": format!("n{i}")}),
        );
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let got = log.from("test.flood").len();
    assert!(
        got as f64 >= BURST && (got as f64) <= BURST + PER_SECOND,
        "{got} of 500 passed"
    );
    // After a pause, the next message is preceded by the count of those dropped.
    tokio::time::sleep(Duration::from_millis(200)).await;
    sink.send(Level::Info, "test.flood", json!({"message": "after"}));
    assert!(
        log.wait_for("structs.log", "log messages were dropped")
            .await
    );
    let notice = &log.from("structs.log")[0];
    let dropped = notice.data["dropped"].as_u64().unwrap();
    assert_eq!(
        dropped as usize + got,
        500,
        "every message is sent or counted"
    );
    assert!(log.wait_for("test.flood", "after").await);
    client.cancel().await.unwrap();
}
