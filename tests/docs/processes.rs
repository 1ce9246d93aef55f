//! Two servers writing links into one docs folder at once: no write is lost.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const DOCS: usize = 31;

/// 31 docs, then two servers on the folder, each upserting links from entity 1-8 to
/// every other doc concurrently. The sidecar ends with all 31, and every answer said
/// `created`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_processes_writing_one_sidecar_lose_nothing() {
    let dir = std::env::temp_dir().join(format!("structs-docs-two-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("guides")).unwrap();
    for i in 0..DOCS {
        std::fs::write(
            dir.join(format!("guides/g{i:02}.md")),
            format!("---\ntitle: Guide {i}\nsummary: Number {i}.\n---\n# Guide {i}\n"),
        )
        .unwrap();
    }
    let mut servers = Vec::new();
    for _ in 0..2 {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
        cmd.args(["--headless", "--paused", "--log-level", "warn", "--docs"])
            .arg(&dir);
        servers.push(
            ().serve(TokioChildProcess::new(cmd).unwrap())
                .await
                .unwrap(),
        );
    }
    let calls = (0..DOCS).map(|i| {
        let server = &servers[i % 2];
        async move {
            let Value::Object(args) = json!({"source_kind": "entity", "source_id": "1-8",
                "target_doc_id": format!("guides/g{i:02}")})
            else {
                unreachable!()
            };
            let r = server
                .call_tool(
                    CallToolRequestParams::new("structs_docs_upsert_link").with_arguments(args),
                )
                .await
                .unwrap();
            assert_eq!(r.is_error, Some(false), "{:?}", r.structured_content);
            r.structured_content.unwrap()
        }
    });
    let answers = futures_util::future::join_all(calls).await;
    for a in &answers {
        assert_eq!(a["link"]["outcome"], "created", "{a}");
    }
    let sidecar =
        std::fs::read_to_string(dir.join("_links/entity/1-8.meta.yaml")).expect("the sidecar");
    for i in 0..DOCS {
        assert!(
            sidecar.contains(&format!("guides/g{i:02}")),
            "guides/g{i:02} is missing from the sidecar:\n{sidecar}"
        );
    }
    for s in servers {
        s.cancel().await.unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
