//! The headless server for real: spawns the built binary and drives it over stdio with
//! rmcp's client, as an agent would.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

fn args(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(o) => o,
        _ => panic!("arguments must be an object"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_list_call_and_reject_bad_arguments() {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"]);
    let transport = TokioChildProcess::new(cmd).expect("spawn structs-console --headless");
    let client = ().serve(transport).await.expect("initialize");

    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("structs-console")
    );
    assert!(info.capabilities.tools.is_some());

    // tools/list carries every tool with its input schema.
    let tools = client.list_all_tools().await.expect("tools/list");
    let player = tools
        .iter()
        .find(|t| t.name == "structs_query_player")
        .expect("structs_query_player is listed");
    assert_eq!(player.input_schema["required"], json!(["player_id"]));
    assert_eq!(
        player.input_schema["properties"]["player_id"]["pattern"],
        "^[0-9]+-[0-9]+$"
    );
    assert!(tools.len() >= 13, "{} tools", tools.len());

    // A query: JSON as text and as structuredContent.
    let result = client
        .call_tool(
            CallToolRequestParams::new("structs_query_player")
                .with_arguments(args(json!({"player_id": "1-1"}))),
        )
        .await
        .expect("tools/call");
    assert_eq!(result.is_error, Some(false));
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    assert_eq!(structured["player"]["Player"]["id"], "1-1");
    let text = result.content[0]
        .as_text()
        .expect("text content")
        .text
        .clone();
    let parsed: Value = serde_json::from_str(&text).expect("text is JSON");
    assert_eq!(parsed, structured);

    // Bad arguments: isError with the error object naming the field.
    let result = client
        .call_tool(
            CallToolRequestParams::new("structs_query_player")
                .with_arguments(args(json!({"player_id": "2-1"}))),
        )
        .await
        .expect("a failed tool is still a tools/call result");
    assert_eq!(result.is_error, Some(true));
    let error = &result.structured_content.expect("error object")["error"];
    assert_eq!(error["code"], "VALIDATION_WRONG_ENTITY_TYPE");
    assert_eq!(error["details"]["field"], "player_id");

    let result = client
        .call_tool(
            CallToolRequestParams::new("structs_list_players")
                .with_arguments(args(json!({"page_size": 1000}))),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        result.structured_content.unwrap()["error"]["code"],
        "VALIDATION_OUT_OF_RANGE"
    );

    // Unknown tool: a protocol error (-32602) carrying the error object, and the server
    // keeps serving.
    let refused = client
        .call_tool(CallToolRequestParams::new("structs_fly_to_the_moon"))
        .await
        .unwrap_err();
    let rmcp::service::ServiceError::McpError(e) = refused else {
        panic!("{refused:?}")
    };
    assert_eq!(e.code.0, -32602);
    assert_eq!(e.data.unwrap()["error"]["code"], "TOOL_NOT_FOUND");
    let result = client
        .call_tool(
            CallToolRequestParams::new("structs_query_entity")
                .with_arguments(args(json!({"id": "0-1"}))),
        )
        .await
        .unwrap();
    assert_eq!(
        result.structured_content.unwrap()["entity"]["Guild"]["id"],
        "0-1"
    );

    client.cancel().await.expect("clean shutdown");
}

#[test]
fn the_console_without_a_terminal_points_to_headless() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run structs-console");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--headless"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_command_line_values_are_refused_clearly() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["--headless", "--world-size", "0"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run structs-console");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("world-size"), "{stderr}");
}

/// Raw JSON-RPC lines, some of them garbage: the server answers what it can and keeps
/// serving the well-formed requests that follow.
#[test]
fn garbage_on_stdin_does_not_stop_the_server() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let mut child = Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["--headless", "--paused", "--log-level", "error"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn headless server");
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "{not json at all",
        "[1,2,3]",
        "\u{0}\u{1}binary\u{7f}",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"structs_query_player","arguments":"not an object"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"structs_query_player","arguments":{"player_id":"1-99999999999999999999999"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"structs_query_guild","arguments":{"guild_id":"0-2"}}}"#,
    ];
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();

    // Read answers until ids 3 and 4 have both come back (bounded by a deadline).
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut by_id = std::collections::HashMap::new();
    while !(by_id.contains_key(&3) && by_id.contains_key(&4)) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = rx.recv_timeout(left).expect("the server stopped answering");
        let v: Value = serde_json::from_str(&line).expect("every line out is JSON");
        if let Some(id) = v["id"].as_u64() {
            by_id.insert(id, v);
        }
    }
    drop(stdin);
    let _ = child.wait();

    let overflow = &by_id[&3]["result"];
    assert_eq!(overflow["isError"], true);
    assert_eq!(
        overflow["structuredContent"]["error"]["code"],
        "VALIDATION_INVALID_FORMAT"
    );
    assert_eq!(
        by_id[&4]["result"]["structuredContent"]["guild"]["Guild"]["id"],
        "0-2"
    );
}

