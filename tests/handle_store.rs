//! Both handle stores through one suite, and the Redis store for real: shared between
//! servers, and a Redis that goes away and comes back.
//!
//! The Redis cases start their own `redis-server` (see `support/redis.rs`); without one
//! installed they are skipped with a note, except under CI, where they fail.

mod support;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use structs_console::Core;
use structs_console::clock::WallClock;
use structs_console::handles::page::merge;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::store::redis::RedisStore;
use structs_console::store::{EXPIRED_MEMORY, HandleMeta, HandleStore, MemoryStore, Missing};
use support::redis::RedisServer;

const T0: &str = "2026-11-21T12:00:00Z";

fn t0() -> DateTime<Utc> {
    T0.parse().unwrap()
}

fn meta(handle: &str, created: DateTime<Utc>, ttl_secs: i64, data: &Value) -> HandleMeta {
    HandleMeta {
        handle: handle.into(),
        tool: "structs_list_players".into(),
        size_bytes: serde_json::to_vec(data).unwrap().len(),
        rows: 3,
        created,
        expires: created + Duration::seconds(ttl_secs),
        hits: 0,
        owner: None,
    }
}

async fn get(store: &dyn HandleStore, handle: &str, now: DateTime<Utc>) -> Result<Value, Missing> {
    store
        .get(handle, now)
        .await
        .expect("the store answers")
        .map(|s| (*s.data).clone())
}

fn names(list: &[HandleMeta]) -> Vec<&str> {
    list.iter().map(|m| m.handle.as_str()).collect()
}

/// A result of about a megabyte with nesting, unicode and every JSON type.
fn big_result() -> Value {
    let players: Vec<Value> = (1..=2_000)
        .map(|i| {
            json!({"id": format!("1-{i}"), "name": format!("joueur·{i} ☄"), "guildId": null,
                   "ore": i * 3, "ratio": 0.25, "active": i % 2 == 0,
                   "nested": {"deep": [i, {"x": "y".repeat(300)}]}})
        })
        .collect();
    json!({"players": players, "pagination": {"total": 2000}})
}

