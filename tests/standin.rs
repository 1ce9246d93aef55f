//! The REST source, the tools and their readers against a stand-in node written from the
//! node's `openapi.yml` (`tests/support/standin.rs`), not from the sim: what a user sees
//! on a node that answers as the chain does.

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use structs_console::clock::WallClock;
use structs_console::entity::records;
use structs_console::source::rest::{RestConfig, RestSource};
use structs_console::source::{GameSource, ListQuery};
use structs_console::{Core, EntityId, EntityKind};
use support::reference::OpenApi;
use support::standin::{HEIGHT, StandIn, address};

async fn node() -> Option<(StandIn, Arc<RestSource>)> {
    let api = OpenApi::load()?;
    structs_console::source::rest::install_crypto();
    let node = StandIn::start(api).await;
    let mut config = RestConfig::new(&node.url);
    config.rate_limit = None;
    config.height_poll = Duration::from_secs(3600);
    let rest = RestSource::connect(config).await.unwrap();
    Some((node, rest))
}

fn core(rest: Arc<RestSource>) -> Core {
    structs_console::assembly::build_with_clock(rest, WallClock::System)
}

async fn call(core: &Core, tool: &str, args: Value) -> Value {
    core.call_json(tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rest_source_reads_a_node_that_answers_as_the_chain_does() {
    let Some((_node, rest)) = node().await else {
        return;
    };
    assert_eq!(rest.info().block_height, HEIGHT);
    let player = rest
        .get(EntityId::parse("1-2").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(player["Player"]["name"], "Vega 2");
    assert!(
        records::single_response(EntityKind::Player)
            .check(&player)
            .is_empty()
    );
    assert_eq!(
        rest.get(EntityId::parse("1-9").unwrap()).await.unwrap(),
        None,
        "the node's object not found is no record"
    );
    // A list of a kind with no ids pages by the records' keys.
    let page = rest
        .list(ListQuery::new(EntityKind::Infusion, 10))
        .await
        .unwrap();
    let keys: Vec<String> = page
        .items
        .iter()
        .map(|i| records::key_of(EntityKind::Infusion, i).unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            format!("1-1/{}", address(1)),
            format!("1-2/{}", address(2)),
            format!("1-3/{}", address(3))
        ]
    );
    // Filtered by owner: the owner field of each kind, by key.
    let mut q = ListQuery::new(EntityKind::Address, 1);
    q.owner = Some(EntityId::parse("1-3").unwrap());
    let page = rest.list(q).await.unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.items[0]["address"], address(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_read_the_chains_names_and_numbers() {
    let Some((_node, rest)) = node().await else {
        return;
    };
    let core = core(rest);
    // A destroyed struct: the chain's number in the record, the words beside it, the
    // max health its type gives.
    let v = call(&core, "structs_query_struct", json!({"struct_id": "5-1"})).await;
    assert_eq!(v["struct"]["structAttributes"]["status"], "35");
    assert_eq!(v["derived"]["status"], "destroyed");
    assert_eq!(
        v["derived"]["status_flags"],
        json!(["materialized", "built", "destroyed"])
    );
    assert_eq!(v["derived"]["max_health"], 3);
    // The player's summary keeps its name.
    let v = call(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "verbosity": "summary"}),
    )
    .await;
    assert_eq!(v["player"]["Player"]["name"], "Vega 1", "{v}");
    // The power tree reads the player's alpha from its one coin.
    let walk = call(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "power-management", "state": {
            "player_id": "1-2", "available_capacity_mw": -2000}}),
    )
    .await;
    let alpha = walk["path"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["fact"]["fact"] == "player.alpha_ualpha")
        .unwrap_or_else(|| panic!("{walk}"));
    assert_eq!(alpha["value"], 24_000_000, "{walk}");
    // A fleet on station at home is home: the raid advice does not send it there.
    let walk = call(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "raid-defense", "state": {
            "player_id": "1-1", "planet_id": "2-1", "available_capacity_mw": 5000,
            "command_ship_online": true}}),
    )
    .await;
    let home = walk["path"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["node"] == "fleet_home")
        .unwrap_or_else(|| panic!("{walk}"));
    assert_eq!(home["value"], true, "{walk}");
    assert_ne!(walk["current_node"]["node"], "return_home", "{walk}");
}
