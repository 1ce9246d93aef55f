//! The Server tab as an inspector of any MCP server, driven by keys against the MCP
//! reference server (`server-everything`, installed by `.ci/run`): every section, the
//! server's sampling and elicitation requests answered by the operator, roots added,
//! a long call's progress and its cancel; and the snapshots of each section at 100x30
//! and 40x12.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use structs_console::clock::WallClock;
use structs_console::mcp::client::{Direction, Options, Remote, RootDir, Target};
use structs_console::tui::{App, Tab, Theme};
use tokio::runtime::Runtime;

use support::console::{draw, mask_times, runtime, wall};
use support::peers::Peers;

/// The console attached to the reference server, offering `/tmp` as a root, on the
/// Server tab (where a server that is not a Structs one opens).
fn attach(rt: &Runtime, peers: &Peers) -> (Arc<Remote>, App) {
    let target = Target::Command(vec![
        peers.node().display().to_string(),
        peers.everything().display().to_string(),
        "stdio".into(),
    ]);
    let options = Options {
        roots: vec![RootDir::from_dir(std::path::Path::new("/tmp")).unwrap()],
        ..Options::default()
    };
    let remote = rt
        .block_on(Remote::connect_with_options(target, options))
        .expect("attach to server-everything");
    let core =
        structs_console::mcp::client::attached_core(remote.clone(), WallClock::Fixed(wall()));
    let app = App::new(core, Theme::default(), rt.handle().clone()).with_server(remote.clone());
    (remote, app)
}

/// The console attached to the 2026-era Python SDK server (tests/data/python_rounds_server.py),
/// on the Server tab.
fn attach_python(rt: &Runtime, peers: &Peers) -> (Arc<Remote>, App) {
    let target = Target::Command(vec![
        peers.python().display().to_string(),
        format!(
            "{}/tests/data/python_rounds_server.py",
            env!("CARGO_MANIFEST_DIR")
        ),
    ]);
    let remote = rt
        .block_on(Remote::connect_with_options(target, Options::default()))
        .expect("attach to the Python server");
    let core =
        structs_console::mcp::client::attached_core(remote.clone(), WallClock::Fixed(wall()));
    let app = App::new(core, Theme::default(), rt.handle().clone()).with_server(remote.clone());
    (remote, app)
}

/// The console attached to our own headless server (`--paused`, and `flags`), over
/// stdio, settled on its first page.
fn attach_ours(rt: &Runtime, flags: &[&str]) -> (Arc<Remote>, App) {
    let mut command = vec![
        env!("CARGO_BIN_EXE_structs-console").to_string(),
        "--headless".into(),
        "--paused".into(),
        "--log-level".into(),
        "warn".into(),
    ];
    command.extend(flags.iter().map(|f| f.to_string()));
    let remote = rt
        .block_on(Remote::connect_with_options(
            Target::Command(command),
            Options::default(),
        ))
        .expect("attach to our own server");
    let core =
        structs_console::mcp::client::attached_core(remote.clone(), WallClock::Fixed(wall()));
    let mut app = App::new(core, Theme::default(), rt.handle().clone()).with_server(remote.clone());
    app.settle();
    (remote, app)
}

/// A key, without waiting for the calls it starts (one may wait on the operator).
fn key(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    app.update();
}

fn ctrl(app: &mut App, c: char) {
    app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    app.update();
}

fn keys(app: &mut App, code: KeyCode, times: usize) {
    for _ in 0..times {
        key(app, code);
    }
}

