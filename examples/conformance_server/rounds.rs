//! The suite's fixtures for a tool's own questions (SEP-2322): each asks its client
//! through the layer ([`CallContext::ask_client`]), which on a stateless request sends
//! the questions in an `input_required` round and runs the tool again with the answers,
//! and in a session asks on the connection.

use serde_json::{Value, json};
use structs_console::context::{CallContext, Unasked};

use super::tools::{Answer, text};

/// An elicitation's form asking for one string field.
fn form(message: &str, field: &str) -> Value {
    json!({"message": message, "requestedSchema": {"type": "object",
        "properties": {field: {"type": "string"}}, "required": [field]}})
}

/// A sampling request for `prompt`.
fn sample(prompt: &str, max_tokens: u32) -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens})
}

/// The question `key`, or the tool's error saying why it has no answer (on a stateless
/// request the layer sends the question instead).
async fn ask(key: &str, method: &'static str, params: Value) -> Result<Value, Value> {
    CallContext::current()
        .ask_client(key, method, params)
        .await
        .map_err(|why: Unasked| {
            json!({"isError": true, "content": [{"type": "text", "text": why.to_string()}]})
        })
}

/// A string field of an elicitation's content.
fn field(answer: &Value, name: &str) -> String {
    answer["content"][name]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A sampled message's text.
fn sampled(answer: &Value) -> String {
    answer["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The roots listed, by URI.
fn roots(answer: &Value) -> String {
    let uris: Vec<&str> = answer["roots"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    uris.join(", ")
}

pub async fn elicitation() -> Answer {
    Ok(
        match ask(
            "user_name",
            "elicitation/create",
            form("What is your name?", "name"),
        )
        .await
        {
            Ok(a) => text(format!("Hello, {}!", field(&a, "name"))),
            Err(e) => e,
        },
    )
}

pub async fn sampling() -> Answer {
    let params = sample("What is the capital of France?", 100);
    Ok(
        match ask("capital_question", "sampling/createMessage", params).await {
            Ok(a) => text(format!("The model said: {}", sampled(&a))),
            Err(e) => e,
        },
    )
}

pub async fn list_roots() -> Answer {
    Ok(match ask("client_roots", "roots/list", json!({})).await {
        Ok(a) => text(format!("The client's roots: {}", roots(&a))),
        Err(e) => e,
    })
}

/// Round 2 reaches the tool only once the layer opened the state it sealed.
pub async fn request_state() -> Answer {
    let params = json!({"message": "Please confirm", "requestedSchema": {"type": "object",
        "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}});
    Ok(
        match ask("acknowledge", "elicitation/create", params).await {
            Ok(a) => text(format!("state-ok: confirmed {}", a["content"]["ok"])),
            Err(e) => e,
        },
    )
}

/// Three questions in one round: each asked before any answer is read.
pub async fn multiple_inputs() -> Answer {
    let name = ask(
        "user_name",
        "elicitation/create",
        form("What is your name?", "name"),
    )
    .await;
    let greeting = ask(
        "greeting",
        "sampling/createMessage",
        sample("Generate a greeting", 50),
    )
    .await;
    let listed = ask("client_roots", "roots/list", json!({})).await;
    Ok(match (name, greeting, listed) {
        (Ok(n), Ok(g), Ok(r)) => text(format!(
            "{} {} (roots: {})",
            sampled(&g),
            field(&n, "name"),
            roots(&r)
        )),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => e,
    })
}

/// Two rounds, the second asked only once the first is answered.
pub async fn multi_round() -> Answer {
    let step1 = form("Step 1: What is your name?", "name");
    let name = match ask("step1", "elicitation/create", step1).await {
        Ok(a) => field(&a, "name"),
        Err(e) => return Ok(e),
    };
    let step2 = form("Step 2: What is your favorite color?", "color");
    Ok(match ask("step2", "elicitation/create", step2).await {
        Ok(a) => text(format!("{name} likes {}", field(&a, "color"))),
        Err(e) => e,
    })
}

/// Asks only what the client declared it can answer.
pub async fn capabilities() -> Answer {
    let ctx = CallContext::current();
    let mut said = Vec::new();
    let mut asked = None;
    if ctx.client_declares("sampling") {
        match ask(
            "capital_question",
            "sampling/createMessage",
            sample("Say hello", 20),
        )
        .await
        {
            Ok(a) => said.push(format!("sampled: {}", sampled(&a))),
            Err(e) => asked = Some(e),
        }
    }
    if ctx.client_declares("elicitation") {
        match ask(
            "user_name",
            "elicitation/create",
            form("What is your name?", "name"),
        )
        .await
        {
            Ok(a) => said.push(format!("name: {}", field(&a, "name"))),
            Err(e) => asked = Some(e),
        }
    }
    if let Some(e) = asked {
        return Ok(e);
    }
    if said.is_empty() {
        said.push("the client declared nothing this tool can ask".into());
    }
    Ok(text(said.join("; ")))
}

/// One elicitation: on a stateless request an `input_required` round, never a request
/// of the server's own on the response stream.
pub async fn streaming_elicitation() -> Answer {
    let params = form("What should the stream say?", "text");
    Ok(
        match ask("stream_text", "elicitation/create", params).await {
            Ok(a) => text(format!("The stream says: {}", field(&a, "text"))),
            Err(e) => e,
        },
    )
}

/// Asks to delete `filename` and does so once told yes: as a task, it waits
/// `input_required` for the answer.
pub async fn confirm_delete(filename: String) -> Answer {
    let params = json!({"message": format!("Delete {filename}?"), "requestedSchema": {
        "type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}});
    Ok(match ask("confirm", "elicitation/create", params).await {
        Ok(a) if a["action"] == "accept" && a["content"]["confirm"] == true => {
            text(format!("Deleted {filename}"))
        }
        Ok(_) => text(format!("Kept {filename}: not confirmed")),
        Err(e) => e,
    })
}

/// Two questions at once: as a task, both open together, answerable one at a time.
pub async fn multi_input() -> Answer {
    let (name, ok) = tokio::join!(
        ask(
            "name",
            "elicitation/create",
            form("What is your name?", "name")
        ),
        ask(
            "confirm",
            "elicitation/create",
            form("Go ahead?", "confirm")
        ),
    );
    Ok(match (name, ok) {
        (Ok(n), Ok(c)) => text(format!(
            "{} said {} and {}",
            field(&n, "name"),
            n["action"].as_str().unwrap_or_default(),
            c["action"].as_str().unwrap_or_default()
        )),
        (Err(e), _) | (_, Err(e)) => e,
    })
}

/// Asks the user's name in rounds, then becomes a task and greets them from it.
pub async fn tool_with_task() -> Answer {
    let ctx = CallContext::current();
    let name = match ask(
        "user_name",
        "elicitation/create",
        form("What is your name?", "name"),
    )
    .await
    {
        Ok(a) => field(&a, "name"),
        Err(e) => return Ok(e),
    };
    ctx.become_task();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    Ok(text(format!("Hello, {name}! (answered by the task)")))
}

/// A fixture: its name, its description and how it runs.
type Fixture = (&'static str, &'static str, fn() -> super::tools::Fut);

/// The fixtures, as the table of [`super::tools`] lists them.
pub fn fixtures() -> Vec<Fixture> {
    vec![
        (
            "test_input_required_result_elicitation",
            "Asks the user's name, then greets them.",
            || Box::pin(elicitation()),
        ),
        (
            "test_input_required_result_sampling",
            "Asks the client's model for France's capital.",
            || Box::pin(sampling()),
        ),
        (
            "test_input_required_result_list_roots",
            "Asks the client for its roots.",
            || Box::pin(list_roots()),
        ),
        (
            "test_input_required_result_request_state",
            "Asks for a confirmation; says state-ok once its state is back.",
            || Box::pin(request_state()),
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Asks a name, a greeting and the roots in one round.",
            || Box::pin(multiple_inputs()),
        ),
        (
            "test_input_required_result_multi_round",
            "Asks a name, then a colour, in two rounds.",
            || Box::pin(multi_round()),
        ),
        (
            "test_input_required_result_tampered_state",
            "Asks for a confirmation under a sealed state.",
            || Box::pin(request_state()),
        ),
        (
            "test_input_required_result_capabilities",
            "Asks only what the client declared it can answer.",
            || Box::pin(capabilities()),
        ),
        (
            "test_streaming_elicitation",
            "Asks the user one question.",
            || Box::pin(streaming_elicitation()),
        ),
        (
            "test_tool_with_task",
            "Asks the user's name, then runs on as a task that greets them.",
            || Box::pin(tool_with_task()),
        ),
        (
            "multi_input",
            "Asks two questions at once; a task for a client that can take one.",
            || Box::pin(multi_input()),
        ),
    ]
}
