//! Game events over a real `nats-server`: the sim's events published in GRASS's shape
//! and read back as the same events, raw GRASS messages read as events, a restart of the
//! server survived on both sides, and a headless server on a REST source that tells its
//! MCP client about changes it learnt over NATS.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use structs_console::events::{EventFeed, GameEvent};
use structs_console::nats::{Heard, NatsFeed, NatsPublisher};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use support::nats::NatsServer;

fn sim() -> Arc<SimSource> {
    let config = WorldConfig::demo();
    Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ))
}

/// Deactivates one online struct of the sim through the rules; its events go out on the
/// sim's bus.
fn deactivate_one(sim: &SimSource) -> Vec<GameEvent> {
    let id = sim.with_world(|w| {
        let i = w
            .structs
            .iter()
            .position(|s| s.online)
            .expect("an online struct");
        format!("5-{}", i + 1)
    });
    let tx = json!({"body": {"messages": [
        {"@type": "/structs.structs.MsgStructDeactivate", "structId": id}]}});
    let messages = structs_console::chain::messages(&tx, "transaction")
        .unwrap()
        .iter()
        .map(|(path, m)| structs_console::chain::parse(m, path).unwrap())
        .collect::<Vec<_>>();
    sim.apply(&tx, &messages).unwrap().events
}

/// Reads events from `rx` until `n` arrived or 5 s passed.
async fn collect(rx: &mut tokio::sync::broadcast::Receiver<GameEvent>, n: usize) -> Vec<GameEvent> {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while out.len() < n {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Ok(e)) => out.push(e),
            _ => break,
        }
    }
    out
}

