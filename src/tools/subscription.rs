//! Subscription tools: `structs_subscription_subscribe`, `_unsubscribe` and `_list`.
//! A subscription belongs to the calling client (an MCP session; the console has the
//! core's own); over MCP each change of a subscribed entity arrives as
//! `notifications/resources/updated` for `structs://entities/{id}`.

use serde_json::{Value, json};

use super::{Env, Hints, Registry, ToolSpec, output};
use super::{id_arg, id_schema, kind_arg};
use crate::context::CallContext;
use crate::context::subscriptions::{MAX_PER_CLIENT, Subscriptions};
use crate::error::{ErrorCode, ToolError};
use crate::handles::Shaping;
use crate::references::Support;

pub fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_subscription_subscribe",
            description: "Watch an entity: every change to it (from actions, attacks, raids, \
                mining) is sent to this client as notifications/resources/updated for \
                structs://entities/{id}; read the resource for the new state. At most 100 per \
                client; subscribing twice to the same entity returns the same subscription.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "entity_type": {"type": ["string", "integer"],
                        "description": "The kind: player, planet, struct, fleet, ... (or its code 0-11)."},
                    "entity_id": id_schema("The entity to watch, e.g. 1-11.")
                },
                "required": ["entity_type", "entity_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Watch an entity",
            hints: Hints::CHANGES,
            output_schema: output::agent::subscribe(),
        },
        subscribe,
    );
    registry.add(
        ToolSpec {
            name: "structs_subscription_unsubscribe",
            description: "Stop a subscription by its id (sub_N).",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "subscription_id": {"type": "string", "maxLength": 32, "pattern": "^sub_[0-9]+$"}
                },
                "required": ["subscription_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Stop watching an entity",
            hints: Hints::CHANGES.closed(),
            output_schema: output::agent::unsubscribe(),
        },
        unsubscribe,
    );
    registry.add(
        ToolSpec {
            name: "structs_subscription_list",
            description: "This client's active subscriptions, oldest first.",
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "List watched entities",
            hints: Hints::LOCAL,
            output_schema: output::agent::subscriptions(),
        },
        list,
    );
}

/// The caller's subscriptions; a stateless request has none to keep them in.
fn mine(env: &Env) -> Result<std::sync::Arc<Subscriptions>, ToolError> {
    let ctx = CallContext::current();
    if !ctx.has_session() {
        return Err(ToolError::new(
            ErrorCode::ValidationRequirementsNotMet,
            "a stateless (2026-07-28) request has no session to keep a subscription in; \
             open subscriptions/listen with resourceSubscriptions [\"structs://entities/{id}\"] \
             and read the updates on that stream",
        )
        .with_extra("use", json!("subscriptions/listen")));
    }
    Ok(ctx.subscriptions().unwrap_or_else(|| env.subscriptions()))
}

async fn subscribe(env: Env, args: Value) -> Result<Value, ToolError> {
    let kind = kind_arg(&args, "entity_type")?.expect("required by the schema");
    let id = id_arg(&args, "entity_id", Some(kind))?;
    if env.source().get(id).await?.is_none() {
        return Err(ToolError::not_found(id, Some("entity_id")));
    }
    if env.events().is_none() {
        return Err(ToolError::new(
            ErrorCode::ApiUnavailable,
            format!(
                "the {} source has no event stream to deliver updates from",
                env.status().name
            ),
        ));
    }
    let sub = mine(&env)?.subscribe(id, env.timestamp(), "tool")?;
    let mut v = serde_json::to_value(&sub).unwrap_or_default();
    v["status"] = json!("active");
    v["message"] = json!(format!(
        "subscribed: changes to {id} arrive as notifications/resources/updated for {}",
        sub.resource_uri
    ));
    Ok(v)
}

async fn unsubscribe(env: Env, args: Value) -> Result<Value, ToolError> {
    let id = args["subscription_id"].as_str().unwrap_or_default();
    let sub = mine(&env)?.unsubscribe(id)?;
    Ok(json!({
        "subscription_id": sub.subscription_id,
        "entity_id": sub.entity_id,
        "status": "unsubscribed",
        "message": "Subscription removed successfully",
    }))
}

async fn list(env: Env, _args: Value) -> Result<Value, ToolError> {
    let subs = mine(&env)?.list();
    Ok(json!({
        "subscriptions": subs,
        "total": subs.len(),
        "limit": MAX_PER_CLIENT,
    }))
}
