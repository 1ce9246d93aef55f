//! The hints over a chain's node, and the size of the tool list.

use super::*;

/// Over a chain's node (`--source rest`, here the embedded world behind `serve-rest`)
/// the tools that read the game are an open world, and their answers still hold to
/// the schemas, a signed broadcast's included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_a_node_the_game_tools_are_an_open_world() {
    let sim = Arc::new(paused(WorldConfig::demo()));
    let node = RestServer::start("127.0.0.1:0", sim).await.unwrap();
    let mut config = RestConfig::new(&node.url());
    config.rate_limit = None;
    let source = RestSource::connect(config).await.unwrap();
    let core = structs_console::assembly::build_with_clock(source, fixed_clock());
    let (mut c, tools) = Checker::new(session(core, Arc::new(Docs::embedded())).await).await;
    check_hints(&tools, true);
    c.ok("structs_query_player", json!({"player_id": "1-1"}))
        .await;
    c.ok("structs_list_planets", json!({"page_size": 2})).await;
    c.ok("structs_query_block_height", json!({})).await;
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.encode([8, 1, 2, 3]);
    let v = c
        .ok(
            "structs_action_submit_transaction",
            json!({"tx_bytes": bytes}),
        )
        .await;
    assert_eq!(v["status"], "rejected");
    c.err("structs_clock_control", json!({"action": "pause"}))
        .await;
}

/// The size of `tools/list` as a client receives it (run with --nocapture to see it);
/// it stays under a budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_list_stays_small_enough_to_load_at_startup() {
    let core = structs_console::assembly::build_with_clock(
        Arc::new(paused(WorldConfig::demo())),
        fixed_clock(),
    );
    let client = session(core, Arc::new(Docs::embedded())).await;
    let listed = client.list_tools(None).await.unwrap();
    assert!(listed.next_cursor.is_none(), "one page");
    let bytes = serde_json::to_vec(&listed).unwrap().len();
    let outputs: usize = listed
        .tools
        .iter()
        .map(|t| serde_json::to_vec(&t.output_schema).unwrap().len())
        .sum();
    println!(
        "tools/list: {} tools, {bytes} bytes, of which outputSchema {outputs} bytes",
        listed.tools.len()
    );
    assert!(bytes < 400_000, "tools/list is {bytes} bytes");
}