fn same(a: &GameEvent, b: &GameEvent) -> bool {
    (
        a.block, a.category, a.entity, &a.changed, &a.summary, &a.detail, &a.tx_hash,
    ) == (
        b.block, b.category, b.entity, &b.changed, &b.summary, &b.detail, &b.tx_hash,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sims_events_travel_over_nats_unchanged() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let sim = sim();
    let feed = NatsFeed::connect(&nats.url(), None).await.unwrap();
    let publisher = NatsPublisher::start(&nats.url(), sim.clone())
        .await
        .unwrap();
    let mut rx = feed.bus().subscribe();
    let sent = deactivate_one(&sim);
    assert!(!sent.is_empty());
    let got = collect(&mut rx, sent.len()).await;
    assert_eq!(got.len(), sent.len(), "every event arrives");
    for (a, b) in sent.iter().zip(&got) {
        assert!(same(a, b), "sent {a:?}\ngot {b:?}");
    }
    assert_eq!(publisher.published(), sent.len() as u64);
    let h = feed.health();
    assert!(
        h.connected && h.events == sent.len() as u64 && h.errors == 0,
        "{h:?}"
    );
    assert!(h.latency_ms.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grass_messages_become_events_and_heights() {
    let Some(nats) = NatsServer::start() else {
        return;
    };
    let heights = Arc::new(Mutex::new(Vec::new()));
    let changed = Arc::new(Mutex::new(Vec::new()));
    let (h, c) = (heights.clone(), changed.clone());
    let feed = NatsFeed::connect(
        &nats.url(),
        Some(Box::new(move |heard| match heard {
            Heard::Height(height) => h.lock().unwrap().push(height),
            Heard::Changed(ids) => c
                .lock()
                .unwrap()
                .push(ids.iter().map(ToString::to_string).collect::<Vec<_>>()),
        })),
    )
    .await
    .unwrap();
    let mut rx = feed.bus().subscribe();
    let client = async_nats::connect(nats.url()).await.unwrap();
    let publish = |subject: &'static str, v: Value| {
        let client = client.clone();
        async move { client.publish(subject, v.to_string().into()).await.unwrap() }
    };
    publish(
        "consensus",
        json!({"subject": "consensus", "category": "block", "height": 4242}),
    )
    .await;
    publish(
        "structs.planet.2-1.1-1",
        json!({"subject": "structs.planet.2-1.1-1", "category": "struct_status", "seq": 9,
               "planet_id": "2-1", "player_id": "1-1",
               "detail": {"struct_id": "5-3", "status": "online", "status_old": "built"}}),
    )
    .await;
    publish(
        "structs.grid.player.1-4",
        json!({"subject": "structs.grid.player.1-4", "category": "ore", "object_id": "1-4",
               "object_type": "player", "value": 12, "value_old": 9}),
    )
    .await;
    publish("structs.junk", json!(["not", "an", "object"])).await;
    client.flush().await.unwrap();
    let got = collect(&mut rx, 2).await;
    assert_eq!(got.len(), 2);
    assert_eq!(
        (got[0].category, got[0].entity.to_string()),
        ("struct_status", "5-3".into())
    );
    assert_eq!(got[0].block, 4242, "the block from consensus");
    assert!(got[0].changed.iter().any(|id| id.to_string() == "1-1"));
    assert_eq!(
        (got[1].category, got[1].entity.to_string()),
        ("ore", "1-4".into())
    );
    assert_eq!(*heights.lock().unwrap(), [4242]);
    // The source heard what each event changed (a REST source's cache drops them).
    let heard = changed.lock().unwrap().clone();
    assert_eq!(heard.len(), 2, "{heard:?}");
    assert_eq!(heard[0][0], "5-3");
    assert!(heard[0].contains(&"1-1".to_string()), "{heard:?}");
    assert_eq!(heard[1][0], "1-4");
    // The junk message counts as an error, and nothing else does.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let h = feed.health();
    assert_eq!((h.received, h.events, h.errors), (4, 2, 1), "{h:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_sides_come_back_after_the_server_restarts() {
    let Some(mut nats) = NatsServer::start() else {
        return;
    };
    let sim = sim();
    let feed = NatsFeed::connect(&nats.url(), None).await.unwrap();
    let publisher = NatsPublisher::start(&nats.url(), sim.clone())
        .await
        .unwrap();
    let mut rx = feed.bus().subscribe();
    let first = deactivate_one(&sim);
    let before = collect(&mut rx, first.len()).await;
    assert_eq!(before.len(), first.len());

    nats.restart();
    // Both clients reconnect by themselves (the feed subscribing again).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !(feed.health().connected && feed.health().reconnects >= 1) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{:?}",
            feed.health()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The subscription is back once the server has it; retry the publish until seen.
    let mut after = Vec::new();
    for _ in 0..20 {
        let sent = deactivate_one(&sim);
        publisher.flush().await.unwrap();
        after = collect(&mut rx, sent.len()).await;
        if !after.is_empty() {
            assert!(same(&sent[0], &after[0]));
            break;
        }
    }
    assert!(!after.is_empty(), "events flow again after the restart");
    // Nothing delivered before the restart was lost: the feed counted it all.
    let h = feed.health();
    assert!(h.events >= (before.len() + after.len()) as u64, "{h:?}");
    assert!(h.errors >= 1, "the disconnection was reported");
}

/// A headless server reading a REST node and its NATS events: an MCP client subscribed
/// to a player hears of a change the node's world made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_server_on_a_live_source_notifies_from_nats() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use support::mcp::Updates;

    let Some(nats) = NatsServer::start() else {
        return;
    };
    let sim = sim();
    let node = structs_console::rest::server::RestServer::start("127.0.0.1:0", sim.clone())
        .await
        .unwrap();
    let _publisher = NatsPublisher::start(&nats.url(), sim.clone())
        .await
        .unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args([
        "--headless",
        "--source",
        "rest",
        "--endpoint",
        &node.url(),
        "--events",
        &nats.url(),
        "--log-level",
        "warn",
    ]);
    let updates = Updates::default();
    let client = updates
        .clone()
        .serve(rmcp::transport::TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    // The owner of the struct about to be switched off.
    let (sid, owner) = sim.with_world(|w| {
        let i = w.structs.iter().position(|s| s.online).unwrap();
        (format!("5-{}", i + 1), format!("1-{}", w.structs[i].owner))
    });
    let r = client
        .call_tool(
            CallToolRequestParams::new("structs_subscription_subscribe").with_arguments(
                json!({"entity_type": "player", "entity_id": owner})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{:?}", r.structured_content);
    let events = deactivate_one(&sim);
    assert!(events.iter().any(|e| e.entity.to_string() == sid));
    let uri = format!("structs://entities/{owner}");
    let mut seen = false;
    for _ in 0..100 {
        if updates.0.lock().unwrap().contains(&uri) {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(seen, "no update for {uri}: {:?}", updates.0.lock().unwrap());
    client.cancel().await.unwrap();
}
