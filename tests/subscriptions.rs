//! Subscriptions end to end over MCP: the headless server spawned for real, a client
//! that subscribes (with the tool and with `resources/subscribe`), actions that change
//! the watched entities, and the `notifications/resources/updated` that follow.

mod support;

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ReadResourceRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use support::mcp::Updates;

// Not support::mcp::call: this one insists on a successful answer with structured
// content, and returns just that.
async fn call(client: &RunningService<RoleClient, Updates>, tool: &str, args: Value) -> Value {
    let Value::Object(args) = args else { panic!() };
    let r = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .expect("tools/call");
    let v = r.structured_content.expect("structured content");
    assert_eq!(r.is_error, Some(false), "{tool}: {v}");
    v
}

/// Online structs of the demo world, with their owners.
async fn online_structs(client: &RunningService<RoleClient, Updates>) -> Vec<(String, String)> {
    let v = call(
        client,
        "structs_list_entities",
        json!({"entity_type": "struct", "page_size": 30}),
    )
    .await;
    // A list gives each struct's core record; whether it is online is in the struct's
    // own record, read one by one.
    let mut out = Vec::new();
    for s in v["structs"].as_array().expect("a list of structs") {
        let id = s["Struct"]["id"].as_str().unwrap().to_string();
        let one = call(client, "structs_query_struct", json!({"struct_id": id})).await;
        if one["struct"]["structAttributes"]["isOnline"] == true {
            out.push((id, s["Struct"]["owner"].as_str().unwrap().to_string()));
        }
    }
    out
}

fn deactivate(id: &str) -> Value {
    json!({"transaction": {"body": {"messages": [
        {"@type": "/structs.structs.MsgStructDeactivate", "structId": id}
    ]}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_to_subscribed_entities_arrive_as_resource_updates() {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"]);
    let transport = TokioChildProcess::new(cmd).expect("spawn structs-console --headless");
    let updates = Updates::default();
    let client = updates.clone().serve(transport).await.expect("initialize");
    let caps = client.peer_info().unwrap().capabilities.resources.clone();
    assert_eq!(caps.and_then(|r| r.subscribe), Some(true));

    let online = online_structs(&client).await;
    assert!(online.len() >= 3, "the demo world has online structs");
    let (first, owner) = online[0].clone();

    // Subscribe to the owner with the tool, then deactivate one of its structs: the
    // player's load changes, so the player is updated.
    let sub = call(
        &client,
        "structs_subscription_subscribe",
        json!({"entity_type": "player", "entity_id": owner}),
    )
    .await;
    assert_eq!(sub["status"], "active");
    let uri = format!("structs://entities/{owner}");
    assert_eq!(sub["resource_uri"], uri);
    let list = call(&client, "structs_subscription_list", json!({})).await;
    assert_eq!(list["total"], 1);

    call(
        &client,
        "structs_action_submit_transaction",
        deactivate(&first),
    )
    .await;
    assert!(updates.wait_for(&uri).await, "no update for {uri}");
    assert_eq!(updates.count(&uri), 1, "one update per event");

    // resources/subscribe works the same, on a struct's URI.
    let (second, _) = online
        .iter()
        .find(|(id, o)| *o != owner && *id != first)
        .cloned()
        .expect("another owner's online struct");
    let struct_uri = format!("structs://entities/{second}");
    #[allow(deprecated)]
    client
        .subscribe(SubscribeRequestParams::new(struct_uri.clone()))
        .await
        .expect("resources/subscribe");
    call(
        &client,
        "structs_action_submit_transaction",
        deactivate(&second),
    )
    .await;
    assert!(
        updates.wait_for(&struct_uri).await,
        "no update for {struct_uri}"
    );
    let read = client
        .read_resource(ReadResourceRequestParams::new(struct_uri.clone()))
        .await
        .expect("resources/read of an entity");
    let text = match &read.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    let entity: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        entity["structAttributes"]["status"], "3",
        "materialized and built, no longer online"
    );

    // Unsubscribed (both ways): later changes send nothing.
    call(
        &client,
        "structs_subscription_unsubscribe",
        json!({"subscription_id": sub["subscription_id"]}),
    )
    .await;
    #[allow(deprecated)]
    client
        .unsubscribe(UnsubscribeRequestParams::new(struct_uri.clone()))
        .await
        .expect("resources/unsubscribe");
    let third = online
        .iter()
        .find(|(id, o)| *o == owner && *id != first)
        .or_else(|| online.iter().find(|(id, _)| *id != first && *id != second))
        .cloned()
        .unwrap();
    call(
        &client,
        "structs_action_submit_transaction",
        deactivate(&third.0),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(updates.count(&uri), 1);
    assert_eq!(updates.count(&struct_uri), 1);

    // A second unsubscribe names the problem.
    let Value::Object(args) = json!({"subscription_id": sub["subscription_id"]}) else {
        panic!()
    };
    let r = client
        .call_tool(
            CallToolRequestParams::new("structs_subscription_unsubscribe").with_arguments(args),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    let e = r.structured_content.unwrap();
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already unsubscribed")
    );
    client.cancel().await.ok();
}