/// References over MCP: asked for by a call, and switched on for every call by the
/// server's configuration file and flags.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_over_mcp_by_argument_and_by_configuration() {
    let dir = std::env::temp_dir().join(format!("structs-console-refs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[references]\ninclude_references = true\n\n[references.tools.structs_query_guild]\nenabled = false\n",
    )
    .unwrap();

    // A plain server: references only when a call asks.
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"]);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let player = tools
        .iter()
        .find(|t| t.name == "structs_query_player")
        .unwrap();
    assert!(player.input_schema["properties"]["include_references"].is_object());
    let call = |args_v: Value| {
        CallToolRequestParams::new("structs_query_player").with_arguments(args(args_v))
    };
    let plain = client
        .call_tool(call(json!({"player_id": "1-1"})))
        .await
        .unwrap();
    assert!(
        plain
            .structured_content
            .unwrap()
            .get("references")
            .is_none()
    );
    let with = client
        .call_tool(call(
            json!({"player_id": "1-1", "include_references": true}),
        ))
        .await
        .unwrap();
    assert_eq!(with.is_error, Some(false));
    let v = with.structured_content.unwrap();
    let planet = v["player"]["Player"]["planetId"].as_str().unwrap();
    assert_eq!(v["references"][planet]["Planet"]["id"], planet);
    assert_eq!(v["references"][planet]["referenced_from"], "planetId");
    assert_eq!(v["references_summary"]["status"], "complete");
    let text: Value = serde_json::from_str(&with.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(text, v, "the text content carries the references too");
    client.cancel().await.unwrap();

    // A configured server: on by default, depth 2 from the flag, off for guild queries.
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args([
        "--headless",
        "--paused",
        "--log-level",
        "warn",
        "--reference-depth",
        "2",
    ]);
    cmd.args(["--no-references-for", "structs_list_structs"]);
    cmd.arg("--config").arg(&config);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let v = client
        .call_tool(call(json!({"player_id": "1-1"})))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(v["references_summary"]["depth"], 2);
    assert!(
        v["references"]
            .as_object()
            .unwrap()
            .values()
            .any(|r| r["depth"] == 2)
    );
    let guild = client
        .call_tool(
            CallToolRequestParams::new("structs_query_guild")
                .with_arguments(args(json!({"guild_id": "0-1"}))),
        )
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(guild["references_summary"]["status"], "disabled");
    let structs = client
        .call_tool(
            CallToolRequestParams::new("structs_list_structs")
                .with_arguments(args(json!({"page_size": 2, "include_references": true}))),
        )
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(structs["references_summary"]["status"], "disabled");
    client.cancel().await.unwrap();

    // A broken configuration stops the server before it serves, saying what is wrong.
    std::fs::write(&config, "[references]\nreference_depth = 4\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["--headless"])
        .arg("--config")
        .arg(&config)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("reference_depth"), "{stderr}");

    // A flag naming a tool that does not exist is refused the same way.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["--headless", "--no-references-for", "structs_query_plaent"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("structs_query_plaent"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A result over 25 KB over MCP: an envelope with a resource link, and the stored
/// result readable page by page with resources/read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_results_are_handles_readable_as_resources() {
    use rmcp::model::{ReadResourceRequestParams, ResourceContents};

    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args([
        "--headless",
        "--paused",
        "--log-level",
        "warn",
        "--world-size",
        "200",
    ]);
    cmd.args(["--handle-ttl", "120"]);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let info = client.peer_info().unwrap();
    assert!(info.capabilities.resources.is_some());

    let result = client
        .call_tool(
            CallToolRequestParams::new("structs_list_players")
                .with_arguments(args(json!({"page_size": 100}))),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let envelope = result.structured_content.clone().unwrap();
    assert_eq!(envelope["status"], "partial");
    assert!(envelope.to_string().len() <= 25_600);
    let handle = envelope["result_handle"].as_str().unwrap();
    let link = result
        .content
        .iter()
        .find_map(|c| c.as_resource_link())
        .expect("a resource link");
    assert_eq!(link.uri, format!("structs://handles/{handle}"));
    assert_eq!(link.size, envelope["metadata"]["size_bytes"].as_u64());
    assert_eq!(envelope["metadata"]["expires_in_sec"], 120, "--handle-ttl");

    // The handle is listed, and its pages read back.
    let resources = client.list_all_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri == link.uri));
    let total_pages = envelope["page_info"]["total_pages"].as_u64().unwrap();
    let mut players = 0;
    for page in 1..=total_pages {
        let read = client
            .read_resource(ReadResourceRequestParams::new(format!(
                "{}?page={page}",
                link.uri
            )))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents {
            text, mime_type, ..
        } = &read.contents[0]
        else {
            panic!("text contents expected");
        };
        assert_eq!(mime_type.as_deref(), Some("application/json"));
        assert!(text.len() <= 25_600);
        let body: Value = serde_json::from_str(text).unwrap();
        assert_eq!(body["page_info"]["current_page"], page);
        players += body["data"]["players"].as_array().map_or(0, Vec::len);
    }
    assert_eq!(players, 100, "the page's 100 players, all of them");

    // An unknown handle is an error that says so; the server keeps serving.
    let err = client
        .read_resource(ReadResourceRequestParams::new(
            "structs://handles/structs:player:1:00000000",
        ))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no result is stored"), "{err}");
    let again = client
        .call_tool(
            CallToolRequestParams::new("structs_handle_list").with_arguments(args(json!({}))),
        )
        .await
        .unwrap();
    assert_eq!(again.structured_content.unwrap()["total"], 1);
    client.cancel().await.unwrap();
}

