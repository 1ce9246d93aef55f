//! `--connect`: the console as an MCP client. These tests attach to the project's own
//! headless server, started as a child process over stdio (and once over HTTP with a
//! token), and check that the panes work on it as they do on a local core: the same
//! entities, handles, plans; the Server tab's tools, form, answer, notifications and
//! raw traffic; progress and cancellation across the wire.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};
use structs_console::clock::WallClock;
use structs_console::context::{CallContext, ProgressUpdate};
use structs_console::mcp::client::{Direction, Remote, Target};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::tui::{App, Tab, Theme};
use structs_console::{Core, EntityId};
use tokio::runtime::Runtime;

use support::console::{draw, press, runtime, type_text, wall};

/// Players in the world on both sides: enough for a list over the size limit.
const PLAYERS: usize = 200;

/// `structs-console --headless --paused --world-size 200` as a child process, attached.
fn attach(runtime: &Runtime) -> Arc<Remote> {
    let target = Target::Command(vec![
        env!("CARGO_BIN_EXE_structs-console").to_string(),
        "--headless".into(),
        "--paused".into(),
        "--world-size".into(),
        PLAYERS.to_string(),
        "--log-level".into(),
        "warn".into(),
    ]);
    runtime
        .block_on(Remote::connect(target, None))
        .expect("attach to the headless server")
}

/// The same world in this process: what the remote console must match.
fn local_core() -> Core {
    structs_console::assembly::build_with_clock(
        Arc::new(SimSource::new(
            WorldConfig::with_players(PLAYERS),
            BlockClock::paused(WorldConfig::DEFAULT_HEIGHT),
        )),
        WallClock::Fixed(wall()),
    )
}

/// Waits (up to 10 s) until `done` holds, drawing meanwhile so the frame follows.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < until, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The steps of a plan report without their timings.
fn steps_without_timing(report: &Value) -> Vec<Value> {
    report["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            let mut s = s.clone();
            for key in ["duration_ms", "started_at", "ended_at", "attempts"] {
                s.as_object_mut().expect("a step object").remove(key);
            }
            s
        })
        .collect()
}