fn text(app: &mut App, typed: &str) {
    for c in typed.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// Applies answers as they come until the frame at 100x30 shows `wanted` (10 s at
/// most); the frame.
fn until(app: &mut App, wanted: &str) -> String {
    let start = Instant::now();
    loop {
        app.update();
        let frame = draw(app, 100, 30);
        if frame.contains(wanted) {
            return frame;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "gave up waiting for {wanted:?}:\n{frame}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Goes to a section of the Server tab by its name, from the tools.
fn section(app: &mut App, name: &str) {
    key(app, KeyCode::Char('7'));
    keys(app, KeyCode::Esc, 3);
    let order = [
        "Tools",
        "Resources",
        "Prompts",
        "Log",
        "Requests",
        "Roots",
        "History",
        "Notifications",
        "Traffic",
    ];
    let at = order.iter().position(|s| *s == name).expect("a section");
    keys(app, KeyCode::Tab, at);
}

/// Selects `tool` in the Tools section and opens its form.
fn tool_form(app: &mut App, remote: &Remote, tool: &str) {
    section(app, "Tools");
    // The tab lists the tools by name.
    let mut names: Vec<String> = remote.tools().iter().map(|t| t.name.to_string()).collect();
    names.sort();
    let at = names.iter().position(|n| n == tool).expect("the tool");
    key(app, KeyCode::Home);
    keys(app, KeyCode::Down, at);
    key(app, KeyCode::Enter);
}

/// The frame with what changes from run to run hidden: the header and the summary
/// (the server's path and message counts) and the times of day and durations.
fn steady(frame: &str) -> String {
    let mut rows: Vec<String> = frame.lines().map(str::to_string).collect();
    for (k, row) in rows.iter_mut().enumerate() {
        if k == 0 || k == 2 {
            // The header and the summary, as TestBackend quotes them.
            *row = format!(
                "\"{:width$}\"",
                "[varies]",
                width = row.chars().count().saturating_sub(2)
            );
            continue;
        }
        *row = mask_task_ids(&mask_times(row));
    }
    rows.join("\n")
}

/// A task's id (random) as the trail shows it, `task 0123abcd…`, masked.
fn mask_task_ids(row: &str) -> String {
    let mut out = String::new();
    let mut rest = row;
    while let Some(at) = rest.find("task ") {
        let (before, after) = rest.split_at(at + 5);
        out.push_str(before);
        let id: String = after.chars().take(8).collect();
        if id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()) && after[8..].starts_with('…')
        {
            out.push_str("########");
            rest = &after[8..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn snapshot(name: &str, description: &str, app: &mut App) {
    for (w, h) in [(100, 30), (40, 12)] {
        app.update();
        let frame = steady(&draw(app, w, h));
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => description,
        }, {
            insta::assert_snapshot!(format!("inspector_{name}_{w}x{h}"), frame);
        });
    }
}

#[test]
fn a_foreign_server_opens_on_the_server_tab_and_the_structs_tabs_say_why_they_are_empty() {
    let Some(peers) = Peers::find() else { return };
    let rt = runtime();
    let (_remote, mut app) = attach(&rt, &peers);
    app.settle();
    assert_eq!(app.tab(), Tab::Server);
    assert!(
        app.status_text()
            .is_none_or(|s| !s.contains("TOOL_NOT_FOUND")),
        "{:?}",
        app.status_text()
    );
    let frame = draw(&mut app, 100, 30);
    assert!(
        !frame.contains(" block 0"),
        "no chain, no block height:\n{frame}"
    );
    key(&mut app, KeyCode::Char('1'));
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("The Entities tab needs a Structs server."),
        "{frame}"
    );
    assert!(frame.contains("7 Server"), "{frame}");
    // Its keys do nothing, and call nothing.
    let sent = app.requests_sent();
    keys(&mut app, KeyCode::Enter, 2);
    assert_eq!(app.requests_sent(), sent);
    key(&mut app, KeyCode::Char('7'));
    snapshot(
        "tools",
        "The Server tab attached to the MCP reference server: the sections, its tools and the selected one's schema",
        &mut app,
    );
}

#[test]
fn a_long_call_shows_its_progress_and_is_cancelled_with_x() {
    let Some(peers) = Peers::find() else { return };
    let rt = runtime();
    let (remote, mut app) = attach(&rt, &peers);
    tool_form(&mut app, &remote, "trigger-long-running-operation");
    text(&mut app, "20");
    key(&mut app, KeyCode::Down);
    text(&mut app, "20");
    key(&mut app, KeyCode::Enter);
    let frame = until(&mut app, "%");
    assert!(frame.contains("calling…"), "{frame}");
    assert!(frame.contains("x cancels the call"), "{frame}");
    key(&mut app, KeyCode::Char('x'));
    let frame = until(&mut app, "TOOL_CANCELLED");
    assert!(frame.contains("· error ·"), "{frame}");
    assert!(
        remote
            .wire()
            .messages()
            .iter()
            .any(|m| m.direction == Direction::Sent && m.method == "notifications/cancelled")
    );
    // The history has it, and re-runs the one before it.
    section(&mut app, "History");
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("✗"), "{frame}");
    assert!(frame.contains("trigger-long-running-operation"), "{frame}");
}

#[test]
fn resources_templates_and_subscriptions() {
    let Some(peers) = Peers::find() else { return };
    let rt = runtime();
    let (_remote, mut app) = attach(&rt, &peers);
    section(&mut app, "Resources");
    // The resources and the templates are two requests; wait for both.
    let frame = until(&mut app, "⧉ Dynamic Text Resource");
    assert!(frame.contains("architecture.md"), "{frame}");
    snapshot(
        "resources",
        "Resources: the reference server's resources, then its templates, and the selected one",
        &mut app,
    );
    key(&mut app, KeyCode::Enter);
    let frame = until(&mut app, "# Everything Server");
    assert!(
        frame.contains("read demo://resource/static/document/architecture.md"),
        "{frame}"
    );
    snapshot("resource_read", "A text resource, read", &mut app);
    key(&mut app, KeyCode::Esc);
    // Subscribe, and the updates are counted once the server sends them.
    key(&mut app, KeyCode::Char('s'));
    until(&mut app, "◉ 0 updates");
    // A template: its variable, completed by the server, makes the uri read.
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Enter);
    text(&mut app, "7");
    let frame = until(&mut app, "Ctrl-N: 7");
    assert!(
        frame.contains("uri demo://resource/dynamic/blob/7"),
        "{frame}"
    );
    snapshot(
        "template_form",
        "A resource template's variable, with the server's completion and the uri it makes",
        &mut app,
    );
    key(&mut app, KeyCode::Enter);
    let frame = until(&mut app, "binary: ");
    assert!(frame.contains("bytes of text/plain"), "{frame}");
}

#[test]
fn prompts_complete_their_arguments_and_show_their_messages() {
    let Some(peers) = Peers::find() else { return };
    let rt = runtime();
    let (remote, mut app) = attach(&rt, &peers);
    section(&mut app, "Prompts");
    until(&mut app, "completable-prompt");
    keys(&mut app, KeyCode::Down, 2);
    key(&mut app, KeyCode::Enter);
    text(&mut app, "E");
    until(&mut app, "Ctrl-N: Engineering");
    ctrl(&mut app, 'n');
    key(&mut app, KeyCode::Down);
    text(&mut app, "A");
    // The name's completions depend on the department chosen.
    until(&mut app, "Ctrl-N: Alice");
    ctrl(&mut app, 'n');
    snapshot(
        "prompt_form",
        "A prompt's arguments, each completed by the server in the context of the others",
        &mut app,
    );
    key(&mut app, KeyCode::Enter);
    let frame = until(&mut app, "Please promote Alice");
    assert!(frame.contains("user:"), "{frame}");
    snapshot(
        "prompt_result",
        "The messages a prompt gives, under their roles",
        &mut app,
    );
    // An embedded resource.
    key(&mut app, KeyCode::Esc);
    keys(&mut app, KeyCode::Esc, 1);
    section(&mut app, "Prompts");
    keys(&mut app, KeyCode::Down, 3);
    key(&mut app, KeyCode::Enter);
    let asked = || {
        remote
            .wire()
            .messages()
            .iter()
            .filter(|m| m.direction == Direction::Sent && m.method == "completion/complete")
            .count()
    };
    let before = asked();
    // Typed faster than the server answers (here, with no answer taken in between,
    // however fast the server is), the letters do not each make a request: one is out
    // at a time, and what was typed meanwhile is asked for when it answers.
    for c in "Text".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    let start = Instant::now();
    while asked() - before < 2 && start.elapsed() < Duration::from_secs(3) {
        app.update();
        std::thread::sleep(Duration::from_millis(20));
    }
    let typed = asked() - before;
    assert!(
        (1..=2).contains(&typed),
        "{typed} completion requests for 4 letters"
    );
    key(&mut app, KeyCode::Down);
    text(&mut app, "1");
    key(&mut app, KeyCode::Enter);
    let frame = until(&mut app, "embedded resource demo://resource/dynamic/text/1");
    assert!(
        frame.contains("assistant:") || frame.contains("user:"),
        "{frame}"
    );
}

#[test]
fn the_log_level_is_set_and_messages_are_shown_by_level() {
    let Some(peers) = Peers::find() else { return };
    let rt = runtime();
    let (remote, mut app) = attach(&rt, &peers);
    section(&mut app, "Log");
    key(&mut app, KeyCode::Enter);
    until(&mut app, "server at debug");
    assert!(
        remote
            .wire()
            .messages()
            .iter()
            .any(|m| m.method == "logging/setLevel")
    );
    // The server's own messages arrive at the level set.
    until(&mut app, "Roots updated");
    // Shown from error up, the info messages are hidden.
    keys(&mut app, KeyCode::Char('f'), 4);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("shown from error up"), "{frame}");
    assert!(!frame.contains("Roots updated"), "{frame}");
    keys(&mut app, KeyCode::Char('f'), 4);
    snapshot(
        "log",
        "Log: the level set on the server (●) and its messages by level",
        &mut app,
    );
}

#[test]
fn the_operator_answers_sampling_with_a_typed_reply_and_may_reject_it() {
    let Some(peers) = Peers::find() else { return };
    let rt = runtime();
    let (remote, mut app) = attach(&rt, &peers);
    tool_form(&mut app, &remote, "trigger-sampling-request");
    text(&mut app, "what is six times seven?");
    key(&mut app, KeyCode::Enter);
    until(&mut app, "Requests 1!");
    assert!(
        app.status_text()
            .is_some_and(|s| s.contains("sampling/createMessage")),
        "{:?}",
        app.status_text()
    );
    section(&mut app, "Requests");
    let frame = until(&mut app, "times seven?");
    assert!(frame.contains("max tokens 100"), "{frame}");
    snapshot(
        "sampling",
        "A sampling request waiting: its messages, system prompt, token limit and temperature",
        &mut app,
    );
    key(&mut app, KeyCode::Enter);
    text(&mut app, "forty-two");
    snapshot(
        "sampling_reply",
        "The operator typing the model's reply",
        &mut app,
    );
    key(&mut app, KeyCode::Enter);
    // Back on Tools, the call that asked shows its answer, as any call does: the text
    // the server answered with, as text, wrapped to the pane.
    key(&mut app, KeyCode::Esc);
    let frame = until(&mut app, "structs-console operator");
    assert!(!frame.contains("\\n"), "text, not a JSON string:\n{frame}");
    // A key that changes nothing here, so the status line is the same whether the
    // answer came before Esc or after it.
    key(&mut app, KeyCode::Home);
    snapshot(
        "sampling_answer",
        "The call that asked for a sampling, answered: the server's text as text, wrapped",
        &mut app,
    );
    section(&mut app, "History");
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Enter);
    until(&mut app, "structs-console operator");
    assert!(
        remote
            .wire()
            .messages()
            .iter()
            .any(|m| m.direction == Direction::Sent && m.text.contains("forty-two")),
        "the reply went to the server"
    );

    // Rejected: the tool says so.
    tool_form(&mut app, &remote, "trigger-sampling-request");
    key(&mut app, KeyCode::Enter);
    until(&mut app, "Requests 1!");
    section(&mut app, "Requests");
    key(&mut app, KeyCode::Enter);
    ctrl(&mut app, 'r');
    section(&mut app, "History");
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Enter);
    until(&mut app, "MCP error -1: the operator rejected");
}