/// What every store must do; see the `HandleStore` documentation.
async fn suite(store: Arc<dyn HandleStore>) {
    let s = &*store;
    let t0 = t0();
    let a = "structs:player:1795003200:0000000a";
    let b = "structs:player:1795003201:0000000b";
    let c = "structs:player:1795003202:0000000c";
    assert_eq!(
        get(s, a, t0).await,
        Err(Missing::Unknown),
        "nothing stored yet"
    );

    let data_a = json!({"players": [{"id": "1-1"}, {"id": "1-2"}], "n": 1.5});
    let data_b = big_result();
    s.put(meta(a, t0, 60, &data_a), Arc::new(data_a.clone()))
        .await
        .unwrap();
    s.put(
        meta(b, t0 + Duration::seconds(1), 600, &data_b),
        Arc::new(data_b.clone()),
    )
    .await
    .unwrap();
    // The size it reports (the `structs.store.bytes` metric) is the JSON held.
    let held = s
        .held_bytes()
        .await
        .unwrap()
        .expect("the store counts its bytes");
    let json = |v: &Value| serde_json::to_vec(v).unwrap().len();
    assert_eq!(held, json(&data_a) + json(&data_b), "{held}");

    // Data comes back exactly, and each live get counts a hit.
    assert_eq!(get(s, a, t0).await.unwrap(), data_a);
    let second = s.get(a, t0).await.unwrap().unwrap();
    assert_eq!(second.meta.hits, 2);
    assert_eq!(second.meta.tool, "structs_list_players");
    assert_eq!(second.meta.rows, 3);
    assert_eq!(second.meta.created, t0);
    assert_eq!(second.meta.expires, t0 + Duration::seconds(60));
    assert_eq!(
        get(s, b, t0).await.unwrap(),
        data_b,
        "a megabyte, unchanged"
    );

    // Newest first, with the metadata as stored.
    let list = s.list(t0 + Duration::seconds(2)).await.unwrap();
    assert_eq!(names(&list), [b, a]);
    assert_eq!(
        list[0].size_bytes,
        serde_json::to_vec(&data_b).unwrap().len()
    );
    assert_eq!((list[0].hits, list[1].hits), (1, 2));

    // Storing under the same handle again replaces the data and the metadata.
    let data_a2 = json!({"players": [], "n": 2});
    s.put(meta(a, t0, 60, &data_a2), Arc::new(data_a2.clone()))
        .await
        .unwrap();
    let again = s.get(a, t0).await.unwrap().unwrap();
    assert_eq!(*again.data, data_a2);
    assert_eq!(again.meta.hits, 1);

    // Past its TTL: expired (no hit counted), gone from the list, cleaned once.
    let later = t0 + Duration::seconds(61);
    assert_eq!(
        get(s, a, later).await,
        Err(Missing::Expired(t0 + Duration::seconds(60)))
    );
    assert_eq!(names(&s.list(later).await.unwrap()), [b]);
    assert_eq!(s.cleanup(later).await.unwrap(), 1);
    assert_eq!(s.cleanup(later).await.unwrap(), 0);
    // Cleaned up, it is still recognised as expired for a while; then it is unknown.
    assert!(matches!(get(s, a, later).await, Err(Missing::Expired(_))));
    let forget = Duration::from_std(EXPIRED_MEMORY).unwrap();
    let much_later = t0 + Duration::seconds(60) + forget;
    assert_eq!(get(s, a, much_later).await, Err(Missing::Unknown));
    // The live one was untouched by the cleanup.
    assert_eq!(get(s, b, later).await.unwrap(), data_b);

    // Many calls at once: every put lands and every get sees its own data.
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..40 {
        let store = Arc::clone(&store);
        tasks.spawn(async move {
            let handle = format!("structs:struct:1795003300:{i:08x}");
            let data = json!({"i": i, "pad": "z".repeat(i * 100)});
            store
                .put(meta(&handle, t0, 300, &data), Arc::new(data.clone()))
                .await
                .unwrap();
            assert_eq!(get(&*store, &handle, t0).await.unwrap(), data);
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("a concurrent put and get");
    }
    assert_eq!(s.list(t0).await.unwrap().len(), 41, "40 new and b");
    assert_eq!(get(s, c, t0).await, Err(Missing::Unknown));

    // Records (the MCP server's tasks): kept, replaced, gone when their time runs out,
    // and apart from the handles.
    let short = std::time::Duration::from_millis(300);
    let long = std::time::Duration::from_secs(60);
    assert_eq!(s.get_record("task:a").await.unwrap(), None);
    s.put_record("task:a", json!({"status": "working"}), long)
        .await
        .unwrap();
    s.put_record("task:a", json!({"status": "completed"}), long)
        .await
        .unwrap();
    s.put_record("task:b", json!(true), short).await.unwrap();
    assert_eq!(
        s.get_record("task:a").await.unwrap(),
        Some(json!({"status": "completed"}))
    );
    assert_eq!(s.get_record("task:b").await.unwrap(), Some(json!(true)));
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(s.get_record("task:b").await.unwrap(), None, "past its time");
    assert!(s.get_record("task:a").await.unwrap().is_some());
    assert_eq!(
        s.list(t0).await.unwrap().len(),
        41,
        "records are not handles"
    );
    s.put_record("other:c", json!(1), long).await.unwrap();
    let listed = s.list_records("task:", 100).await.unwrap();
    assert_eq!(
        listed,
        vec![("task:a".to_string(), json!({"status": "completed"}))],
        "by prefix, and only what is live"
    );
    for i in 0..20 {
        s.put_record(&format!("task:n{i}"), json!(i), long)
            .await
            .unwrap();
    }
    assert_eq!(
        s.list_records("task:", 5).await.unwrap().len(),
        5,
        "at most the limit"
    );
    assert_eq!(s.list_records("task:", 100).await.unwrap().len(), 21);

    // A claim is taken once while its mark lives, then again after.
    let short = std::time::Duration::from_millis(300);
    assert!(s.claim("confirm:x", short).await.unwrap());
    assert!(!s.claim("confirm:x", short).await.unwrap(), "taken once");
    assert!(
        s.claim("confirm:y", short).await.unwrap(),
        "each key its own"
    );
    // Of many claims at once, exactly one.
    let at_once: Vec<_> = (0..16)
        .map(|_| {
            let s = store.clone();
            tokio::spawn(async move { s.claim("confirm:z", long).await.unwrap() })
        })
        .collect();
    let mut won = 0;
    for claim in at_once {
        won += usize::from(claim.await.unwrap());
    }
    assert_eq!(won, 1, "exactly one of the concurrent claims");
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    assert!(
        s.claim("confirm:x", short).await.unwrap(),
        "the mark ran out"
    );
}

#[tokio::test]
async fn the_memory_store_passes_the_suite() {
    suite(Arc::new(MemoryStore::default())).await;
}

#[tokio::test]
async fn the_redis_store_passes_the_suite() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = RedisStore::connect(&redis.url(), "suite").await.unwrap();
    assert_eq!(store.name(), "redis");
    suite(Arc::new(store)).await;
}

#[tokio::test]
async fn the_redis_store_keeps_to_its_budget_oldest_first_and_each_caller_to_its_share() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // A result's JSON is 1,000 bytes here: the budget holds 4 of them, a caller 1.
    let data = json!({"pad": "x".repeat(990)});
    let size = serde_json::to_vec(&data).unwrap().len();
    let store = RedisStore::connect(&redis.url(), "budget")
        .await
        .unwrap()
        .with_limit(4 * size + 10);
    let put = |name: &str, at: i64, owner: Option<&str>| {
        let mut m = meta(name, t0() + Duration::seconds(at), 600, &data);
        m.owner = owner.map(str::to_string);
        (m, Arc::new(data.clone()))
    };
    for (i, h) in ["a", "b", "c", "d", "e", "f"].into_iter().enumerate() {
        let (m, d) = put(h, i as i64, None);
        store.put(m, d).await.unwrap();
    }
    let now = t0() + Duration::seconds(10);
    // The two oldest went; what is held is within the budget, and counted right.
    assert_eq!(names(&store.list(now).await.unwrap()), ["f", "e", "d", "c"]);
    assert_eq!(get(&store, "a", now).await, Err(Missing::Evicted));
    assert_eq!(store.bytes().await.unwrap(), 4 * size);

    // A caller past its share (a quarter) loses its own oldest, not anyone else's.
    for (i, h) in ["alice-1", "alice-2"].into_iter().enumerate() {
        let (m, d) = put(h, 20 + i as i64, Some("caller:alice"));
        store.put(m, d).await.unwrap();
    }
    let now = t0() + Duration::seconds(30);
    let live = store.list(now).await.unwrap();
    assert_eq!(
        names(&live),
        ["alice-2", "f", "e", "d"],
        "c went for room, alice-1 for her share"
    );
    assert_eq!(get(&store, "alice-1", now).await, Err(Missing::Evicted));
    assert_eq!(live[0].owner.as_deref(), Some("caller:alice"));
    assert_eq!(store.bytes().await.unwrap(), 4 * size);

    // Cleaned up at expiry, the counts go down with the data.
    let later = t0() + Duration::seconds(700);
    store.cleanup(later).await.unwrap();
    assert_eq!(store.bytes().await.unwrap(), 0);
}

