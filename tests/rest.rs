//! The REST source against `serve-rest`, for real over HTTP: the same entities, lists
//! in the chain's order and shapes, the lookups, the tools on a live source, signed
//! broadcasts, and the faults a node or its proxy brings (latency, 429 with
//! `Retry-After`, 500s, hangs, dropped connections, a node that goes away and comes
//! back), and the client-side rate limit.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use structs_console::clock::WallClock;
use structs_console::entity::records;
use structs_console::error::ErrorCode;
use structs_console::rest::faults::Fault;
use structs_console::rest::server::RestServer;
use structs_console::source::rest::{RestConfig, RestSource};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::source::{GameSource, ListQuery};
use structs_console::{EntityId, EntityKind};

struct Node {
    sim: Arc<SimSource>,
    server: RestServer,
}

async fn node() -> Node {
    let config = WorldConfig::demo();
    let sim = Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ));
    let server = RestServer::start("127.0.0.1:0", sim.clone()).await.unwrap();
    Node { sim, server }
}

/// Quick settings for tests: short timeouts and backoffs, no rate limit.
fn config(url: &str) -> RestConfig {
    let mut c = RestConfig::new(url);
    c.timeout = Duration::from_millis(800);
    c.rate_limit = None;
    c.retries = 3;
    c.backoff_base = Duration::from_millis(10);
    c.backoff_max = Duration::from_millis(50);
    c.max_retry_after = Duration::from_secs(3);
    // The height poller would take faults meant for the calls under test.
    c.height_poll = Duration::from_secs(3600);
    c
}

async fn rest(node: &Node) -> Arc<RestSource> {
    RestSource::connect(config(&node.server.url()))
        .await
        .unwrap()
}

