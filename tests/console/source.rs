//! The header over a live-looking source and its event feed, the feed's events in the
//! event log, and the source dialog that switches between the sim and a node.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use structs_console::EntityId;
use structs_console::clock::WallClock;
use structs_console::source::GameSource;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::tui::{App, Theme};
use tokio::runtime::Runtime;

use crate::support::console::{draw, draw_buffer, press, runtime, type_text, wall};
use crate::{row_text, sim, snapshot};

/// The sim seen as a live node: a REST source's name and endpoint, and fixed connection
/// figures, so the header's frame is the same every time.
struct LiveLooking {
    sim: SimSource,
    health: structs_console::source::SourceHealth,
}

impl GameSource for LiveLooking {
    fn info(&self) -> structs_console::source::SourceInfo {
        let mut info = self.sim.info();
        info.name = "rest";
        info.description = "http://node.example:1317".into();
        info.paused = false;
        info
    }
    fn get(
        &self,
        id: EntityId,
    ) -> structs_console::source::BoxFuture<
        '_,
        Result<Option<serde_json::Value>, structs_console::ToolError>,
    > {
        self.sim.get(id)
    }
    fn list(
        &self,
        query: structs_console::source::ListQuery,
    ) -> structs_console::source::BoxFuture<
        '_,
        Result<structs_console::source::Page, structs_console::ToolError>,
    > {
        self.sim.list(query)
    }
    fn health(&self) -> Option<structs_console::source::SourceHealth> {
        Some(self.health.clone())
    }
}

/// A feed with fixed figures whose bus the test publishes on.
struct FixedFeed(
    structs_console::events::FeedHealth,
    structs_console::events::EventBus,
);

impl structs_console::events::EventFeed for FixedFeed {
    fn bus(&self) -> structs_console::events::EventBus {
        self.1.clone()
    }
    fn health(&self) -> structs_console::events::FeedHealth {
        self.0.clone()
    }
}

fn live_console(connected: bool) -> (Runtime, App) {
    let (runtime, app, _) = live_console_with_bus(connected);
    (runtime, app)
}

fn live_console_with_bus(connected: bool) -> (Runtime, App, structs_console::events::EventBus) {
    let runtime = runtime();
    let health = structs_console::source::SourceHealth {
        endpoint: "http://node.example:1317".into(),
        connected,
        requests: 40,
        errors: 2,
        latency_ms: 21.4,
        last_latency_ms: 19.0,
        last_error: None,
        cache_hits: 0,
        cache_reads: 0,
    };
    let feed = structs_console::events::FeedHealth {
        url: "nats://127.0.0.1:4222".into(),
        connected: true,
        events: 14,
        ..Default::default()
    };
    let bus = structs_console::events::EventBus::new();
    let core = structs_console::assembly::builder(Arc::new(LiveLooking { sim: sim(), health }))
        .clock(WallClock::Fixed(wall()))
        .event_feed(Arc::new(FixedFeed(feed, bus.clone())))
        .build()
        .expect("core");
    let mut app = App::new(core, Theme::default(), runtime.handle().clone());
    app.settle();
    (runtime, app, bus)
}

#[test]
fn the_header_shows_a_live_source_and_its_event_feed() {
    let (_rt, mut app) = live_console(true);
    snapshot(
        "header_live_source_120x12",
        "A REST source with its latency and errors, and a NATS event feed with its events",
        &mut app,
        120,
        12,
    );
    // Narrower, the figures shorten before they go.
    let narrow = row_text(&draw_buffer(&mut app, 60, 12), 0);
    assert!(narrow.contains("● 21 ms · 2✕"), "{narrow}");
    assert!(
        narrow.contains("nats ●") && narrow.contains("block 120000"),
        "{narrow}"
    );
    let (_rt, mut app) = live_console(false);
    let header = row_text(&draw_buffer(&mut app, 120, 12), 0);
    assert!(header.contains("✕ unreachable · 2 errors"), "{header}");
}

#[test]
fn the_event_log_shows_the_feeds_events() {
    let (_rt, mut app, bus) = live_console_with_bus(true);
    press(&mut app, KeyCode::Char('e'));
    let id = EntityId::parse("5-3").unwrap();
    bus.publish(structs_console::events::GameEvent {
        seq: 0,
        block: 120_007,
        category: "struct_health",
        entity: id,
        changed: vec![id],
        summary: "5-3 struct_health from NATS".into(),
        detail: json!({"struct_id": "5-3", "health": 2}),
        tx_hash: None,
        trace: None,
    });
    app.settle();
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("5-3 struct_health from NATS"), "{frame}");
}

