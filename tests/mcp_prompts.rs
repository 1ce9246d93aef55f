//! Prompts and completions over MCP, for real: the built binary over stdio, driven by
//! rmcp's client as an agent's host would drive it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ContentBlock, GetPromptRequestParams, GetPromptResult, ResourceContents,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

/// A client that counts `notifications/prompts/list_changed`.
#[derive(Clone, Default)]
struct Host(Arc<AtomicUsize>);

impl ClientHandler for Host {
    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

type Client = RunningService<RoleClient, Host>;

async fn start(extra: &[&str]) -> (Client, Host) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"]);
    cmd.args(extra);
    let host = Host::default();
    let client = host
        .clone()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .expect("initialize");
    (client, host)
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(o) => o,
        _ => panic!("an object"),
    }
}

async fn get(client: &Client, name: &str, args: Value) -> Result<GetPromptResult, ServiceError> {
    client
        .get_prompt(GetPromptRequestParams::new(name).with_arguments(object(args)))
        .await
}

/// The JSON-RPC error code of a failed request.
fn code(e: &ServiceError) -> i32 {
    match e {
        ServiceError::McpError(e) => e.code.0,
        other => panic!("a JSON-RPC error, not {other}"),
    }
}

/// True when `text` holds a number in scientific notation (`4.59e-6`, `1e+20`).
fn scientific(text: &str) -> bool {
    let c: Vec<char> = text.chars().collect();
    c.windows(4).any(|w| {
        w[0].is_ascii_digit() && w[1] == 'e' && matches!(w[2], '-' | '+') && w[3].is_ascii_digit()
    })
}