async fn http_get(url: &str) -> (u16, Value) {
    let r = reqwest::get(url).await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_reads_the_same_as_the_sim() {
    let node = node().await;
    let rest = rest(&node).await;
    assert_eq!(rest.info().name, "rest");
    assert_eq!(rest.info().block_height, node.sim.info().block_height);
    for kind in EntityKind::ALL {
        let count = node.sim.with_world(|w| w.count(kind));
        assert!(count > 0, "{kind}");
        for index in [1, count.div_ceil(2), count] {
            let id = EntityId::new(kind, index);
            let want = node.sim.get(id).await.unwrap();
            let got = rest.get(id).await.unwrap();
            assert_eq!(got, want, "{id}");
            assert!(got.is_some(), "{id}");
        }
        let missing = EntityId::new(kind, count + 1);
        assert_eq!(rest.get(missing).await.unwrap(), None, "{missing}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_speaks_the_chains_rest_shapes() {
    let node = node().await;
    let url = node.server.url();
    // A list: bare records under the kind's key, the chain's pagination.
    let (status, v) = http_get(&format!(
        "{url}/structs/player?pagination.limit=5&pagination.count_total=true"
    ))
    .await;
    assert_eq!(status, 200);
    let players = v["Player"].as_array().unwrap();
    assert_eq!(players.len(), 5);
    assert!(players[0].get("gridAttributes").is_none() && players[0]["id"] == "1-1");
    // Byte order of the ids: 1-1, 1-10, 1-11, ...
    let ids: Vec<&str> = players.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["1-1", "1-10", "1-11", "1-12", "1-13"]);
    assert_eq!(v["pagination"]["total"], "24");
    assert_eq!(v["pagination"]["next_key"], "MS0xNA==", "base64 of 1-14");
    // A page from a key: inclusive, and no total (the chain counts only key-less pages).
    let (_, v) = http_get(&format!(
        "{url}/structs/player?pagination.limit=2&pagination.key=MS0xNA%3D%3D"
    ))
    .await;
    assert_eq!(v["Player"][0]["id"], "1-14");
    assert_eq!(v["pagination"]["total"], "0");
    // The address list's key is lower case; single addresses are flat.
    let (_, v) = http_get(&format!("{url}/structs/address?pagination.limit=1")).await;
    let address = v["address"][0]["address"].as_str().unwrap().to_string();
    let (_, one) = http_get(&format!("{url}/structs/address/{address}")).await;
    assert_eq!(one["address"], address.as_str());
    assert!(one["playerId"].as_str().unwrap().starts_with("1-"));
    let (status, unknown) = http_get(&format!("{url}/structs/address/structs1nobody")).await;
    assert_eq!((status, unknown["playerId"].clone()), (200, json!("1-0")));
    // Missing objects, bad parameters and unknown routes as a node answers them.
    let (status, v) = http_get(&format!("{url}/structs/player/1-999")).await;
    assert_eq!(status, 500);
    assert_eq!(v["code"], 2);
    assert!(v["message"].as_str().unwrap().contains("object not found"));
    let (status, v) = http_get(&format!(
        "{url}/structs/player?pagination.key=MS0x&pagination.offset=3"
    ))
    .await;
    // The keeper answers what its paginator refuses as an internal error.
    assert_eq!((status, v["code"].clone()), (500, json!(13)));
    let (status, _) = http_get(&format!("{url}/structs/fleet_by_index/x")).await;
    assert_eq!(status, 400);
    let (status, v) = http_get(&format!("{url}/structs/params")).await;
    assert_eq!((status, v["code"].clone()), (501, json!(12)));
    // The block height and struct types.
    let (_, v) = http_get(&format!("{url}/blockheight")).await;
    assert_eq!(v["blockHeight"], node.sim.info().block_height.to_string());
    let (_, v) = http_get(&format!("{url}/structs/struct_type/14")).await;
    assert_eq!(v["StructType"]["id"], "14");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_follow_next_key_to_the_end_in_the_chains_order() {
    let node = node().await;
    let rest = rest(&node).await;
    for kind in [EntityKind::Player, EntityKind::Struct, EntityKind::Address] {
        let count = node.sim.with_world(|w| w.count(kind));
        // Infusions and addresses are kept by key (an address record by its address).
        let mut want: Vec<String> = match kind {
            EntityKind::Address => node
                .sim
                .with_world(|w| w.addresses.iter().map(|a| a.address.clone()).collect()),
            _ => (1..=count)
                .map(|i| format!("{}-{i}", kind.code()))
                .collect(),
        };
        want.sort();
        let mut got = Vec::new();
        let mut q = ListQuery::new(kind, 7);
        loop {
            let page = rest.list(q.clone()).await.unwrap();
            assert_eq!(page.total, count, "{kind}: every page states the total");
            assert!(page.items.len() <= 7);
            for item in &page.items {
                got.push(records::key_of(kind, item).unwrap());
            }
            match page.next_after {
                Some(k) => q.after = Some(k),
                None => break,
            }
        }
        assert_eq!(got, want, "{kind}");
    }
}

async fn ids_of(source: &dyn GameSource, mut q: ListQuery) -> (BTreeSet<String>, u64) {
    let mut out = BTreeSet::new();
    loop {
        let page = source.list(q.clone()).await.unwrap();
        let total = page.total;
        for item in &page.items {
            let id = records::key_of(q.kind, item).unwrap();
            assert!(out.insert(id.clone()), "{id} twice");
        }
        match page.next_after {
            Some(k) => q.after = Some(k),
            None => return (out, total),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtered_lists_and_lookups_match_the_sim() {
    let node = node().await;
    let rest = rest(&node).await;
    let player = EntityId::parse("1-3").unwrap();
    let guild = EntityId::parse("0-1").unwrap();
    for kind in [
        EntityKind::Struct,
        EntityKind::Planet,
        EntityKind::Address,
        EntityKind::Player,
    ] {
        let mut q = ListQuery::new(kind, 3);
        q.owner = Some(player);
        let (want, total) = ids_of(node.sim.as_ref(), q.clone()).await;
        let (got, rest_total) = ids_of(rest.as_ref(), q).await;
        assert_eq!(got, want, "{kind} of {player}");
        assert_eq!(rest_total, total);
        let mut q = ListQuery::new(kind, 4);
        q.guild = Some(guild);
        let (want, _) = ids_of(node.sim.as_ref(), q.clone()).await;
        let (got, _) = ids_of(rest.as_ref(), q).await;
        assert_eq!(got, want, "{kind} of {guild}");
    }
    let mut q = ListQuery::new(EntityKind::Player, 5);
    q.id_prefix = Some("1-1".into());
    let (got, total) = ids_of(rest.as_ref(), q.clone()).await;
    assert_eq!(got, ids_of(node.sim.as_ref(), q).await.0);
    assert_eq!(total, 11, "1-1 and 1-10 to 1-19");

    // The chain's lookups, straight from the server.
    let url = node.server.url();
    let (_, v) = http_get(&format!("{url}/structs/planet_by_player/1-3")).await;
    assert_eq!(v["Planet"][0]["owner"], "1-3");
    let (_, v) = http_get(&format!("{url}/structs/fleet_by_index/5")).await;
    assert_eq!(v["Fleet"]["id"], "9-5");
    let fleet = rest.fleet_by_index(5).await.unwrap().unwrap();
    assert_eq!(
        fleet,
        node.sim
            .get(EntityId::parse("9-5").unwrap())
            .await
            .unwrap()
            .unwrap()
    );
    assert_eq!(rest.fleet_by_index(9999).await.unwrap(), None);
    let alloc = node
        .sim
        .get(EntityId::parse("6-1").unwrap())
        .await
        .unwrap()
        .unwrap();
    let source_id = alloc["Allocation"]["sourceObjectId"].as_str().unwrap();
    let (_, v) = http_get(&format!("{url}/structs/allocation_by_source/{source_id}")).await;
    assert!(
        v["Allocation"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == "6-1")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_work_on_the_rest_source() {
    let node = node().await;
    let rest = rest(&node).await;
    let live = structs_console::assembly::build(rest.clone());
    let local = structs_console::assembly::build(node.sim.clone());
    // A query with references: the same entity and the same references.
    let args = json!({"id": "1-1", "include_references": true});
    let a = live
        .call("structs_query_entity", args.clone())
        .await
        .unwrap();
    let b = local.call("structs_query_entity", args).await.unwrap();
    assert_eq!(a["entity"], b["entity"]);
    assert_eq!(a["references"], b["references"]);
    assert!(a["references"].as_object().unwrap().len() >= 3);
    // A list through the tool, its key taking the next page from the node.
    let page = live
        .call(
            "structs_list_entities",
            json!({"entity_type": "struct", "page_size": 10}),
        )
        .await
        .unwrap();
    let key = page["pagination"]["next_key"].as_str().unwrap().to_string();
    let next = live
        .call(
            "structs_list_entities",
            json!({"entity_type": "struct", "page_size": 10, "page_key": key}),
        )
        .await
        .unwrap();
    assert_ne!(page["structs"][0], next["structs"][0]);
    // A result over the size limit goes to a handle, as on the sim.
    let big = live
        .call(
            "structs_list_entities",
            json!({"entity_type": "struct", "page_size": 100}),
        )
        .await
        .unwrap();
    assert!(
        big.get("handle").is_some() || big.to_string().len() < 25_600,
        "{big}"
    );
    // Proof-of-work planning reads the work's start and the block height from the node.
    let args = json!({"action_type": "struct_build_complete", "entity_id": "5-1", "hashrate": 1e6});
    let s = live
        .call("structs_calculate_pow_schedule", args.clone())
        .await;
    let l = local.call("structs_calculate_pow_schedule", args).await;
    match (s, l) {
        (Ok(s), Ok(l)) => assert_eq!(s, l),
        (Err(s), Err(l)) => assert_eq!((s.code, s.message.clone()), (l.code, l.message.clone())),
        (s, l) => panic!("different answers: {s:?} / {l:?}"),
    }
    // Docs do not depend on the source.
    let d = live
        .call("structs_docs_search", json!({"query": "proof of work"}))
        .await
        .unwrap();
    assert!(!d["hits"].as_array().unwrap().is_empty());
    // What needs signing says so.
    let e = live
        .call(
            "structs_action_submit_transaction",
            json!({"transaction": {"messages": [{"@type": "/structs.structs.MsgStructDeactivate", "structId": "5-1"}]}}),
        )
        .await
        .unwrap_err();
    assert!(e.message.contains("signed transactions"), "{}", e.message);
    assert!(e.message.contains("tx_bytes"), "{}", e.message);
    // A bad page key is refused before any request.
    let e = live
        .call(
            "structs_list_entities",
            json!({"entity_type": "player", "page_key": "not a key"}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ValidationInvalidFormat);
}

fn online_struct(sim: &SimSource) -> String {
    sim.with_world(|w| {
        let i = w
            .structs
            .iter()
            .position(|s| s.online)
            .expect("an online struct");
        format!("5-{}", i + 1)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_transactions_are_broadcast_and_answered() {
    let node = node().await;
    let rest = rest(&node).await;
    let live = structs_console::assembly::build(rest.clone());
    let b64 = |v: &Value| base64::engine::general_purpose::STANDARD.encode(v.to_string());
    // Bytes the node cannot decode: rejected, with the node's code and log.
    let v = live
        .call(
            "structs_action_submit_transaction",
            json!({"tx_bytes": base64::engine::general_purpose::STANDARD.encode([8, 1, 2, 3])}),
        )
        .await
        .unwrap();
    assert_eq!(
        (v["status"].clone(), v["code"].clone()),
        (json!("rejected"), json!(2))
    );
    assert_eq!(v["codespace"], "sdk");
    assert_eq!(v["transaction_hash"].as_str().unwrap().len(), 64);
    // A transaction the rules refuse.
    let tx = json!({"body": {"messages": [{"@type": "/structs.structs.MsgStructActivate", "structId": "5-99999"}]}});
    let v = live
        .call(
            "structs_action_submit_transaction",
            json!({"tx_bytes": b64(&tx)}),
        )
        .await
        .unwrap();
    assert_eq!(v["status"], "rejected", "{v}");
    assert!(!v["raw_log"].as_str().unwrap().is_empty());
    // One it takes: the node's world changes.
    let id = online_struct(&node.sim);
    let tx = json!({"body": {"messages": [{"@type": "/structs.structs.MsgStructDeactivate", "structId": id}]}});
    let v = live
        .call(
            "structs_action_submit_transaction",
            json!({"tx_bytes": b64(&tx)}),
        )
        .await
        .unwrap();
    assert_eq!(
        (v["status"].clone(), v["code"].clone()),
        (json!("accepted"), json!(0)),
        "{v}"
    );
    assert_eq!(v["node_result"]["txhash"], v["transaction_hash"]);
    // Named as a node names it: the SHA-256 of the bytes.
    assert_eq!(
        v["transaction_hash"],
        structs_console::chain::bytes_hash(tx.to_string().as_bytes())
    );
    let index: usize = id[2..].parse().unwrap();
    assert!(!node.sim.with_world(|w| w.structs[index - 1].online));
    // Not base64, or both kinds at once: refused before anything is sent.
    let e = live
        .call(
            "structs_action_submit_transaction",
            json!({"tx_bytes": "%%%"}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ValidationInvalidFormat);
    let e = live
        .call(
            "structs_action_submit_transaction",
            json!({"tx_bytes": "AA==", "transaction": {"messages": []}}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ValidationError);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_are_retried_after_the_nodes_wait_then_reported() {
    let node = node().await;
    let rest = rest(&node).await;
    let id = EntityId::parse("1-2").unwrap();
    // Once, with Retry-After: 1 s: the call waits that long and succeeds.
    node.server.faults.push([Fault::RateLimited {
        retry_after_secs: Some(1),
    }]);
    let started = Instant::now();
    assert!(rest.get(id).await.unwrap().is_some());
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    // More often than the retries allow: RATE_LIMIT_EXCEEDED with the node's wait.
    rest.clear_cache();
    node.server.faults.push(std::iter::repeat_n(
        Fault::RateLimited {
            retry_after_secs: None,
        },
        4,
    ));
    let e = rest.get(id).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::RateLimitExceeded);
    assert_eq!(e.extra["attempts"], 4);
    // A wait longer than the client will hold a call: reported at once, with it.
    node.server.faults.push([Fault::RateLimited {
        retry_after_secs: Some(120),
    }]);
    let started = Instant::now();
    let e = rest.get(id).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::RateLimitExceeded);
    assert_eq!(e.extra["retry_after_secs"], 120);
    assert!(e.message.contains("120 s"));
    assert!(started.elapsed() < Duration::from_secs(1));
    let wire = e.to_json("t");
    assert_eq!(wire["error"]["code"], "RATE_LIMIT_EXCEEDED");
    assert_eq!(wire["error"]["details"]["retry_after_secs"], 120);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_retried_then_reported_with_the_nodes_status() {
    let node = node().await;
    let rest = rest(&node).await;
    let id = EntityId::parse("2-2").unwrap();
    let fail = |status: u16| Fault::Status {
        status,
        message: format!("injected {status}"),
    };
    // Two 500s, then the answer.
    let before = node.server.faults.requests();
    node.server.faults.push([fail(500), fail(503)]);
    assert!(rest.get(id).await.unwrap().is_some());
    assert_eq!(node.server.faults.requests() - before, 3);
    // Always failing: API_ERROR with the status and message, after every retry.
    rest.clear_cache();
    node.server.faults.push(std::iter::repeat_n(fail(500), 4));
    let e = rest.get(id).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ApiError);
    assert_eq!(e.extra["status"], 500);
    assert_eq!(e.extra["node_message"], "injected 500");
    assert_eq!(e.extra["attempts"], 4);
    // A 400 is not retried.
    let before = node.server.faults.requests();
    node.server.faults.push([fail(400)]);
    let e = rest.get(id).await.unwrap_err();
    assert_eq!(
        (e.code, e.extra["status"].clone()),
        (ErrorCode::ApiError, json!(400))
    );
    assert_eq!(node.server.faults.requests() - before, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_and_dropped_connections_are_retried_then_reported() {
    let node = node().await;
    let rest = rest(&node).await;
    let id = EntityId::parse("3-1").unwrap();
    // One hang past the 800 ms timeout, then the answer.
    node.server
        .faults
        .push([Fault::Hang(Duration::from_secs(3))]);
    assert!(rest.get(id).await.unwrap().is_some());
    // Hanging every time: API_UNAVAILABLE naming the timeout.
    rest.clear_cache();
    node.server
        .faults
        .push(std::iter::repeat_n(Fault::Hang(Duration::from_secs(3)), 4));
    let e = rest.get(id).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ApiUnavailable);
    assert!(e.message.contains("within 800 ms"), "{}", e.message);
    node.server.faults.clear();
    // A connection cut after the headers, then the answer.
    rest.clear_cache();
    node.server.faults.push([Fault::Drop, Fault::Drop]);
    assert!(rest.get(id).await.unwrap().is_some());
    let health = rest.health().unwrap();
    assert!(health.errors >= 7, "{health:?}");
    assert!(health.connected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_goes_away_and_comes_back_is_used_again() {
    let node = node().await;
    let addr = node.server.addr;
    let sim = node.sim.clone();
    let rest = RestSource::connect(config(&node.server.url()))
        .await
        .unwrap();
    assert!(
        rest.get(EntityId::parse("1-1").unwrap())
            .await
            .unwrap()
            .is_some()
    );
    // The node stops: every connection is cut, new ones are refused.
    node.server.stop().await;
    // Hold the port (bound, not listening: connections are refused) so that no other
    // test's server is given it while the client retries.
    let hold = tokio::net::TcpSocket::new_v4().unwrap();
    hold.set_reuseaddr(true).unwrap();
    hold.bind(addr).unwrap();
    let e = rest.get(EntityId::parse("1-2").unwrap()).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ApiUnavailable);
    assert!(!rest.health().unwrap().connected);
    drop(hold);
    // Back on the same address: the next call reconnects.
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let _server = RestServer::on(listener, sim).await.unwrap();
    assert!(
        rest.get(EntityId::parse("1-2").unwrap())
            .await
            .unwrap()
            .is_some()
    );
    assert!(rest.health().unwrap().connected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_side_rate_limit_spaces_requests() {
    let node = node().await;
    let mut c = config(&node.server.url());
    c.rate_limit = Some(40.0);
    c.rate_burst = 5;
    let rest = RestSource::connect(c).await.unwrap();
    let before = node.server.faults.requests();
    let started = Instant::now();
    let mut calls = Vec::new();
    for i in 1..=20 {
        let r = rest.clone();
        calls.push(tokio::spawn(async move {
            r.get(EntityId::new(EntityKind::Struct, i)).await.unwrap()
        }));
    }
    for c in calls {
        assert!(c.await.unwrap().is_some());
    }
    let took = started.elapsed();
    let sent = node.server.faults.requests() - before;
    assert!(sent >= 20);
    // 20 requests at 40 per second in bursts of 5: five at once, then one every 25 ms.
    assert!(took >= Duration::from_millis(15 * 25 - 10), "{took:?}");
    assert!(
        took < Duration::from_millis(19 * 25),
        "the burst went at once: {took:?}"
    );
}

/// An event that names an entity drops it from the cache: the next read goes to the
/// node, and the others still come from the cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entity_an_event_changed_is_read_fresh() {
    let node = node().await;
    let rest = RestSource::connect(config(&node.server.url()))
        .await
        .unwrap();
    let (changed, kept) = (
        EntityId::parse("1-5").unwrap(),
        EntityId::parse("1-6").unwrap(),
    );
    for id in [changed, kept] {
        rest.get(id).await.unwrap();
    }
    assert_eq!(rest.cache_stats(), (0, 2));
    rest.forget(&[changed]);
    for id in [changed, kept] {
        rest.get(id).await.unwrap();
    }
    // 1-6 from the cache; 1-5 from the node.
    assert_eq!(rest.cache_stats(), (1, 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_within_a_block_come_from_the_cache() {
    let node = node().await;
    let mut c = config(&node.server.url());
    c.height_poll = Duration::from_millis(100);
    let rest = RestSource::connect(c).await.unwrap();
    let id = EntityId::parse("1-5").unwrap();
    let before = node.server.faults.requests();
    for _ in 0..5 {
        rest.get(id).await.unwrap();
    }
    let (hits, reads) = rest.cache_stats();
    assert_eq!((hits, reads), (4, 5));
    // A new block empties the cache.
    node.sim.clock().step(1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(rest.info().block_height, node.sim.info().block_height);
    let polls = node.server.faults.requests() - before;
    rest.get(id).await.unwrap();
    assert_eq!(rest.cache_stats(), (4, 6));
    assert!(
        node.server.faults.requests() - before > polls,
        "the read went to the node"
    );
}

/// The height header of a node's answer moves the source to a new block at once,
/// without waiting for its poll of `/blockheight`, and the block's cache goes with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answers_height_header_moves_the_source_to_its_block() {
    let node = node().await;
    // `config` polls the height once an hour: only the header can tell of a new block.
    let rest = rest(&node).await;
    let (a, b) = (
        EntityId::parse("1-5").unwrap(),
        EntityId::parse("1-6").unwrap(),
    );
    rest.get(a).await.unwrap();
    let start = rest.info().block_height;
    node.sim.clock().step(3);
    // A read of another entity goes to the node, and its answer names the new block.
    rest.get(b).await.unwrap();
    assert_eq!(rest.info().block_height, start + 3);
    // What was cached at the old block is read again.
    let before = node.server.faults.requests();
    rest.get(a).await.unwrap();
    assert_eq!(node.server.faults.requests() - before, 1, "1-5 read again");
}

/// The binaries end to end: `serve-rest` on a free port, and a headless server reading
/// it with `--source rest`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_rest_and_a_headless_rest_source_work_together() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use tokio::io::AsyncBufReadExt;
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args([
            "serve-rest",
            "--listen",
            "127.0.0.1:0",
            "--paused",
            "--log-level",
            "warn",
        ])
        // serve-rest takes this token too; the REST source sends none.
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(serve.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("serve-rest prints its address")
        .unwrap()
        .unwrap();
    let url = line.rsplit(' ').next().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");

    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args([
        "--headless",
        "--source",
        "rest",
        "--endpoint",
        &url,
        "--log-level",
        "warn",
    ]);
    let client = ().serve(rmcp::transport::TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let r = client
        .call_tool(
            CallToolRequestParams::new("structs_query_entity")
                .with_arguments(json!({"id": "1-1"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let v = r.structured_content.unwrap();
    let config = WorldConfig::demo();
    let sim = SimSource::new(config, BlockClock::paused(config.genesis_height));
    let want = sim
        .get(EntityId::parse("1-1").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(v["entity"], want);
    client.cancel().await.unwrap();

    // A node that is not there: the server refuses to start and says why.
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args([
            "--headless",
            "--source",
            "rest",
            "--endpoint",
            "http://127.0.0.1:1",
            "--retries",
            "0",
        ])
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot connect to http://127.0.0.1:1"),
        "{err}"
    );
}

/// An agent debugged on the embedded world sees what it will see live: the list tools
/// answer the same items, in the same order, in the same shape, from the sim and from
/// a node (here the same world served over REST), page after page, filtered or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_tools_answer_alike_from_the_sim_and_from_a_node() {
    let node = node().await;
    let fixed = WallClock::Fixed("2026-11-21T12:00:00Z".parse().unwrap());
    let sim_core = structs_console::assembly::build_with_clock(node.sim.clone(), fixed);
    let rest_core = structs_console::assembly::build_with_clock(rest(&node).await, fixed);
    let mut compared = 0;
    for args in [
        json!({"entity_type": "player", "page_size": 7}),
        json!({"entity_type": "struct", "page_size": 25}),
        json!({"entity_type": "planet", "page_size": 10, "owner": "1-3"}),
        json!({"entity_type": "struct", "page_size": 4, "owner": "1-11"}),
        json!({"entity_type": "fleet", "page_size": 6, "guild_id": "0-2"}),
        json!({"entity_type": "player", "page_size": 3, "id_prefix": "1-1"}),
        json!({"entity_type": "substation", "page_size": 5}),
        json!({"entity_type": "guild", "page_size": 2}),
    ] {
        // Each source's page keys are its own: follow each with its own.
        let (mut sim_args, mut rest_args) = (args.clone(), args.clone());
        loop {
            let a = sim_core
                .call_json("structs_list_entities", sim_args.clone())
                .await
                .unwrap();
            let b = rest_core
                .call_json("structs_list_entities", rest_args.clone())
                .await
                .unwrap();
            let items = |v: &Value| {
                let kind = v["entity_type"].as_str().unwrap().to_string();
                let plural = EntityKind::parse_name_or_code(&kind).unwrap().plural();
                v[plural].as_array().unwrap().clone()
            };
            assert_eq!(items(&a), items(&b), "{sim_args}");
            assert_eq!(a["pagination"]["total"], b["pagination"]["total"], "{args}");
            compared += 1;
            match (&a["pagination"]["next_key"], &b["pagination"]["next_key"]) {
                (Value::Null, Value::Null) => break,
                (Value::String(ka), Value::String(kb)) => {
                    sim_args["page_key"] = json!(ka);
                    rest_args["page_key"] = json!(kb);
                }
                (ka, kb) => panic!("{args}: one source has more pages: sim {ka}, node {kb}"),
            }
        }
    }
    assert!(compared >= 10, "{compared} pages compared");
    // The chain's order of ids, by their bytes.
    let first = sim_core
        .call_json("structs_list_players", json!({"page_size": 4}))
        .await
        .unwrap();
    let ids: Vec<&str> = first["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["Player"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["1-1", "1-10", "1-11", "1-12"]);
    // The core record under its wrapper, no attribute blocks.
    let keys: Vec<&String> = first["players"][0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["Player"]);
}