#[test]
fn attached_to_our_own_headless_server_the_panes_work_as_they_do_locally() {
    let rt = runtime();
    let remote = attach(&rt);
    let local = local_core();
    let core =
        structs_console::mcp::client::attached_core(remote.clone(), WallClock::Fixed(wall()));

    // The server's tools, with their schemas, are the console's.
    let names: Vec<&str> = core.tool_names().collect();
    let local_names: Vec<&str> = local.tool_names().collect();
    assert_eq!(names, local_names);
    assert_eq!(
        core.tool_spec("structs_query_entity").unwrap().input_schema,
        local
            .tool_spec("structs_query_entity")
            .unwrap()
            .input_schema
    );
    // And their titles, hints and output schemas: the server's, as it lists them (its
    // embedded world is a closed one).
    for name in ["structs_query_entity", "structs_action_attack"] {
        let (there, here) = (
            core.tool_spec(name).unwrap(),
            local.tool_spec(name).unwrap(),
        );
        assert_eq!(there.title, here.title);
        assert_eq!(there.output_schema, here.output_schema);
        let mut hints = here.hints;
        hints.open_world = Some(false);
        assert_eq!(there.hints, hints, "{name}");
    }
    // The header shows the server's source and block height.
    let status = core.status();
    assert_eq!(status.name, "mcp");
    assert_eq!(status.block_height, local.status().block_height);
    assert!(status.paused);
    assert!(
        status.description.starts_with("structs-console "),
        "{}",
        status.description
    );

    // Entities: the same first page, and an entity opens with its references.
    let mut app =
        App::new(core.clone(), Theme::default(), rt.handle().clone()).with_server(remote.clone());
    app.settle();
    let mut here = App::new(local.clone(), Theme::default(), rt.handle().clone());
    here.settle();
    assert_eq!(app.tab(), Tab::Entities);
    assert!(!app.listed_ids().is_empty());
    assert_eq!(app.listed_ids(), here.listed_ids());
    press(&mut app, KeyCode::Enter);
    assert!(app.references_query().is_some());
    let frame = draw(&mut app, 160, 40);
    assert!(frame.contains("1-1"), "{frame}");
    // The header names the server and its command, cut to fit the line.
    let header = draw(&mut app, 110, 30)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    assert!(
        header.contains(" mcp · structs-console ")
            && header.contains("… ")
            && header.contains("block 120000 ⏸ paused"),
        "{header}"
    );

    // Handles: a result over the limit is stored on the server, listed in the
    // Handles tab and fetched from there.
    let v = rt
        .block_on(core.call("structs_list_planets", json!({"page_size": 100})))
        .expect("list planets");
    assert_eq!(v["status"], "partial");
    let handle = v["result_handle"].as_str().expect("a handle").to_string();
    press(&mut app, KeyCode::Char('2'));
    let frame = draw(&mut app, 160, 40);
    assert!(frame.contains(&handle[..20]), "{frame}");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 160, 40);
    assert!(frame.contains("page 1"), "{frame}");

    // Plans: a plan whose second step reads past the first step's envelope (through
    // the server's handle) runs to the same report as on the local core.
    let total = rt
        .block_on(local.call("structs_list_planets", json!({"page_size": 1})))
        .expect("count planets")["pagination"]["total"]
        .as_u64()
        .expect("a total");
    assert!(total > 30, "{total} planets");
    let plan = json!({"steps": [
        {"id": "planets", "tool": "structs_list_planets", "params": {"page_size": 100}},
        {"id": "last", "tool": "structs_query_entity",
         "params": {"id": format!("${{steps.planets.data.planets[{}].Planet.id}}", total.min(100) - 1)}}
    ]});
    app.open_plan("far reference", plan.clone());
    here.open_plan("far reference", plan);
    for a in [&mut app, &mut here] {
        press(a, KeyCode::Char('r'));
        wait_for("the plan to end", || {
            a.update();
            a.plan_report().is_some_and(|r| {
                r["steps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|s| s["status"] != "pending" && s["status"] != "running")
            })
        });
    }
    let remote_steps = steps_without_timing(&app.plan_report().unwrap());
    let local_steps = steps_without_timing(&here.plan_report().unwrap());
    assert_eq!(
        local_steps[1]["status"], "succeeded",
        "{:#}",
        local_steps[1]
    );
    assert_eq!(
        remote_steps[1]["resolved_params"],
        local_steps[1]["resolved_params"]
    );
    assert_eq!(
        remote_steps[1]["status"], "succeeded",
        "{:#}",
        remote_steps[1]
    );
    let id: EntityId = remote_steps[1]["resolved_params"]["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(id.kind.code(), 2);
}

#[test]
fn the_server_tab_lists_calls_and_shows_the_traffic() {
    let rt = runtime();
    let remote = attach(&rt);
    let core =
        structs_console::mcp::client::attached_core(remote.clone(), WallClock::Fixed(wall()));
    let mut app =
        App::new(core.clone(), Theme::default(), rt.handle().clone()).with_server(remote.clone());
    app.settle();
    press(&mut app, KeyCode::Char('7'));
    assert_eq!(app.tab(), Tab::Server);
    let frame = draw(&mut app, 160, 40);
    assert!(
        frame.contains(" structs-console 0.1.0 · protocol 2026-07-28 (stateless) · tasks · "),
        "{frame}"
    );
    // What server/discover said beyond the handshake: every version it speaks.
    let versions = &remote.server_info()["supportedVersions"];
    assert_eq!(versions.as_array().map(Vec::len), Some(5), "{versions}");
    assert_eq!(versions[4], "2026-07-28");
    let wide = draw(&mut app, 400, 40);
    assert!(wide.contains(" · attached to /"), "{wide}");
    // The server's prompts were listed at attach, and it completes.
    assert!(remote.prompts().iter().any(|p| p.name == "brief"));
    assert!(
        frame.contains(&format!("{} prompts · completions", remote.prompts().len())),
        "{frame}"
    );
    let count = core.tool_names().count();
    assert!(frame.contains(&format!("Tools ({count})")), "{frame}");

    // Select structs_validate_entity_id and read its schema.
    let at = core
        .tool_names()
        .position(|n| n == "structs_validate_entity_id")
        .unwrap();
    for _ in 0..at {
        press(&mut app, KeyCode::Down);
    }
    let frame = draw(&mut app, 160, 40);
    assert!(frame.contains("Arguments (* required)"), "{frame}");
    assert!(frame.contains("id*"), "{frame}");

    // The form: a bad value is named, a good one is sent and answered.
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 160, 40);
    assert!(frame.contains("Call structs_validate_entity_id"), "{frame}");
    type_text(&mut app, "1-1");
    let frame = draw(&mut app, 160, 40);
    assert!(frame.contains(r#"arguments {"id":"1-1"}"#), "{frame}");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 160, 40);
    assert!(
        frame.contains("structs_validate_entity_id · result"),
        "{frame}"
    );
    assert!(frame.contains(r#""valid": true"#), "{frame}");
    // Back to the form, a wrong id: the server's error, in the error format.
    press(&mut app, KeyCode::Enter);
    for _ in 0..3 {
        press(&mut app, KeyCode::Backspace);
    }
    type_text(&mut app, "x-1");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 160, 40);
    assert!(frame.contains("structs_validate_entity_id · "), "{frame}");

    // Traffic, the last section: the handshake and the calls, both ways, with the
    // request ids.
    press(&mut app, KeyCode::Esc);
    app.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    let frame = draw(&mut app, 160, 40);
    assert!(frame.contains("JSON-RPC traffic"), "{frame}");
    assert!(frame.contains("→ tools/call"), "{frame}");
    assert!(frame.contains("← response"), "{frame}");
    let messages = remote.wire().messages();
    // The newest protocol is offered first (`server/discover`), and this server
    // speaks it: no handshake follows, and every request carries its own `_meta`.
    assert_eq!(messages[0].method, "server/discover");
    assert_eq!(messages[0].direction, Direction::Sent);
    assert!(
        messages[0].text.contains("2026-07-28"),
        "{}",
        messages[0].text
    );
    assert_eq!(messages[1].method, "response");
    assert!(
        messages[1].text.contains(r#""supportedVersions""#),
        "{}",
        messages[1].text
    );
    assert!(!messages.iter().any(|m| m.method == "initialize"));
    assert_eq!(remote.protocol_version(), "2026-07-28");
    let call = messages
        .iter()
        .find(|m| m.method == "tools/call")
        .expect("a call");
    assert!(
        call.text
            .contains(r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#)
            && call.text.contains(r#""name":"structs-console""#),
        "{}",
        call.text
    );
    assert!(
        messages
            .iter()
            .any(|m| m.text.contains("structs_validate_entity_id") && m.text.contains("x-1"))
    );
    // Enter shows the selected (newest) message whole.
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 160, 40);
    assert!(frame.contains("message "), "{frame}");
    assert!(frame.contains(r#""jsonrpc": "2.0""#), "{frame}");
}

#[test]
fn progress_and_cancel_cross_the_wire_and_show_as_notifications() {
    let rt = runtime();
    let remote = attach(&rt);
    let core =
        structs_console::mcp::client::attached_core(remote.clone(), WallClock::Fixed(wall()));
    let updates: Arc<Mutex<Vec<ProgressUpdate>>> = Arc::default();
    let sink = updates.clone();
    let ctx = CallContext::new().with_progress(move |u| sink.lock().unwrap().push(u));
    // A search that cannot succeed: it runs until cancelled.
    let args = json!({"action_type": "struct_build_complete", "entity_id": "5-1",
        "block_start": 10, "age": 1, "difficulty": 700, "threads": 1,
        "max_iterations": 1_000_000_000_000u64});
    let call = rt.spawn({
        let core = core.clone();
        let ctx = ctx.clone();
        async move {
            core.call_with("structs_calculate_proof_of_work", args, ctx)
                .await
        }
    });
    wait_for("three progress reports", || {
        updates.lock().unwrap().len() >= 3
    });
    {
        let u = updates.lock().unwrap();
        let last = u.last().unwrap();
        assert!(last.progress > 0.0);
        // The tool's own figures come along, as they do locally.
        let wire = remote.wire().notifications();
        assert!(
            last.data["hashrate"].as_f64().is_some(),
            "{:#} from {:?}",
            last.data,
            wire.last().map(|m| &m.text)
        );
    }
    let cancelled_at = Instant::now();
    ctx.cancel();
    let e = rt.block_on(call).unwrap().unwrap_err();
    assert_eq!(e.code.as_str(), "TOOL_CANCELLED");
    assert!(cancelled_at.elapsed() < Duration::from_secs(2));
    wait_for("the cancel notification on the wire", || {
        remote
            .wire()
            .messages()
            .iter()
            .any(|m| m.direction == Direction::Sent && m.method == "notifications/cancelled")
    });
    assert!(
        remote
            .wire()
            .notifications()
            .iter()
            .any(|m| m.method == "notifications/progress")
    );
    // The server still answers.
    let v = rt
        .block_on(core.call("structs_validate_entity_id", json!({"id": "2-1"})))
        .unwrap();
    assert_eq!(v["valid"], true);

    // The notifications view lists them.
    let mut app = App::new(core, Theme::default(), rt.handle().clone()).with_server(remote.clone());
    app.settle();
    press(&mut app, KeyCode::Char('7'));
    // Notifications: the section before the traffic, the last.
    for _ in 0..2 {
        app.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    }
    let frame = draw(&mut app, 160, 30);
    assert!(frame.contains("notifications/progress"), "{frame}");
    // The end of the longer traffic view, then back: G shows the last notifications
    // filling the pane down to its bottom, not the last one alone at the top.
    let shown = |frame: &str| frame.matches("notifications/progress").count();
    let small = draw(&mut app, 160, 12);
    let progress = shown(&small);
    assert!(progress >= 3, "{small}");
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('G'));
    draw(&mut app, 160, 12);
    app.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    press(&mut app, KeyCode::Char('G'));
    let frame = draw(&mut app, 160, 12);
    assert_eq!(shown(&frame), progress, "{frame}");
}

#[test]
fn attached_over_http_with_a_token_and_refused_without() {
    let rt = runtime();
    let token = "a-token-of-twenty-chars";
    let server = rt.block_on(support::mcp_http::Headless::start(
        &["--paused", "--auth-token", token],
        &[],
    ));
    let url = server.url.clone();
    // Refused in the server's words, which say what to pass.
    let Err(refused) = rt.block_on(Remote::connect(Target::Url(url.clone()), None)) else {
        panic!("attached without the token");
    };
    let text = format!("{refused:#}");
    assert!(text.contains("`Authorization: Bearer TOKEN`"), "{text}");
    let Err(wrong) = rt.block_on(Remote::connect(
        Target::Url(url.clone()),
        Some("not-the-token-at-all".into()),
    )) else {
        panic!("attached with a wrong token");
    };
    let text = format!("{wrong:#}");
    assert!(text.contains("not this server's"), "{text}");
    assert!(!text.contains("not-the-token-at-all"), "{text}");
    let remote = rt
        .block_on(Remote::connect(Target::Url(url), Some(token.into())))
        .expect("attach with the token");
    let core = structs_console::mcp::client::attached_core(remote, WallClock::Fixed(wall()));
    let v = rt
        .block_on(core.call("structs_query_entity", json!({"id": "1-1"})))
        .unwrap();
    assert!(v.to_string().contains("1-1"));
    // An argument the schema refuses is refused here, before the wire, in the
    // server's words.
    let e = rt
        .block_on(core.call("structs_query_entity", json!({"id": 7})))
        .unwrap_err();
    assert_eq!(e.code.as_str(), "VALIDATION_WRONG_TYPE");
    let e = rt
        .block_on(core.call("structs_no_such_tool", json!({})))
        .unwrap_err();
    assert_eq!(e.code.as_str(), "TOOL_NOT_FOUND");
    rt.block_on(server.stop());
}

/// A tool the server does not have is a protocol error on the wire (-32602); attached,
/// it is still `TOOL_NOT_FOUND` with the server's suggestions, and a plan step calling
/// it (a tool the console forwards but the server has since lost) fails with that code
/// at its first attempt, as a step naming an unknown tool does on a local core.
#[test]
fn a_tool_the_server_lacks_is_tool_not_found_in_the_console_and_its_plans() {
    let rt = runtime();
    let remote = attach(&rt);
    let e = rt
        .block_on(remote.call("structs_query_playr", json!({}), CallContext::new()))
        .unwrap_err();
    assert_eq!(e.code.as_str(), "TOOL_NOT_FOUND", "{e:?}");
    assert_eq!(e.extra["jsonrpc_code"], -32602);
    assert!(
        e.extra["suggestions"]
            .as_array()
            .unwrap()
            .contains(&json!("structs_query_player")),
        "{e:?}"
    );

    // The console's registry: the server's tools, and one it does not have.
    let mut registry = structs_console::tools::Registry::default();
    structs_console::mcp::client::register_remote(&mut registry, &remote);
    let gone = remote.clone();
    let handler: structs_console::tools::Handler = Arc::new(move |_env, args| {
        let remote = gone.clone();
        Box::pin(async move {
            remote
                .call("structs_query_playr", args, CallContext::current())
                .await
        })
    });
    registry.add_forwarded(
        structs_console::tools::ToolSpec {
            name: "structs_query_playr",
            description: "a tool the server no longer has",
            input_schema: json!({"type": "object"}),
            references: structs_console::references::Support::None,
            shaping: structs_console::handles::Shaping::Own,
            title: "A lost tool",
            hints: structs_console::tools::Hints::READ,
            output_schema: serde_json::Value::Null,
        },
        handler,
    );
    let source = Arc::new(structs_console::mcp::client::RemoteSource(remote.clone()));
    let core = Core::builder(source, registry)
        .clock(WallClock::Fixed(wall()))
        .forwarded()
        .build()
        .unwrap();
    let mut app = App::new(core, Theme::default(), rt.handle().clone()).with_server(remote);
    app.open_plan(
        "lost tool",
        json!({"steps": [{"id": "lost", "tool": "structs_query_playr", "params": {},
                          "retry_count": 3}]}),
    );
    press(&mut app, KeyCode::Char('r'));
    wait_for("the plan to end", || {
        app.update();
        app.plan_report()
            .is_some_and(|r| r["steps"][0]["status"] == "failed")
    });
    let step = app.plan_report().unwrap()["steps"][0].clone();
    assert_eq!(step["error"]["code"], "TOOL_NOT_FOUND", "{step:#}");
    assert_eq!(step["attempts"], 1, "not retried: {step:#}");
}

#[test]
fn a_command_that_is_not_there_is_a_clear_error() {
    let rt = runtime();
    let e = rt
        .block_on(Remote::connect(
            Target::parse("no-such-program-structs --headless").unwrap(),
            None,
        ))
        .err()
        .expect("no such program");
    assert!(e.to_string().contains("no-such-program-structs"), "{e:#}");
}

#[test]
fn a_url_with_no_server_says_why_in_plain_words() {
    let rt = runtime();
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let e = rt
        .block_on(Remote::connect(Target::parse(&url).unwrap(), None))
        .err()
        .expect("nothing listens there");
    let text = format!("{e:#}");
    assert!(text.contains(&url), "{text}");
    assert!(text.contains("Connection refused"), "{text}");
    // No Rust type names from the transport stack.
    assert!(!text.contains("::"), "{text}");
}

#[test]
fn a_server_that_goes_quiet_is_given_up_on_and_told_so() {
    // A minimal MCP server in a shell script: it completes the handshake, lists one
    // tool, then reads everything and answers nothing.
    let script = r#"read line
echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"mute","version":"1"}}}'
read line
read line
echo '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"hang","description":"Never answers.","inputSchema":{"type":"object"}}]}}'
cat > /dev/null"#;
    let rt = runtime();
    let remote = rt
        .block_on(Remote::connect_with(
            Target::Command(vec!["sh".into(), "-c".into(), script.into()]),
            None,
            Duration::from_millis(700),
        ))
        .expect("attach to the script");
    let core =
        structs_console::mcp::client::attached_core(remote.clone(), WallClock::Fixed(wall()));
    assert_eq!(core.tool_names().collect::<Vec<_>>(), ["hang"]);
    let started = Instant::now();
    let e = rt
        .block_on(core.call("hang", json!({})))
        .expect_err("no answer");
    assert_eq!(e.code.as_str(), "TOOL_TIMEOUT", "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        remote
            .wire()
            .messages()
            .iter()
            .any(|m| m.direction == Direction::Sent && m.method == "notifications/cancelled")
    );
    // Not a structs-console: the console opens on the Server tab.
    let app = App::new(core, Theme::default(), rt.handle().clone()).with_server(remote.clone());
    assert_eq!(app.tab(), Tab::Server);
}