#[test]
fn the_source_dialog_switches_to_a_node_and_back() {
    use structs_console::rest::server::RestServer;
    use structs_console::source::rest::RestConfig;
    use structs_console::source::switch::{SwitchSource, Switcher};
    let runtime = runtime();
    // A node serving another world (seed 7), on a free port.
    let other = WorldConfig {
        seed: 7,
        ..WorldConfig::demo()
    };
    let node_sim = Arc::new(SimSource::new(other, BlockClock::paused(130_000)));
    let server = runtime
        .block_on(RestServer::start("127.0.0.1:0", node_sim))
        .expect("serve-rest");
    let first: Arc<dyn GameSource> = Arc::new(sim());
    let switch = runtime.block_on(async { SwitchSource::new(first) });
    let core = structs_console::assembly::builder(switch.clone())
        .clock(WallClock::Fixed(wall()))
        .build()
        .expect("core");
    let switcher = Switcher::new(
        switch,
        Box::new(|| Arc::new(sim()) as Arc<dyn GameSource>),
        Box::new(|endpoint: &str| {
            let mut c = RestConfig::new(endpoint);
            c.retries = 0;
            c.timeout = std::time::Duration::from_secs(2);
            c
        }),
        None,
    );
    let mut app =
        App::new(core, Theme::default(), runtime.handle().clone()).with_switcher(switcher);
    app.settle();
    press(&mut app, KeyCode::Char('S'));
    snapshot(
        "source_dialog_100x24",
        "The source dialog over the entities: the embedded world chosen, a REST endpoint offered",
        &mut app,
        100,
        24,
    );
    // A node that is not there: the dialog says why and the console keeps its source.
    press(&mut app, KeyCode::Down);
    app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    type_text(&mut app, "http://127.0.0.1:1");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 24);
    assert!(
        frame.contains("cannot connect to http://127.0.0.1:1"),
        "{frame}"
    );
    assert!(row_text(&draw_buffer(&mut app, 100, 24), 0).contains("sim · seed 42"));
    // Closing the dialog while it connects gives the connection up.
    app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    type_text(&mut app, &server.url());
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    app.settle();
    assert!(row_text(&draw_buffer(&mut app, 100, 24), 0).contains("sim · seed 42"));
    // The node: the header names it and the list is read from it.
    press(&mut app, KeyCode::Char('S'));
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    let buffer = draw_buffer(&mut app, 100, 24);
    let header = row_text(&buffer, 0);
    assert!(
        header.contains(&format!("rest · {}", server.url())),
        "{header}"
    );
    assert!(header.contains("block 130000"), "{header}");
    assert!(
        app.status_text().unwrap_or("").contains("source: rest"),
        "{:?}",
        app.status_text()
    );
    assert!(
        !draw(&mut app, 100, 24).contains("│ Now:"),
        "the dialog closed"
    );
    // And back to the embedded world.
    press(&mut app, KeyCode::Char('S'));
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Enter);
    let header = row_text(&draw_buffer(&mut app, 100, 24), 0);
    assert!(
        header.contains("sim · seed 42") && header.contains("block 120000"),
        "{header}"
    );
    drop(server);
}

/// The source dialog moves with j and k like every list, and Enter on the source
/// already in use changes nothing (the open entity stays open).
#[test]
fn the_source_dialog_moves_with_j_and_k_and_keeps_the_source_in_use() {
    use structs_console::source::rest::RestConfig;
    use structs_console::source::switch::{SwitchSource, Switcher};
    let runtime = runtime();
    let first: Arc<dyn GameSource> = Arc::new(sim());
    let switch = runtime.block_on(async { SwitchSource::new(first) });
    let core = structs_console::assembly::builder(switch.clone())
        .clock(WallClock::Fixed(wall()))
        .build()
        .expect("core");
    let switcher = Switcher::new(
        switch,
        Box::new(|| Arc::new(sim()) as Arc<dyn GameSource>),
        Box::new(RestConfig::new),
        None,
    );
    let mut app =
        App::new(core, Theme::default(), runtime.handle().clone()).with_switcher(switcher);
    app.settle();
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.references_query().expect("1-1 open")["id"], "1-1");
    press(&mut app, KeyCode::Char('S'));
    press(&mut app, KeyCode::Char('j'));
    let frame = draw(&mut app, 100, 24);
    assert!(frame.contains("› rest"), "j moves down: {frame}");
    // On the endpoint, j and k type.
    type_text(&mut app, "jk");
    let frame = draw(&mut app, 100, 24);
    assert!(frame.contains("1317jk"), "{frame}");
    press(&mut app, KeyCode::Up);
    let frame = draw(&mut app, 100, 24);
    assert!(frame.contains("› sim"), "{frame}");
    press(&mut app, KeyCode::Char('k'));
    let frame = draw(&mut app, 100, 24);
    assert!(frame.contains("› sim"), "k stays on the first: {frame}");
    press(&mut app, KeyCode::Enter);
    assert!(
        app.status_text()
            .is_some_and(|s| s.contains("already using the embedded world")),
        "{:?}",
        app.status_text()
    );
    assert_eq!(app.references_query().expect("1-1 still open")["id"], "1-1");
}