#[test]
fn the_operator_accepts_declines_or_cancels_an_elicitation() {
    let Some(peers) = Peers::find() else { return };
    let rt = runtime();
    let (remote, mut app) = attach(&rt, &peers);
    for (how, said) in [
        ("accept", r#""action": "accept""#),
        ("decline", r#""action": "decline""#),
        ("cancel", r#""action": "cancel""#),
    ] {
        tool_form(&mut app, &remote, "trigger-elicitation-request");
        key(&mut app, KeyCode::Enter);
        until(&mut app, "Requests 1!");
        section(&mut app, "Requests");
        until(&mut app, "elicitation/create");
        key(&mut app, KeyCode::Enter);
        match how {
            "accept" => {
                // The defaults are filled in; the required name is typed.
                let frame = draw(&mut app, 100, 30);
                assert!(frame.contains("It was a dark and stormy night."), "{frame}");
                text(&mut app, "Ada");
                snapshot(
                    "elicitation",
                    "An elicitation's form, built from its schema with its defaults",
                    &mut app,
                );
                key(&mut app, KeyCode::Enter);
            }
            "decline" => ctrl(&mut app, 'd'),
            _ => ctrl(&mut app, 'x'),
        }
        // Back on Tools (here by Tab, round the sections), the call's answer.
        keys(&mut app, KeyCode::Tab, 5);
        until(&mut app, said);
        section(&mut app, "History");
        key(&mut app, KeyCode::End);
        key(&mut app, KeyCode::Enter);
        let frame = until(&mut app, said);
        if how == "accept" {
            assert!(
                frame.contains("Ada")
                    || remote
                        .wire()
                        .messages()
                        .iter()
                        .any(|m| m.text.contains("\"Ada\""))
            );
        }
    }
}

#[test]
fn roots_are_listed_added_and_removed() {
    let Some(peers) = Peers::find() else { return };
    let rt = runtime();
    let (remote, mut app) = attach(&rt, &peers);
    tool_form(&mut app, &remote, "get-roots-list");
    key(&mut app, KeyCode::Enter);
    until(&mut app, "Current MCP Roots (1 total)");
    section(&mut app, "Roots");
    key(&mut app, KeyCode::Char('a'));
    text(&mut app, env!("CARGO_MANIFEST_DIR"));
    key(&mut app, KeyCode::Enter);
    until(&mut app, "the server was told the roots changed");
    assert_eq!(remote.roots().len(), 2);
    assert!(
        remote
            .wire()
            .messages()
            .iter()
            .any(|m| m.method == "notifications/roots/list_changed")
    );
    // Remove the added one again, so the snapshot is the same on every checkout.
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Char('d'));
    until(&mut app, "Roots offered to the server 1");
    until(&mut app, "the server was told the roots changed");
    snapshot(
        "roots",
        "Roots: the directories offered to the server",
        &mut app,
    );
    // The server asks for the roots again when told they changed, on its own time: the
    // list is asked for until its answer has caught up (10 s at most).
    let start = Instant::now();
    loop {
        tool_form(&mut app, &remote, "get-roots-list");
        key(&mut app, KeyCode::Enter);
        if until(&mut app, "total)").contains("(1 total)") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the server kept the removed root"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The same sections on our own headless server, attached over stdio: its resources
/// (a doc read), a resource template completed, a prompt completed and got, the log
/// level, the history; no peers needed.
#[test]
fn our_own_server_in_every_section() {
    let rt = runtime();
    let (remote, mut app) = attach_ours(&rt, &[]);
    // A Structs server opens on the Entities tab, with its block height.
    assert_eq!(app.tab(), Tab::Entities);
    assert!(draw(&mut app, 100, 30).contains(" block "));

    // Resources: the schemas and docs; a template's variable completed by the server.
    section(&mut app, "Resources");
    until(&mut app, "guild schema");
    // The templates come after the resources: End goes to the last one listed.
    until(&mut app, "templates 3");
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Enter);
    text(&mut app, "overv");
    until(&mut app, "Ctrl-N: overview");
    ctrl(&mut app, 'n');
    key(&mut app, KeyCode::Enter);
    until(&mut app, "read structs://docs/overview");
    until(&mut app, "structs-console");

    // Prompts: brief's entity id, completed.
    section(&mut app, "Prompts");
    let frame = until(&mut app, "brief");
    assert!(frame.contains("diagnose"), "{frame}");
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::Enter);
    text(&mut app, "1-1");
    until(&mut app, "Ctrl-N: 1-1");
    key(&mut app, KeyCode::Enter);
    until(&mut app, "user:");
    // The instruction whole, wrapped to the pane, not cut at its edge (it ends
    // naming the tool to read more with).
    until(&mut app, "structs_query_entity");
    snapshot(
        "prompt_brief",
        "A prompt's long instruction, wrapped to the pane",
        &mut app,
    );

    // Log: the level set.
    section(&mut app, "Log");
    keys(&mut app, KeyCode::Down, 3);
    key(&mut app, KeyCode::Enter);
    until(&mut app, "server at warning");

    // Tools and the history.
    tool_form(&mut app, &remote, "structs_query_block_height");
    key(&mut app, KeyCode::Enter);
    until(&mut app, "\"height\"");
    section(&mut app, "History");
    until(&mut app, "structs_query_block_height");
    snapshot(
        "history",
        "History: every call made from the Tools section, its outcome and time",
        &mut app,
    );
    key(&mut app, KeyCode::Char('r'));
    until(&mut app, "History 2");
}

/// The traffic names what each message is about, hides the console's own polling on
/// `h`, and keeps what `/` searches for; the tool list finds a tool by `/`.
#[test]
fn the_traffic_names_the_tool_hides_the_consoles_polling_and_filters() {
    let rt = runtime();
    let (remote, mut app) = attach_ours(&rt, &[]);
    // `/` in the tools finds one by a part of its name.
    section(&mut app, "Tools");
    key(&mut app, KeyCode::Char('/'));
    text(&mut app, "pow_work");
    let frame = until(&mut app, "search: pow_work");
    assert!(frame.contains("› structs_list_pow_work"), "{frame}");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    until(&mut app, "Call structs_list_pow_work");
    key(&mut app, KeyCode::Enter);
    until(&mut app, "\"work\"");
    // The console polls the block height by itself every few seconds.
    let start = Instant::now();
    while !remote.wire().messages().iter().any(|m| m.background) {
        assert!(start.elapsed() < Duration::from_secs(10), "no polling seen");
        app.update();
        std::thread::sleep(Duration::from_millis(50));
    }
    section(&mut app, "Traffic");
    let frame = until(&mut app, "tools/call structs_list_pow_work #");
    assert!(
        frame.contains("response structs_list_pow_work #"),
        "{frame}"
    );
    let all = remote
        .wire()
        .kept(structs_console::mcp::client::Which::Messages);
    key(&mut app, KeyCode::Char('h'));
    let frame = until(&mut app, "the console's own polling hidden");
    let own = remote
        .wire()
        .messages()
        .iter()
        .filter(|m| m.background)
        .count();
    assert!(own >= 2, "a poll and its answer");
    assert!(
        frame.contains(&format!("JSON-RPC traffic · {} of {all}", all - own))
            || remote
                .wire()
                .kept(structs_console::mcp::client::Which::Messages)
                > all,
        "{frame}"
    );
    key(&mut app, KeyCode::Char('/'));
    text(&mut app, "pow_work");
    key(&mut app, KeyCode::Enter);
    let frame = until(&mut app, "search: pow_work");
    assert!(frame.contains("JSON-RPC traffic · 2 of "), "{frame}");
    assert!(!frame.contains("structs_query_block_height"), "{frame}");
    // (No snapshot: the count of all messages grows with the polling.)
    assert!(
        frame.contains("→ tools/call structs_list_pow_work #")
            && frame.contains("← response structs_list_pow_work #"),
        "{frame}"
    );
    key(&mut app, KeyCode::Char('/'));
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Char('h'));
    until(&mut app, "structs_query_block_height");
}

/// Our own server under `--confirm-actions` asks the console to confirm an action the
/// operator called from the Server tab. The question says which client asked; the
/// form's yes-or-no shows what to type, holds a whole word, and Space says yes.
#[test]
fn the_operator_confirms_an_action_with_a_visible_yes() {
    let rt = runtime();
    let (remote, mut app) = attach_ours(&rt, &["--confirm-actions"]);
    tool_form(&mut app, &remote, "structs_action_attack");
    text(&mut app, "5-1");
    key(&mut app, KeyCode::Down);
    text(&mut app, "5-2");
    key(&mut app, KeyCode::Enter);
    until(&mut app, "Requests 1!");
    section(&mut app, "Requests");
    until(&mut app, "elicitation/create");
    key(&mut app, KeyCode::Enter);
    let frame = until(&mut app, "y or n (Space turns it over)");
    assert!(
        frame.contains("structs-console (the MCP client that made this call) asks to run"),
        "{frame}"
    );
    key(&mut app, KeyCode::Char(' '));
    until(&mut app, "true▏");
    snapshot(
        "confirm_action",
        "A confirmation asked of the console: who asked, what runs, and the yes typed (Space)",
        &mut app,
    );
    key(&mut app, KeyCode::Enter);
    // The yes goes back with the call, and the server runs it (the rules then judge
    // the attack): no "declined".
    let sent = |wanted: &str| {
        remote
            .wire()
            .messages()
            .iter()
            .any(|m| m.text.contains(wanted))
    };
    let start = Instant::now();
    while !sent(r#""confirm":true"#) || !sent("structs_action_attack") {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the yes was never sent"
        );
        app.update();
        std::thread::sleep(Duration::from_millis(20));
    }
    // Its answer, whatever the rules made of the attack, is not a refusal for want
    // of a yes.
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1) {
        app.update();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!sent("the person declined"));
}