/// The entity schemas are MCP resources: listed, and read back as Draft 7 JSON Schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entity_schemas_are_listed_and_readable_as_resources() {
    use rmcp::model::{ReadResourceRequestParams, ResourceContents};

    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"]);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();

    let uri = "structs://schemas/entities/player.json";
    let resources = client.list_all_resources().await.unwrap();
    let listed = resources
        .iter()
        .find(|r| r.uri == uri)
        .expect("the player schema is listed");
    assert_eq!(listed.mime_type.as_deref(), Some("application/schema+json"));
    assert!(
        resources
            .iter()
            .any(|r| r.uri == "structs://schemas/formats.json"),
        "the shared formats are listed too"
    );

    let read = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents {
        text, mime_type, ..
    } = &read.contents[0]
    else {
        panic!("text contents expected");
    };
    assert_eq!(mime_type.as_deref(), Some("application/schema+json"));
    let schema: Value = serde_json::from_str(text).unwrap();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(schema["$id"], uri);
    assert_eq!(listed.size, Some(text.len() as u64));

    // An unknown schema says which ones exist; handles still read as before.
    let err = client
        .read_resource(ReadResourceRequestParams::new(
            "structs://schemas/entities/ship.json",
        ))
        .await
        .unwrap_err();
    assert!(err.to_string().contains(uri), "{err}");
    let err = client
        .read_resource(ReadResourceRequestParams::new(
            "structs://handles/structs:player:1:00000000",
        ))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no result is stored"), "{err}");
    client.cancel().await.unwrap();
}

/// A plan and a workflow over stdio: the plan answers with every step; the workflow
/// answers at once and keeps running in the server after its call returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_and_workflows_over_mcp() {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"]);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let call = |name: &'static str, a: Value| {
        let client = &client;
        async move {
            let r = client
                .call_tool(CallToolRequestParams::new(name).with_arguments(args(a)))
                .await
                .expect("tools/call");
            (r.is_error, r.structured_content.expect("structuredContent"))
        }
    };
    let (err, plan) = call(
        "structs_plan_execute",
        json!({"steps": [
            {"id": "list", "tool": "structs_list_players", "params": {"page_size": 2}},
            {"tool": "structs_query_player", "params": {"player_id": "${steps.list.data.players[1].Player.id}"}}
        ]}),
    )
    .await;
    assert_eq!(err, Some(false), "{plan:#}");
    // The second player in the chain's order of ids.
    assert_eq!(plan["steps"][1]["resolved_params"]["player_id"], "1-10");
    assert_eq!(plan["steps"][1]["data"]["player"]["Player"]["id"], "1-10");

    let (err, bad) = call(
        "structs_plan_execute",
        json!({"steps": [{"tool": "structs_query_player", "params": {"player_id": "${step[3].data}"}}]}),
    )
    .await;
    assert_eq!(err, Some(true));
    assert_eq!(bad["error"]["code"], "VALIDATION_INVALID_PLAN");

    let (_, started) = call(
        "structs_workflow_execute",
        json!({"workflow": "query-and-monitor-planet", "inputs": {"planet_id": "2-2"}}),
    )
    .await;
    let id = started["workflow_id"].as_str().unwrap().to_string();
    let mut m = Value::Null;
    for _ in 0..200 {
        m = call("structs_workflow_monitor", json!({"workflow_id": id}))
            .await
            .1;
        if m["status"] != "running" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(m["status"], "succeeded", "{m:#}");
    // Its subscriptions are this client's.
    let (_, subs) = call("structs_subscription_list", json!({})).await;
    assert!(subs.to_string().contains("2-2"), "{subs:#}");
    client.cancel().await.ok();
}

