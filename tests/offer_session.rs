//! What the conformance suite does not reach, on the conformance server
//! (examples/conformance_server): a 2025-11-25 session whose tools and offered prompt
//! ask the client mid-call, and an offered prompt list that changes.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, GetPromptRequestParams, Implementation,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use support::mcp_http::Headless;

/// A person at the client: answers each form by the field it asks for, and counts the
/// prompt list's changes and the questions asked.
#[derive(Clone, Default)]
struct Person {
    changed: Arc<AtomicUsize>,
    asked: Arc<AtomicUsize>,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
        ClientConfig::new(caps, Implementation::new("person", "1.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let asked = serde_json::to_value(&request).unwrap();
        let fields = asked["requestedSchema"]["properties"].clone();
        let mut content = serde_json::Map::new();
        for (field, answer) in [
            ("name", "Alice"),
            ("color", "blue"),
            ("context", "the game"),
        ] {
            if fields.get(field).is_some() {
                content.insert(field.into(), json!(answer));
            }
        }
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.fetch_add(1, Ordering::SeqCst);
    }
}

async fn connect(url: &str, person: Person) -> RunningService<RoleClient, Person> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    person.serve(transport).await.expect("a session")
}

fn text(v: &Value) -> String {
    v.to_string()
}

#[tokio::test]
async fn a_session_is_asked_on_its_connection_and_hears_the_prompt_list_change() {
    let server = Headless::conformance_server(&[]).await;
    let person = Person::default();
    let client = connect(&server.url, person.clone()).await;

    // A tool asking twice, one question after the other, on the session.
    let called = client
        .call_tool(CallToolRequestParams::new(
            "test_input_required_result_multi_round",
        ))
        .await
        .expect("the call");
    let said = text(&serde_json::to_value(&called).unwrap());
    assert!(said.contains("Alice likes blue"), "{said}");
    assert_eq!(person.asked.load(Ordering::SeqCst), 2);

    // An offered prompt asking first: asked on the session, then got with the answer.
    let prompt = client
        .get_prompt(GetPromptRequestParams::new(
            "test_input_required_result_prompt",
        ))
        .await
        .expect("the prompt");
    let said = text(&serde_json::to_value(&prompt).unwrap());
    assert!(said.contains("the game"), "{said}");
    assert_eq!(person.asked.load(Ordering::SeqCst), 3);

    // The prompt list grows: a session that listed prompts hears of it.
    let before = client.list_all_prompts().await.expect("prompts").len();
    let added = client
        .call_tool(CallToolRequestParams::new("test_trigger_prompt_change"))
        .await
        .expect("the trigger");
    let said = text(&serde_json::to_value(&added).unwrap());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while person.changed.load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no list_changed after {said}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after = client.list_all_prompts().await.expect("prompts");
    assert_eq!(after.len(), before + 1);
    let new = &after.last().unwrap().name;
    assert!(said.contains(new.as_str()), "{said} names {new}");
    client.cancel().await.ok();
}