#[tokio::test]
async fn a_redis_handle_whose_metadata_went_first_is_still_dropped_for_its_callers_room() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let data = json!({"pad": "x".repeat(990)});
    let size = serde_json::to_vec(&data).unwrap().len();
    // A caller's share is one result.
    let store = RedisStore::connect(&redis.url(), "gone")
        .await
        .unwrap()
        .with_limit(4 * size + 10);
    let put = |name: &str, at: i64| {
        let mut m = meta(name, t0() + Duration::seconds(at), 600, &data);
        m.owner = Some("caller:alice".into());
        (m, Arc::new(data.clone()))
    };
    let (m, d) = put("old", 0);
    store.put(m, d).await.unwrap();
    // Its metadata goes first (its own TTL, or an eviction under maxmemory).
    let client = ::redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = ::redis::cmd("DEL")
        .arg("gone:meta:old")
        .query_async(&mut conn)
        .await
        .unwrap();
    // Her next result goes past her share: the old one is dropped, and the store answers.
    let (m, d) = put("new", 1);
    tokio::time::timeout(std::time::Duration::from_secs(5), store.put(m, d))
        .await
        .expect("the store answers")
        .unwrap();
    assert_eq!(store.bytes().await.unwrap(), size);
    let now = t0() + Duration::seconds(5);
    assert_eq!(names(&store.list(now).await.unwrap()), ["new"]);
}