/// Reference docs are MCP resources (`structs://docs/{doc_id}`, Markdown), listed and
/// readable; `--docs DIR` serves another folder, and the docs tools answer over stdio.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docs_are_resources_and_tools_over_mcp() {
    use rmcp::model::{ReadResourceRequestParams, ResourceContents};

    let dir = std::env::temp_dir().join(format!("structs-mcp-docs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("guides")).unwrap();
    std::fs::write(
        dir.join("guides/start.md"),
        "---\ntitle: Starting out\nsummary: The first moves.\n---\n# Starting out\n\nClaim a planet first.\n",
    )
    .unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn", "--docs"])
        .arg(&dir);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();

    let resources = client.list_all_resources().await.unwrap();
    let doc = resources
        .iter()
        .find(|r| r.uri == "structs://docs/guides/start")
        .expect("the doc is listed");
    assert_eq!(doc.mime_type.as_deref(), Some("text/markdown"));
    assert_eq!(doc.name, "Starting out");
    let read = client
        .read_resource(ReadResourceRequestParams::new(
            "structs://docs/guides/start",
        ))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("text contents expected");
    };
    assert_eq!(text, "# Starting out\n\nClaim a planet first.\n");
    let err = client
        .read_resource(ReadResourceRequestParams::new(
            "structs://docs/../etc/passwd",
        ))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("leaves the docs root"), "{err}");
    let err = client
        .read_resource(ReadResourceRequestParams::new("structs://docs/guides/stat"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not found"), "{err}");
    assert!(err.to_string().contains("guides/start"), "suggested: {err}");

    let r = client
        .call_tool(
            CallToolRequestParams::new("structs_docs_search")
                .with_arguments(args(json!({"query": "claim planet"}))),
        )
        .await
        .unwrap();
    let v = r.structured_content.unwrap();
    assert_eq!(v["hits"][0]["doc_id"], "guides/start");
    // Links are written to the folder's files.
    let r = client
        .call_tool(
            CallToolRequestParams::new("structs_docs_upsert_link").with_arguments(args(
                json!({"source_kind": "entity_kind", "source_id": "planet", "target_doc_id": "guides/start"}),
            )),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false));
    assert!(dir.join("_links/entity_kind/planet.meta.yaml").is_file());
    client.cancel().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `structs://` URI an answer carries, in a result or an error, is one this
/// server reads: an entity, a doc, a handle. A URI naming an entity that does not
/// exist reads as "not found" for that entity, never as an unknown kind of URI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_uri_an_answer_carries_can_be_read() {
    use rmcp::model::ReadResourceRequestParams;

    fn uris(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) if s.starts_with("structs://") => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|v| uris(v, out)),
            Value::Object(m) => m.values().for_each(|v| uris(v, out)),
            _ => {}
        }
    }

    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"]);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let calls = [
        ("structs_query_struct", json!({"struct_id": "5-99999"})),
        ("structs_query_entity", json!({"id": "1-999"})),
        ("structs_query_player", json!({"player_id": "player-1"})),
        ("structs_validate_entity_id", json!({"id": "12-3"})),
        (
            "structs_list_structs",
            json!({"page_size": 100, "include_references": true}),
        ),
        (
            "structs_handle_fetch",
            json!({"handle": "structs:struct:1:00000000"}),
        ),
        (
            "structs_subscription_subscribe",
            json!({"entity_type": "planet", "entity_id": "2-1"}),
        ),
        (
            "structs_docs_search",
            json!({"query": "mining", "limit": 3}),
        ),
    ];
    let mut found = Vec::new();
    for (tool, a) in calls {
        let r = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args(a)))
            .await
            .unwrap();
        uris(&r.structured_content.unwrap_or_default(), &mut found);
    }
    found.sort();
    found.dedup();
    let kinds = |p: &str| found.iter().any(|u| u.starts_with(p));
    assert!(kinds("structs://entities/5-99999"), "{found:#?}");
    assert!(kinds("structs://handles/"), "{found:#?}");
    assert!(kinds("structs://docs/"), "{found:#?}");
    for uri in &found {
        // A handle's URI may name a page; the resource is the handle.
        match client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
        {
            Ok(read) => assert!(!read.contents.is_empty(), "{uri}"),
            Err(e) => {
                let text = e.to_string();
                let missing = ["5-99999", "1-999", "structs:struct:1:00000000"]
                    .iter()
                    .any(|id| uri.ends_with(id));
                assert!(missing, "{uri} cannot be read: {text}");
                assert!(
                    text.contains("not found")
                        || text.contains("does not exist")
                        || text.contains("no result is stored"),
                    "{uri}: {text}"
                );
            }
        }
    }
    client.cancel().await.unwrap();
}

