//! The console on a stand-in node written from the node's `openapi.yml`
//! (`tests/support/standin.rs`), not from the sim: players by name, a destroyed struct's
//! status in words beside the chain's number, and infusions, which have no id, by key.

use super::*;
use crate::support::reference::OpenApi;
use crate::support::standin::StandIn;
use structs_console::source::rest::{RestConfig, RestSource};

/// The frame with what differs from run to run in the header made plain: the node's
/// port and the latency of its last answer.
fn steady_frame(app: &mut App, node: &StandIn) -> String {
    let frame = draw(app, 100, 30);
    let mut lines: Vec<String> = frame.lines().map(str::to_string).collect();
    if let Some(header) = lines.first_mut() {
        let width = header.chars().count();
        let plain = header.replace(&node.url, "http://127.0.0.1:PORT");
        // `● 12 ms` → `● N ms`, at a fixed place.
        if let (Some(dot), Some(ms)) = (plain.find('●'), plain.find(" ms")) {
            let left = plain[..dot].trim_end();
            let right = plain[ms + " ms".len()..].trim_end_matches('"').trim_end();
            let mut fixed = format!("{left}   ● N ms{right}");
            while fixed.chars().count() < width - 1 {
                fixed.push(' ');
            }
            fixed.push('"');
            *header = fixed;
        }
    }
    lines.join("\n")
}

fn snapshot_steady(name: &str, description: &str, app: &mut App, node: &StandIn) {
    snapshot_frame(name, description, steady_frame(app, node));
}

/// A console over the REST source reading the stand-in; the node lives as long as the
/// runtime's tasks.
fn console_on_standin() -> Option<(Runtime, StandIn, App)> {
    let api = OpenApi::load()?;
    let runtime = runtime();
    structs_console::source::rest::install_crypto();
    let node = runtime.block_on(StandIn::start(api));
    let mut config = RestConfig::new(&node.url);
    config.rate_limit = None;
    config.height_poll = std::time::Duration::from_secs(3600);
    let rest = runtime
        .block_on(RestSource::connect(config))
        .expect("the stand-in answers");
    let core = structs_console::assembly::builder(rest)
        .clock(WallClock::Fixed(wall()))
        .build()
        .expect("core");
    let mut app = App::new(core, Theme::default(), runtime.handle().clone());
    app.settle();
    Some((runtime, node, app))
}

#[test]
fn the_console_reads_a_node_that_answers_as_the_chain_does() {
    let Some((_rt, node, mut app)) = console_on_standin() else {
        return;
    };
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("1-2  Vega 2 · guild 0-2"), "{frame}");
    snapshot_steady(
        "standin_players_100x30",
        "On a node answering from openapi.yml's shapes: players listed by their chain name",
        &mut app,
        &node,
    );
    // The structs, and the first one opened: a destroyed struct, status 35.
    press(&mut app, KeyCode::Char('h'));
    press_n(&mut app, KeyCode::Down, 4);
    press(&mut app, KeyCode::Enter);
    // Structs listed by their type's name.
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("5-1  Ore Extractor · owner 1-1"), "{frame}");
    press(&mut app, KeyCode::Enter);
    press_n(&mut app, KeyCode::Down, 9);
    press(&mut app, KeyCode::Right);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("status: 35  destroyed (materialized, built, destroy…"),
        "{frame}"
    );
    snapshot_steady(
        "standin_struct_status_100x30",
        "A destroyed struct from the node: the chain's status number with its words beside it",
        &mut app,
        &node,
    );
    // Infusions have no id on the chain: their rows are their keys.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('h'));
    press_n(&mut app, KeyCode::Down, 4);
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("1-1/structs1node1"), "{frame}");
    snapshot_steady(
        "standin_infusions_100x30",
        "Infusions from the node, each row named by its destination and address",
        &mut app,
        &node,
    );
    // Opening one says why it opens nowhere.
    press(&mut app, KeyCode::Enter);
    let status = app.status_text().unwrap_or_default();
    assert!(
        status.contains("infusions have no id on the chain"),
        "{status}"
    );
}