#[tokio::test]
async fn redis_prefixes_keep_stores_apart() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let one = RedisStore::connect(&redis.url(), "one").await.unwrap();
    let two = RedisStore::connect(&redis.url(), "two").await.unwrap();
    let data = json!({"x": 1});
    let h = "structs:player:1795003200:00000001";
    one.put(meta(h, t0(), 60, &data), Arc::new(data))
        .await
        .unwrap();
    assert!(get(&one, h, t0()).await.is_ok());
    assert_eq!(get(&two, h, t0()).await, Err(Missing::Unknown));
    assert!(two.list(t0()).await.unwrap().is_empty());
}

#[tokio::test]
async fn an_unreachable_redis_is_refused_at_start_with_the_reason() {
    // A port nobody listens on.
    let port = support::daemon::free_port();
    let err = RedisStore::connect(&format!("redis://:hunter2@127.0.0.1:{port}"), "x")
        .await
        .err()
        .expect("nothing listens there");
    assert!(err.contains("cannot reach the Redis handle store"), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(!err.contains("hunter2"), "no password in messages: {err}");
    let err = RedisStore::connect("http://127.0.0.1/", "x")
        .await
        .err()
        .unwrap();
    assert!(err.contains("invalid Redis URL"), "{err}");
}

fn sim_core(store: Arc<dyn HandleStore>) -> Core {
    let config = WorldConfig::with_players(200);
    let source = SimSource::new(config, BlockClock::paused(config.genesis_height));
    structs_console::assembly::builder(Arc::new(source))
        .clock(WallClock::Fixed(t0()))
        .handle_store(store)
        .build()
        .unwrap()
}

/// Fetches every page of a handle and merges them.
async fn fetch_all(core: &Core, handle: &str) -> Value {
    let mut whole = serde_json::Map::new();
    let mut page = 1;
    loop {
        let got = core
            .call_json(
                "structs_handle_fetch",
                json!({"handle": handle, "page": page}),
            )
            .await
            .unwrap_or_else(|e| panic!("fetch page {page}: {e}"));
        assert!(serde_json::to_vec(&got).unwrap().len() <= 25_600);
        merge(&mut whole, &got["data"]);
        if !got["page_info"]["has_more"].as_bool().unwrap() {
            return Value::Object(whole);
        }
        page += 1;
    }
}

#[tokio::test]
async fn servers_on_one_redis_share_their_handles() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let first = sim_core(Arc::new(
        RedisStore::connect(&redis.url(), "shared").await.unwrap(),
    ));
    let second = sim_core(Arc::new(
        RedisStore::connect(&redis.url(), "shared").await.unwrap(),
    ));
    let args = json!({"page_size": 100});
    let envelope = first
        .call_json("structs_list_players", args.clone())
        .await
        .unwrap();
    assert_eq!(envelope["status"], "partial");
    let handle = envelope["result_handle"].as_str().unwrap();

    // The other server lists the handle and reads the whole result back.
    let list = second
        .call_json("structs_handle_list", json!({}))
        .await
        .unwrap();
    assert_eq!(list["handles"][0]["handle"], handle);
    assert_eq!(list["handles"][0]["tool_name"], "structs_list_players");
    let raw = first
        .call_json(
            "structs_list_players",
            json!({"page_size": 100, "verbosity": "raw"}),
        )
        .await
        .unwrap();
    let full = fetch_all(&first, raw["result_handle"].as_str().unwrap()).await;
    assert_eq!(fetch_all(&second, handle).await, full);
    assert_eq!(full["players"].as_array().unwrap().len(), 100);
}