/// The text of every text message, joined.
fn texts(r: &GetPromptResult) -> String {
    r.messages
        .iter()
        .filter_map(|m| match &m.content {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each embedded resource: its URI and its text.
fn embedded(r: &GetPromptResult) -> Vec<(String, String)> {
    r.messages
        .iter()
        .filter_map(|m| match &m.content {
            ContentBlock::Resource(e) => match &e.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    Some((uri.clone(), text.clone()))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Each linked resource's URI.
fn links(r: &GetPromptResult) -> Vec<String> {
    r.messages
        .iter()
        .filter_map(|m| match &m.content {
            ContentBlock::ResourceLink(l) => Some(l.uri.clone()),
            _ => None,
        })
        .collect()
}

async fn tool(client: &Client, name: &str, args: Value) -> (Value, bool) {
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(object(args)))
        .await
        .expect("tools/call");
    (
        r.structured_content.unwrap_or(Value::Null),
        r.is_error == Some(true),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_listed_with_typed_arguments_and_answer_with_their_resources() {
    let (client, _) = start(&[]).await;
    let caps = client.peer_info().unwrap().capabilities.clone();
    assert!(caps.prompts.is_some(), "prompts declared");
    assert!(caps.completions.is_some(), "completions declared");

    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    for want in [
        "brief",
        "plan-build",
        "proof-of-work",
        "diagnose",
        "next",
        "run-workflow",
        "workflow-build-mining-operation",
        "workflow-query-and-monitor-planet",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    for p in &prompts {
        assert!(
            p.title.as_deref().is_some_and(|t| !t.is_empty()),
            "{} has a title",
            p.name
        );
        assert!(p.description.as_deref().is_some_and(|d| !d.is_empty()));
    }
    let plan = prompts.iter().find(|p| p.name == "plan-build").unwrap();
    let args = plan.arguments.as_ref().unwrap();
    let required: Vec<(&str, bool)> = args
        .iter()
        .map(|a| (a.name.as_str(), a.required == Some(true)))
        .collect();
    assert_eq!(
        required,
        [
            ("planet_id", true),
            ("struct_type", true),
            ("player_id", false)
        ]
    );

    // A briefing embeds the entity and what it references, and links its kind's doc.
    let r = get(&client, "brief", json!({"entity_id": "1-1"}))
        .await
        .unwrap();
    let text = texts(&r);
    assert!(text.contains("player 1-1 (novaforge1)"), "{text}");
    let resources = embedded(&r);
    assert_eq!(resources[0].0, "structs://entities/1-1");
    let me: Value = serde_json::from_str(&resources[0].1).unwrap();
    assert_eq!(me["Player"]["id"], "1-1");
    let uris: Vec<&str> = resources.iter().map(|(u, _)| u.as_str()).collect();
    for referenced in [
        "structs://entities/2-1",
        "structs://entities/0-1",
        "structs://entities/9-1",
    ] {
        assert!(uris.contains(&referenced), "{referenced} in {uris:?}");
    }
    let planet: Value = serde_json::from_str(
        &resources
            .iter()
            .find(|(u, _)| u.ends_with("/2-1"))
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(planet["Planet"]["owner"], "1-1");
    assert!(
        planet.get("referenced_from").is_none(),
        "the entity alone: {planet}"
    );
    assert!(links(&r).contains(&"structs://docs/knowledge/entities/player".to_string()));

    // A build plan carries the game's requirements for that type on that planet.
    let r = get(
        &client,
        "plan-build",
        json!({"planet_id": "2-1", "struct_type": "ore extractor"}),
    )
    .await
    .unwrap();
    let text = texts(&r);
    assert!(text.contains("an Ore Extractor (struct type 14"), "{text}");
    assert!(text.contains("for player 1-1"), "the owner builds: {text}");
    assert!(
        text.contains("The build's requirements, checked now:\n- [x] 1-1 is online"),
        "{text}"
    );
    assert!(text.contains("- [ ] insufficient power"), "{text}");
    assert!(!text.contains("```"), "no JSON dump: {text}");
    let uris: Vec<String> = embedded(&r).into_iter().map(|(u, _)| u).collect();
    assert_eq!(uris, ["structs://entities/2-1", "structs://entities/1-1"]);

    // What next: the trees' ranked moves for each goal.
    let r = get(
        &client,
        "next",
        json!({"player_id": "1-1", "goal": "expand_power"}),
    )
    .await
    .unwrap();
    let text = texts(&r);
    assert!(text.contains("What should player 1-1 do next?"), "{text}");
    assert!(text.contains("for the expand_power goal"), "{text}");
    assert!(text.contains("1. "), "a ranked move: {text}");
    assert!(!text.contains("defend_planet"), "one goal asked: {text}");

    // Every goal: short, each move once, what can be done now before what waits.
    let r = get(&client, "next", json!({"player_id": "1-1"}))
        .await
        .unwrap();
    let text = texts(&r);
    assert!(text.len() < 3_000, "{} bytes: {text}", text.len());
    assert!(!text.contains("```"), "no JSON dumps: {text}");
    let moves: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
        })
        .collect();
    assert!(moves.len() >= 2, "{text}");
    let titles: Vec<&str> = moves
        .iter()
        .map(|l| l.split_once(" (").map_or(*l, |(t, _)| t))
        .collect();
    let mut unique = titles.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), titles.len(), "a move listed twice: {text}");
    let rank = |l: &str| {
        if l.ends_with("ready now") {
            0
        } else if l.contains("cheap at") {
            1
        } else {
            2
        }
    };
    let ranks: Vec<u8> = moves.iter().map(|l| rank(l)).collect();
    assert!(
        ranks.windows(2).all(|w| w[0] <= w[1]),
        "not ranked by readiness: {text}"
    );
    assert!(
        !scientific(&text),
        "figures are rounded for reading: {text}"
    );

    // A workflow's prompt lists its steps and embeds the entities given.
    let r = get(
        &client,
        "workflow-query-and-monitor-planet",
        json!({"planet_id": "2-3"}),
    )
    .await
    .unwrap();
    let text = texts(&r);
    assert!(
        text.contains("watch_owner — structs_subscription_subscribe"),
        "{text}"
    );
    assert!(text.contains(r#""inputs": {"planet_id":"2-3"}"#), "{text}");
    assert_eq!(embedded(&r)[0].0, "structs://entities/2-3");
    // The same through run-workflow, its inputs as one JSON object.
    let r = get(
        &client,
        "run-workflow",
        json!({"workflow": "query-and-monitor-planet", "inputs": r#"{"planet_id": "2-3"}"#}),
    )
    .await
    .unwrap();
    assert!(texts(&r).contains(r#""inputs": {"planet_id":"2-3"}"#));
    assert_eq!(embedded(&r)[0].0, "structs://entities/2-3");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proof_of_work_and_diagnose_prompts_read_the_real_state() {
    let (client, _) = start(&[]).await;
    // A struct being built has a build proof to do.
    let (built, failed) = tool(
        &client,
        "structs_action_build_struct",
        json!({"player_id": "1-2", "struct_type": 14, "location_type": "planet"}),
    )
    .await;
    assert!(!failed, "{built}");
    let struct_id = built["struct_id"].as_str().unwrap().to_string();
    let r = get(&client, "proof-of-work", json!({"struct_id": struct_id}))
        .await
        .unwrap();
    let text = texts(&r);
    assert!(text.contains("(struct_build_complete)"), "{text}");
    assert!(text.contains("- now: difficulty "), "{text}");
    assert!(text.contains("Best start: block "), "{text}");
    assert!(!text.contains("```"), "no JSON dump: {text}");
    assert!(
        !scientific(&text),
        "figures are rounded for reading: {text}"
    );
    assert!(text.len() < 2_000, "{} bytes: {text}", text.len());
    assert_eq!(embedded(&r)[0].0, format!("structs://entities/{struct_id}"));
    // A built Command Ship has no work to prove.
    let e = get(&client, "proof-of-work", json!({"struct_id": "5-1"}))
        .await
        .unwrap_err();
    assert_eq!(code(&e), -32602, "{e}");
    assert!(e.to_string().contains("is a built Command Ship"), "{e}");

    // Diagnose a real failure, given as the answer the agent saw.
    let (answer, failed) = tool(&client, "structs_query_entity", json!({"id": "2-999999"})).await;
    assert!(failed);
    let r = get(
        &client,
        "diagnose",
        json!({"answer": answer.to_string(), "tool": "structs_query_entity"}),
    )
    .await
    .unwrap();
    let text = texts(&r);
    assert!(text.contains("- at /: RESOURCE_NOT_FOUND"), "{text}");
    assert!(
        text.contains("structs_query_entity takes these arguments"),
        "{text}"
    );
    assert!(links(&r).contains(&"structs://docs/api/errors".to_string()));
    // A session log's response line names its tool.
    let line = json!({"v": 1, "type": "response", "call": 3, "tool": "structs_list_entities",
        "error": {"error": {"code": "VALIDATION_OUT_OF_RANGE", "message": "page_size 500 is over 100"}}});
    let r = get(&client, "diagnose", json!({"answer": line.to_string()}))
        .await
        .unwrap();
    let text = texts(&r);
    assert!(text.contains("from structs_list_entities"), "{text}");
    assert!(text.contains("VALIDATION_OUT_OF_RANGE"), "{text}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_prompt_requests_get_invalid_params() {
    let (client, _) = start(&[]).await;
    let cases = [
        ("no-such-prompt", json!({}), "no prompt"),
        ("brief", json!({}), "needs the argument \"entity_id\""),
        (
            "brief",
            json!({"entity_id": "1-1", "colour": "red"}),
            "colour",
        ),
        ("brief", json!({"entity_id": "not an id"}), "is not an id"),
        ("brief", json!({"entity_id": "1-999999"}), "1-999999"),
        (
            "plan-build",
            json!({"planet_id": "1-1", "struct_type": 14}),
            "not a planet",
        ),
        (
            "plan-build",
            json!({"planet_id": "2-1", "struct_type": "death star"}),
            "not a struct type",
        ),
        ("diagnose", json!({}), "a handle or an answer"),
        (
            "run-workflow",
            json!({"workflow": "nope"}),
            "the workflows are",
        ),
        (
            "run-workflow",
            json!({"workflow": "planet-setup", "inputs": "[1]"}),
            "must be a JSON object",
        ),
        (
            "run-workflow",
            json!({"workflow": "planet-setup", "inputs": "{}"}),
            "player_id",
        ),
        ("diagnose", json!({"answer": "{oops"}), "not JSON"),
    ];
    for (name, args, says) in cases {
        let e = get(&client, name, args.clone()).await.unwrap_err();
        assert_eq!(code(&e), -32602, "{name} {args}: {e}");
        assert!(e.to_string().contains(says), "{name} {args}: {e}");
    }
    // The server goes on answering.
    assert!(
        get(&client, "brief", json!({"entity_id": "0-1"}))
            .await
            .is_ok()
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_rank_cap_and_count() {
    let (client, _) = start(&["--world-size", "200"]).await;
    let peer = client.peer();
    // Entity ids by kind and prefix, from the source.
    let c = peer
        .complete_prompt_argument("brief", "entity_id", "1-1", None)
        .await
        .unwrap();
    // 1-1, 1-10…1-19 and 1-100…1-199 of the 200 players: the first 100, fewest digits
    // first.
    assert_eq!(c.values.len(), 100);
    assert_eq!(c.values[..3], ["1-1", "1-10", "1-11"]);
    assert_eq!(c.values[11], "1-100");
    assert!(c.values.iter().all(|v| v.starts_with("1-1")), "{c:?}");
    assert_eq!(c.total, Some(111));
    assert_eq!(c.has_more, Some(true));
    let c = peer
        .complete_prompt_argument("brief", "entity_id", "1-19", None)
        .await
        .unwrap();
    assert_eq!(c.total, Some(11));
    assert_eq!(c.has_more, Some(false));
    // With the kind fixed, digits alone are enough.
    let c = peer
        .complete_prompt_argument("plan-build", "planet_id", "2", None)
        .await
        .unwrap();
    assert!(c.values.contains(&"2-2".to_string()), "{c:?}");
    assert!(c.values.iter().all(|v| v.starts_with("2-2")), "{c:?}");
    // Before the dash, the kinds.
    let c = peer
        .complete_resource_argument("structs://entities/{id}", "id", "1", None)
        .await
        .unwrap();
    assert_eq!(c.values, ["1-", "10-", "11-"]);
    // Struct types by name, and goals.
    let c = peer
        .complete_prompt_argument("plan-build", "struct_type", "refin", None)
        .await
        .unwrap();
    assert_eq!(c.values, ["Ore Refinery"]);
    let c = peer
        .complete_prompt_argument("next", "goal", "", None)
        .await
        .unwrap();
    assert!(c.values.contains(&"defend_planet".to_string()), "{c:?}");
    // Workflow names.
    let c = peer
        .complete_prompt_argument("run-workflow", "workflow", "min", None)
        .await
        .unwrap();
    assert_eq!(c.values, ["mine-refine-convert", "build-mining-operation"]);
    // Doc ids, prefix matches first.
    let c = peer
        .complete_resource_argument("structs://docs/{doc_id}", "doc_id", "guides/", None)
        .await
        .unwrap();
    assert!(
        !c.values.is_empty() && c.values.iter().all(|v| v.starts_with("guides/")),
        "{c:?}"
    );
    // A handle appears once a result is stored.
    let (big, _) = tool(&client, "structs_list_players", json!({"page_size": 100})).await;
    let handle = big["result_handle"].as_str().expect("a handle").to_string();
    let c = peer
        .complete_resource_argument(
            "structs://handles/{handle}{?page,page_size,fields,verbosity}",
            "handle",
            &handle[..handle.len() - 3],
            None,
        )
        .await
        .unwrap();
    assert_eq!(c.values, [handle]);
    // A prompt, argument or template the server does not have has nothing to offer.
    for c in [
        peer.complete_prompt_argument("nope", "x", "", None)
            .await
            .unwrap(),
        peer.complete_prompt_argument("brief", "nope", "", None)
            .await
            .unwrap(),
        peer.complete_resource_argument("http://x/{y}", "y", "", None)
            .await
            .unwrap(),
    ] {
        assert!(c.values.is_empty(), "{c:?}");
        assert_eq!((c.total, c.has_more), (Some(0), Some(false)));
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_and_playbooks_become_prompts_and_a_sync_announces_them() {
    let dir = std::env::temp_dir().join(format!("structs-prompts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("skills/mining")).unwrap();
    std::fs::create_dir_all(dir.join("playbooks")).unwrap();
    std::fs::write(
        dir.join("skills/mining/SKILL.md"),
        "---\ntitle: Mining ore\nsummary: Extract, refine, repeat.\n---\n# Mining\n\nBuild an extractor first.\n",
    )
    .unwrap();
    std::fs::write(dir.join("playbooks/index.md"), "# Playbooks\n").unwrap();
    let dir_arg = dir.to_string_lossy().to_string();
    let (client, host) = start(&["--docs", &dir_arg]).await;

    let names: Vec<String> = client
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert!(names.contains(&"skill-mining".to_string()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("playbook-")),
        "an index is not a prompt: {names:?}"
    );
    let r = get(&client, "skill-mining", json!({"player_id": "1-3"}))
        .await
        .unwrap();
    let resources = embedded(&r);
    assert_eq!(resources[0].0, "structs://docs/skills/mining/SKILL");
    assert!(resources[0].1.contains("Build an extractor first."));
    assert_eq!(resources[1].0, "structs://entities/1-3");

    // A new playbook on disk, then a sync: the client is told, and lists it.
    std::fs::write(
        dir.join("playbooks/under-attack.md"),
        "---\ntitle: Under attack\nsummary: Shields first.\n---\n# Under attack\n",
    )
    .unwrap();
    let (_, failed) = tool(&client, "structs_docs_sync", json!({})).await;
    assert!(!failed);
    let mut told = false;
    for _ in 0..60 {
        if host.0.load(Ordering::SeqCst) > 0 {
            told = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(told, "notifications/prompts/list_changed after the sync");
    let names: Vec<String> = client
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert!(
        names.contains(&"playbook-under-attack".to_string()),
        "{names:?}"
    );
    // A sync that changes no prompt says nothing.
    let before = host.0.load(Ordering::SeqCst);
    let (_, failed) = tool(&client, "structs_docs_sync", json!({})).await;
    assert!(!failed);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(host.0.load(Ordering::SeqCst), before);
    client.cancel().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A megabyte argument to `prompts/get`, `resources/read` or `resources/subscribe` is
/// refused in an error that quotes a little of it, and the log says so a line now and
/// then, not the megabyte each time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_argument_is_refused_briefly_and_logged_a_line_at_most() {
    let dir = std::env::temp_dir().join(format!("structs-huge-arg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("server.log");
    let (client, _) = start(&["--log-file", log.to_str().unwrap()]).await;
    let huge = "9".repeat(900_000);
    let mut said = Vec::new();
    for _ in 0..10 {
        let e = get(&client, "brief", json!({"entity_id": huge}))
            .await
            .unwrap_err();
        said.push(e);
        let e = client
            .read_resource(rmcp::model::ReadResourceRequestParams::new(format!(
                "structs://entity/{huge}"
            )))
            .await
            .unwrap_err();
        said.push(e);
        #[allow(deprecated)]
        let e = client
            .subscribe(rmcp::model::SubscribeRequestParams::new(format!(
                "structs://entity/{huge}"
            )))
            .await
            .unwrap_err();
        said.push(e);
    }
    for e in &said {
        let ServiceError::McpError(e) = e else {
            panic!("a JSON-RPC error, not {e}")
        };
        assert!(
            [-32602, -32002].contains(&e.code.0),
            "{} {}",
            e.code.0,
            e.message
        );
        let whole = serde_json::to_string(e).unwrap();
        assert!(
            whole.len() < 5_000,
            "{} bytes: {}",
            whole.len(),
            &whole[..300]
        );
    }
    client.cancel().await.unwrap();
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        logged.len() < 4_000,
        "{} bytes of log: {logged}",
        logged.len()
    );
    assert!(logged.contains("answered with an error"), "{logged}");
    let _ = std::fs::remove_dir_all(&dir);
}
