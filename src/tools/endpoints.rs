//! `structs_query_endpoints`: the chain REST endpoints the sources read.

use serde_json::{Value, json};

use super::kind_arg;
use super::{Env, Hints, Registry, ToolSpec, output};
use crate::error::ToolError;
use crate::handles::Shaping;
use crate::references::Support;

/// One REST endpoint: (method, path, entity kind or "", category, paginated, description).
type Endpoint = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static str,
);

pub const ENDPOINTS: &[Endpoint] = &[
    (
        "GET",
        "/structs/guild/{id}",
        "guild",
        "queries",
        false,
        "Get a guild by id",
    ),
    (
        "GET",
        "/structs/guild",
        "guild",
        "queries",
        true,
        "List guilds",
    ),
    (
        "GET",
        "/structs/player/{id}",
        "player",
        "queries",
        false,
        "Get a player by id",
    ),
    (
        "GET",
        "/structs/player",
        "player",
        "queries",
        true,
        "List players",
    ),
    (
        "GET",
        "/structs/planet/{id}",
        "planet",
        "queries",
        false,
        "Get a planet by id",
    ),
    (
        "GET",
        "/structs/planet",
        "planet",
        "queries",
        true,
        "List planets",
    ),
    (
        "GET",
        "/structs/planet_by_player/{playerId}",
        "planet",
        "queries",
        false,
        "Get the planets a player owns",
    ),
    (
        "GET",
        "/structs/reactor/{id}",
        "reactor",
        "queries",
        false,
        "Get a reactor by id",
    ),
    (
        "GET",
        "/structs/reactor",
        "reactor",
        "queries",
        true,
        "List reactors",
    ),
    (
        "GET",
        "/structs/substation/{id}",
        "substation",
        "queries",
        false,
        "Get a substation by id",
    ),
    (
        "GET",
        "/structs/substation",
        "substation",
        "queries",
        true,
        "List substations",
    ),
    (
        "GET",
        "/structs/struct/{id}",
        "struct",
        "queries",
        false,
        "Get a struct by id",
    ),
    (
        "GET",
        "/structs/struct",
        "struct",
        "queries",
        true,
        "List structs",
    ),
    (
        "GET",
        "/structs/struct_type/{id}",
        "",
        "queries",
        false,
        "Get a struct type by its integer id",
    ),
    (
        "GET",
        "/structs/struct_type",
        "",
        "queries",
        true,
        "List struct types",
    ),
    (
        "GET",
        "/structs/allocation/{id}",
        "allocation",
        "queries",
        false,
        "Get an allocation by id",
    ),
    (
        "GET",
        "/structs/allocation",
        "allocation",
        "queries",
        true,
        "List allocations",
    ),
    (
        "GET",
        "/structs/allocation_by_source/{sourceId}",
        "allocation",
        "queries",
        false,
        "Get the allocations from a source",
    ),
    (
        "GET",
        "/structs/allocation_by_destination/{destinationId}",
        "allocation",
        "queries",
        false,
        "Get the allocations to a destination",
    ),
    (
        "GET",
        "/structs/infusion/{destinationId}/{address}",
        "infusion",
        "queries",
        false,
        "Get the infusion of an address into a destination",
    ),
    (
        "GET",
        "/structs/infusion",
        "infusion",
        "queries",
        true,
        "List infusions",
    ),
    (
        "GET",
        "/structs/infusion_by_destination/{destinationId}",
        "infusion",
        "queries",
        true,
        "List the infusions into a destination",
    ),
    (
        "GET",
        "/structs/address/{address}",
        "address",
        "queries",
        false,
        "Get an address by its bech32 form",
    ),
    (
        "GET",
        "/structs/address",
        "address",
        "queries",
        true,
        "List addresses",
    ),
    (
        "GET",
        "/structs/address_by_player/{playerId}",
        "address",
        "queries",
        false,
        "Get the addresses of a player",
    ),
    (
        "GET",
        "/structs/fleet/{id}",
        "fleet",
        "queries",
        false,
        "Get a fleet by id",
    ),
    (
        "GET",
        "/structs/fleet",
        "fleet",
        "queries",
        true,
        "List fleets",
    ),
    (
        "GET",
        "/structs/fleet_by_index/{index}",
        "fleet",
        "queries",
        false,
        "Get a fleet by index",
    ),
    (
        "GET",
        "/structs/provider/{id}",
        "provider",
        "queries",
        false,
        "Get a provider by id",
    ),
    (
        "GET",
        "/structs/provider",
        "provider",
        "queries",
        true,
        "List providers",
    ),
    (
        "GET",
        "/structs/agreement/{id}",
        "agreement",
        "queries",
        false,
        "Get an agreement by id",
    ),
    (
        "GET",
        "/structs/agreement",
        "agreement",
        "queries",
        true,
        "List agreements",
    ),
    (
        "GET",
        "/structs/agreement_by_provider/{providerId}",
        "agreement",
        "queries",
        false,
        "Get the agreements of a provider",
    ),
    (
        "GET",
        "/blockheight",
        "",
        "system",
        false,
        "Get the current block height",
    ),
    (
        "GET",
        "/structs/structs/params",
        "",
        "system",
        false,
        "Get the structs module parameters",
    ),
    (
        "POST",
        "/cosmos/tx/v1beta1/txs",
        "",
        "transactions",
        false,
        "Broadcast a signed transaction",
    ),
];

pub const CATEGORIES: [&str; 3] = ["queries", "system", "transactions"];

pub fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_query_endpoints",
            description: "List the chain REST endpoints the sources read (method, path, \
                description, whether paginated), optionally for one entity kind or one \
                category (queries, system, transactions).",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "entity_type": {"type": ["string", "integer"],
                        "description": "Only endpoints for this kind: a name (player, planet, ...) or a code 0-11."},
                    "category": {"type": "string", "enum": CATEGORIES,
                        "description": "Only endpoints of this category."}
                },
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "The chain's REST endpoints",
            hints: Hints::LOCAL,
            output_schema: output::game::endpoints(),
        },
        query_endpoints,
    );
}

async fn query_endpoints(env: Env, args: Value) -> Result<Value, ToolError> {
    let kind = kind_arg(&args, "entity_type")?;
    let category = args.get("category").and_then(Value::as_str);
    let endpoints: Vec<Value> = ENDPOINTS
        .iter()
        .filter(|e| kind.is_none_or(|k| e.2 == k.name()))
        .filter(|e| category.is_none_or(|c| e.3 == c))
        .map(|(method, path, entity, category, paginated, description)| {
            json!({
                "method": method, "path": path, "description": description,
                "entity_type": if entity.is_empty() { Value::Null } else { json!(entity) },
                "category": category, "paginated": paginated,
            })
        })
        .collect();
    Ok(json!({
        "total": endpoints.len(),
        "endpoints": endpoints,
        "source": env.status().name,
        "timestamp": env.timestamp(),
    }))
}