#[tokio::test]
async fn when_redis_goes_away_calls_say_so_and_the_server_keeps_serving() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let core = sim_core(Arc::new(
        RedisStore::connect(&redis.url(), "outage").await.unwrap(),
    ));
    let big = json!({"page_size": 100});
    let before = core
        .call_json("structs_list_players", big.clone())
        .await
        .unwrap();
    assert_eq!(before["status"], "partial");

    redis.stop();
    let started = std::time::Instant::now();
    let err = core
        .call_json("structs_list_players", big.clone())
        .await
        .unwrap_err();
    assert_eq!(err["error"]["code"], "RESOURCE_UNAVAILABLE", "{err}");
    let message = err["error"]["message"].as_str().unwrap();
    assert!(message.contains("could not be stored"), "{message}");
    assert!(
        message.contains(&format!(
            "Redis handle store at redis://127.0.0.1:{}",
            redis.port
        )),
        "{message}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "fails fast"
    );
    let err = core
        .call_json("structs_handle_list", json!({}))
        .await
        .unwrap_err();
    assert_eq!(err["error"]["code"], "RESOURCE_UNAVAILABLE");
    // Everything that needs no store still works.
    let small = core
        .call_json("structs_list_players", json!({"page_size": 2}))
        .await
        .unwrap();
    assert_eq!(small["players"].as_array().unwrap().len(), 2);

    // Redis comes back (empty: it kept nothing); the store reconnects by itself.
    redis.restart();
    let mut after = None;
    for _ in 0..50 {
        match core.call_json("structs_list_players", big.clone()).await {
            Ok(v) => {
                after = Some(v);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    let after = after.expect("the store reconnects after Redis restarts");
    assert_eq!(after["status"], "partial");
    let full = fetch_all(&core, after["result_handle"].as_str().unwrap()).await;
    assert_eq!(full["players"].as_array().unwrap().len(), 100);
}

/// Redis restarted between two calls (as an operator restarts it): the connection the
/// store held is dead, and the next call finds that out, reconnects and succeeds, on
/// its first try.
#[tokio::test]
async fn the_first_call_after_a_redis_restart_succeeds() {
    let Some(mut redis) = RedisServer::start_persistent() else {
        return;
    };
    let core = sim_core(Arc::new(
        RedisStore::connect(&redis.url(), "first").await.unwrap(),
    ));
    let big = json!({"page_size": 100});
    let v = core
        .call_json("structs_list_players", big.clone())
        .await
        .unwrap();
    let handle = v["result_handle"].as_str().unwrap().to_string();
    redis.restart();
    let fetched = core
        .call_json("structs_handle_fetch", json!({"handle": handle}))
        .await;
    assert!(fetched.is_ok(), "{fetched:?}");
    let stored = core.call_json("structs_list_players", big).await;
    assert_eq!(stored.unwrap()["status"], "partial");
}

/// What "nothing already stored is lost" means for handles: Redis keeps them when it is
/// run to persist its data (here an append-only file synced on every write), and the
/// server finds them again once Redis is back, even after Redis was killed outright.
/// A Redis run without persistence loses them by its own design (the test above).
#[tokio::test]
async fn handles_stored_before_redis_restarts_are_still_there_after() {
    let Some(mut redis) = RedisServer::start_persistent() else {
        return;
    };
    let core = sim_core(Arc::new(
        RedisStore::connect(&redis.url(), "restart").await.unwrap(),
    ));
    let mut stored = Vec::new();
    for tool in ["structs_list_players", "structs_list_planets"] {
        let v = core
            .call_json(tool, json!({"page_size": 100}))
            .await
            .unwrap();
        assert_eq!(v["status"], "partial", "{tool}");
        let handle = v["result_handle"].as_str().unwrap().to_string();
        stored.push((handle.clone(), fetch_all(&core, &handle).await));
    }

    redis.stop();
    let err = core
        .call_json("structs_handle_fetch", json!({"handle": stored[0].0}))
        .await
        .unwrap_err();
    assert_eq!(err["error"]["code"], "RESOURCE_UNAVAILABLE", "{err}");
    redis.restart();

    let mut listed = None;
    for _ in 0..50 {
        match core.call_json("structs_handle_list", json!({})).await {
            Ok(v) => {
                listed = Some(v);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    let listed = listed.expect("the store reconnects after Redis restarts");
    for (handle, whole) in &stored {
        assert!(
            listed["handles"]
                .as_array()
                .unwrap()
                .iter()
                .any(|h| h["handle"] == handle.as_str()),
            "{handle} is listed after the restart: {listed}"
        );
        assert_eq!(&fetch_all(&core, handle).await, whole, "{handle}");
    }
}

fn headless(store: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"])
        .args(["--world-size", "200", "--handle-store", store]);
    cmd
}

#[tokio::test]
async fn two_headless_servers_share_handles_through_redis() {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, ResourceContents};
    use rmcp::transport::TokioChildProcess;

    let Some(redis) = RedisServer::start() else {
        return;
    };
    let url = redis.url();
    let a = ().serve(TokioChildProcess::new(headless(&url)).unwrap()).await.unwrap();
    let b = ().serve(TokioChildProcess::new(headless(&url)).unwrap()).await.unwrap();
    let arguments = json!({"page_size": 100}).as_object().cloned().unwrap();
    let result = a
        .call_tool(CallToolRequestParams::new("structs_list_players").with_arguments(arguments))
        .await
        .unwrap();
    let envelope = result.structured_content.unwrap();
    let handle = envelope["result_handle"].as_str().expect("an envelope");
    let uri = format!("structs://handles/{handle}");

    // The second server lists and reads what the first one stored.
    let listed = b.list_all_resources().await.unwrap();
    assert!(listed.iter().any(|r| r.uri == uri), "{listed:?}");
    let total_pages = envelope["page_info"]["total_pages"].as_u64().unwrap();
    let mut players = 0;
    for page in 1..=total_pages {
        let read = b
            .read_resource(ReadResourceRequestParams::new(format!("{uri}?page={page}")))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("text contents expected");
        };
        let body: Value = serde_json::from_str(text).unwrap();
        players += body["data"]["players"].as_array().map_or(0, Vec::len);
    }
    assert_eq!(players, 100);
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

#[tokio::test]
async fn a_bad_or_unreachable_handle_store_stops_the_server_at_start() {
    let out = headless("postgres://x").output().await.unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("handles.store must be \"memory\" or a redis:// URL"),
        "{stderr}"
    );

    let port = support::daemon::free_port();
    let out = headless(&format!("redis://127.0.0.1:{port}"))
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "cannot reach the Redis handle store at redis://127.0.0.1:{port}"
        )),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_handle_whose_data_redis_dropped_is_not_listed_and_says_so() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = RedisStore::connect(&redis.url(), "evict").await.unwrap();
    let data = json!({"x": 1});
    let gone = "structs:player:1795003200:00000001";
    let kept = "structs:player:1795003200:00000002";
    for h in [gone, kept] {
        store
            .put(meta(h, t0(), 600, &data), Arc::new(data.clone()))
            .await
            .unwrap();
    }
    // Redis drops the data (as maxmemory eviction or its own TTL would).
    let client = redis::Client::open(redis.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("DEL")
        .arg(format!("evict:data:{gone}"))
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(get(&store, gone, t0()).await, Err(Missing::Evicted));
    let e = Missing::Evicted.to_error(gone);
    assert!(
        e.message.contains("no longer in the handle store"),
        "{}",
        e.message
    );
    assert_eq!(names(&store.list(t0()).await.unwrap()), [kept]);

    // Every key carries a TTL, so a Redis left behind by stopped servers empties itself.
    for key in [
        format!("evict:data:{kept}"),
        format!("evict:meta:{kept}"),
        "evict:live".to_string(),
    ] {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut c)
            .await
            .unwrap();
        assert!(ttl > 600_000, "{key} has TTL {ttl} ms");
    }
}

#[test]
fn a_core_configured_for_redis_needs_the_store_opened() {
    let config = structs_console::handles::HandleConfig {
        store: "redis://127.0.0.1:6379/0".into(),
        ..Default::default()
    };
    let source = SimSource::new(WorldConfig::demo(), BlockClock::paused(1));
    let err = structs_console::assembly::builder(Arc::new(source))
        .handles(config)
        .build()
        .err()
        .expect("no store given");
    assert!(err.contains("open_store"), "{err}");
}