/// On the wire every answer is compact JSON: the text block is exactly the compact form
/// of `structuredContent`, and a lean answer's references carry no null, empty or zero
/// bookkeeping an agent cannot use.
#[test]
fn answers_are_compact_on_the_wire_and_lean_references_carry_no_empty_blocks() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let calls = [
        json!({"name": "structs_query_player", "arguments": {"player_id": "1-2",
            "include_references": "primary", "reference_depth": 2,
            "fields": "planetId,fleetId,Planet.land,Struct.type"}}),
        json!({"name": "structs_list_planets", "arguments": {"page_size": 10,
            "include_references": true, "verbosity": "summary"}}),
        // A limit leaves references out: the lean summary says so, without zeros.
        json!({"name": "structs_query_guild", "arguments": {"guild_id": "0-1",
            "include_references": "all", "reference_depth": 2, "max_references": 2,
            "verbosity": "compact"}}),
        json!({"name": "structs_list_structs", "arguments": {"page_size": 100,
            "include_references": "all", "verbosity": "compact"}}),
        json!({"name": "structs_query_player", "arguments": {"player_id": "1-99999"}}),
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["--headless", "--paused", "--log-level", "error"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn headless server");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"raw","version":"1"}}}}}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    for (i, call) in calls.iter().enumerate() {
        let request =
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": call});
        writeln!(stdin, "{request}").unwrap();
    }
    stdin.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut by_id = std::collections::HashMap::new();
    while by_id.len() < calls.len() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = rx.recv_timeout(left).expect("the server stopped answering");
        let v: Value = serde_json::from_str(&line).expect("every line out is JSON");
        if let Some(id) = v["id"].as_u64().filter(|&id| id > 0) {
            by_id.insert(id, v);
        }
    }
    drop(stdin);
    let _ = child.wait();

    for (i, call) in calls.iter().enumerate() {
        let result = &by_id[&(i as u64 + 1)]["result"];
        let structured = &result["structuredContent"];
        let text = result["content"][0]["text"].as_str().expect("a text block");
        assert_eq!(
            text,
            serde_json::to_string(structured).unwrap(),
            "{call}: the text block is the compact structuredContent"
        );
        assert!(!text.contains("\n"), "{call}: pretty-printed");
        if let Some(refs) = structured.get("references").and_then(Value::as_object) {
            assert!(!refs.is_empty(), "{call}");
            for (id, entry) in refs {
                let entry = entry.as_object().unwrap();
                for field in ["status", "referenced_from", "referenced_in", "depth", "id"] {
                    assert!(!entry.contains_key(field), "{call}: {id} has {field}");
                }
                assert!(entry["reference_type"].is_string(), "{call}: {id}");
            }
        }
        if let Some(summary) = structured.get("references_summary") {
            fn no_empties(v: &Value, at: &str) {
                match v {
                    Value::Null => panic!("{at} is null"),
                    Value::Number(n) => assert_ne!(n.as_u64(), Some(0), "{at} is 0"),
                    Value::Array(a) => assert!(!a.is_empty(), "{at} is empty"),
                    Value::Object(o) => {
                        assert!(!o.is_empty(), "{at} is empty");
                        for (k, x) in o {
                            no_empties(x, &format!("{at}.{k}"));
                        }
                    }
                    _ => {}
                }
            }
            no_empties(summary, "references_summary");
            assert_eq!(summary["status"], "partial", "{call}: {summary}");
        }
    }
    // The limited call said what it left out; the others had nothing to say.
    let limited = &by_id[&3]["result"]["structuredContent"];
    assert!(
        limited["references_summary"]["left_out"].as_u64().unwrap() > 0,
        "{limited}"
    );
    assert!(
        by_id[&1]["result"]["structuredContent"]
            .get("references_summary")
            .is_none()
    );
    assert_eq!(by_id[&5]["result"]["isError"], true);
}