/// A 2026-era server written with the official Python SDK asks its question in a round
/// (`input_required`): the question waits in Requests like one asked mid-call, the
/// operator's answer goes back with the request sent again, and the call completes.
#[test]
fn a_question_asked_in_a_round_is_the_operators_to_answer() {
    let Some(peers) = Peers::find() else { return };
    let rt = runtime();
    let (remote, mut app) = attach_python(&rt, &peers);
    assert_eq!(remote.protocol_version(), "2026-07-28");
    tool_form(&mut app, &remote, "confirm_delete");
    text(&mut app, "x");
    key(&mut app, KeyCode::Enter);
    until(&mut app, "Requests 1!");
    section(&mut app, "Requests");
    until(&mut app, "Delete x?");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    keys(&mut app, KeyCode::Tab, 5);
    until(&mut app, "deleted x");
    // The request went twice: the second time with the answer and the state.
    let sent: Vec<String> = remote
        .wire()
        .messages()
        .iter()
        .filter(|m| m.direction == Direction::Sent && m.method == "tools/call")
        .map(|m| m.text.clone())
        .collect();
    assert_eq!(sent.len(), 2, "{sent:#?}");
    assert!(sent[1].contains("inputResponses") && sent[1].contains("requestState"));
    assert!(sent[1].contains(r#""confirm":true"#), "{}", sent[1]);
    // The answer view shows the round: what was asked and what was answered.
    let frame = until(
        &mut app,
        r#"round 1 · asked elicitation/create "Delete x?" · answered accept"#,
    );
    assert!(frame.contains(r#"{"confirm":true}"#), "{frame}");
    assert!(frame.contains("confirm_delete · result"), "{frame}");
    snapshot(
        "round",
        "A call answered in a round: the question the server asked, the operator's \
         answer, then the tool's result",
        &mut app,
    );
    // However small the terminal, the story and the answer share it.
    for h in 6..=12 {
        draw(&mut app, 40, h);
        draw(&mut app, 24, h);
    }
    // The History marks the call by its rounds.
    section(&mut app, "History");
    until(&mut app, "confirm_delete (1 round)");
}

/// The Server tab declares the Tasks extension for its calls: a Python SDK server runs
/// `slow_square` as a task, the answer view follows its statuses to the result, the
/// History marks it; `x` on a running task asks the server to cancel it.
#[test]
fn a_call_the_server_runs_as_a_task_is_followed_and_cancelled_with_x() {
    let Some(peers) = Peers::find() else { return };
    let rt = runtime();
    let (remote, mut app) = attach_python(&rt, &peers);
    tool_form(&mut app, &remote, "slow_square");
    text(&mut app, "7");
    key(&mut app, KeyCode::Enter);
    let frame = until(&mut app, "\"result\": 49");
    assert!(
        frame.contains("· working · slow_square is running"),
        "{frame}"
    );
    assert!(frame.contains("· completed"), "{frame}");
    let sent = |method: &str| {
        remote
            .wire()
            .messages()
            .iter()
            .filter(|m| m.direction == Direction::Sent && m.method == method)
            .count()
    };
    assert!(sent("tasks/get") >= 1);
    snapshot(
        "task",
        "A call the server ran as a task: each status polled, then the task's result",
        &mut app,
    );
    section(&mut app, "History");
    until(&mut app, "slow_square (task completed)");

    // A long one, cancelled: the server is asked to stop the task and says it did.
    tool_form(&mut app, &remote, "slow_square");
    keys(&mut app, KeyCode::Backspace, 3);
    text(&mut app, "3");
    key(&mut app, KeyCode::Down);
    text(&mut app, "30");
    key(&mut app, KeyCode::Enter);
    let frame = until(&mut app, "· working ·");
    assert!(
        frame.contains("x asks the server to stop the task (tasks/cancel)"),
        "{frame}"
    );
    key(&mut app, KeyCode::Char('x'));
    let frame = until(&mut app, "TOOL_CANCELLED");
    assert!(frame.contains("· cancelled"), "{frame}");
    assert_eq!(sent("tasks/cancel"), 1);
    section(&mut app, "History");
    until(&mut app, "slow_square (task cancelled)");
}

/// A task the server says waits on input: the question waits in Requests like any
/// other, the operator's answer goes back through `tasks/update`, and the call's story
/// shows the task waiting, the answer given, then its end.
#[test]
fn a_task_waiting_on_input_is_answered_by_the_operator() {
    let rt = runtime();
    let target = Target::Command(vec![
        "python3".into(),
        format!(
            "{}/tests/data/hostile_server.py",
            env!("CARGO_MANIFEST_DIR")
        ),
        "task-input".into(),
    ]);
    let remote = rt
        .block_on(Remote::connect_with_options(target, Options::default()))
        .expect("attach to the server");
    let core =
        structs_console::mcp::client::attached_core(remote.clone(), WallClock::Fixed(wall()));
    let mut app = App::new(core, Theme::default(), rt.handle().clone()).with_server(remote.clone());
    tool_form(&mut app, &remote, "echo");
    key(&mut app, KeyCode::Enter);
    until(&mut app, "Requests 1!");
    section(&mut app, "Requests");
    until(&mut app, "your name?");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    keys(&mut app, KeyCode::Tab, 5);
    let frame = until(&mut app, "hello Ada");
    assert!(frame.contains("· input_required"), "{frame}");
    assert!(
        frame.contains(r#"asked elicitation/create "your name?" · answered accept"#),
        "{frame}"
    );
    assert!(frame.contains("(tasks/update)"), "{frame}");
    assert!(frame.contains("· completed"), "{frame}");
    let updates = remote
        .wire()
        .messages()
        .iter()
        .filter(|m| m.direction == Direction::Sent && m.method == "tasks/update")
        .count();
    assert_eq!(updates, 1);
}
