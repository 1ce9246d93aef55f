"""The official Python MCP SDK's `Client` in its default mode, as a 2026 host uses it: it
probes `server/discover`, and speaks 2026-07-28 when the server does. Against our own
server started with `--confirm-actions` (argv: stdio BINARY ARGS... | http URL), it:

- calls every tool listed: the ones in GOOD with arguments that must succeed on the
  demo world, every other with `{}`, whose answer must be a structured error;
- runs a proof-of-work search as a task (the Tasks extension declared) and polls it to
  its end at the interval the server asks;
- opens a `subscriptions/listen` stream on a struct and sees its update when a
  transaction (confirmed by elicitation, the SDK's round driver answering) changes it.

Prints one JSON line of what it saw, with the SDK's own warnings; tests/peers.rs checks
it. Any failure it did not expect raises."""

import json
import logging
import sys

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client import advertise
from pydantic import ConfigDict

# Calls that succeed on the demo world (`--paused`, seed 42).
GOOD = {
    "structs_query_block_height": {},
    "structs_query_entity": {"id": "1-1"},
    "structs_query_player": {"player_id": "1-1"},
    "structs_query_planet": {"planet_id": "2-1"},
    "structs_query_guild": {"guild_id": "0-1"},
    "structs_query_struct_type": {"struct_type": 14},
    "structs_query_endpoints": {},
    "structs_list_entities": {"entity_type": "player", "page_size": 2},
    "structs_list_players": {"page_size": 2},
    "structs_list_planets": {"page_size": 2},
    "structs_list_guilds": {"page_size": 2},
    "structs_list_structs": {"page_size": 2},
    "structs_list_fleets": {"page_size": 2},
    "structs_validate_entity_id": {"id": "1-11"},
    "structs_validate_schema": {"entity_id": "2-5"},
    "structs_calculate_power": {"alpha_matter": 2.5},
    "structs_calculate_cost": {"struct_type": 14},
    "structs_calculate_mining": {"struct_type": 14},
    "structs_docs_search": {"query": "mining"},
    "structs_docs_get_index": {},
    "structs_docs_sync": {},
    "structs_handle_list": {},
    "structs_task_list": {"limit": 5},
    "structs_workflow_list": {},
    "structs_subscription_list": None,  # a stateless request has no session: refused
    "structs_plan_validate": {
        "steps": [{"tool": "structs_query_player", "params": {"player_id": "1-1"}}]
    },
}


class Warnings(logging.Handler):
    """Keeps the SDK's own warnings."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = []

    def emit(self, record):
        self.seen.append(record.getMessage())


class Anything(types.Result):
    """A result read as it came (the Tasks extension's shapes are not in the SDK)."""

    model_config = ConfigDict(extra="allow")


async def raw(client, method, params):
    request = types.Request[dict, str](method=method, params=params)
    result = await client.session.send_request(request, Anything)
    return result.model_dump(by_alias=True, exclude_none=True)


async def confirm(context, params):
    return types.ElicitResult(action="accept", content={"confirm": True})


async def run(target, report):
    async with Client(
        target,
        elicitation_callback=confirm,
        extensions=[advertise("io.modelcontextprotocol/tasks")],
    ) as client:
        report["protocol"] = client.protocol_version
        tools = (await client.list_tools()).tools
        report["tools"] = len(tools)
        failed, refused = [], []
        for tool in tools:
            args = GOOD.get(tool.name, {})
            result = await client.call_tool(tool.name, args or {})
            structured = result.structured_content or {}
            if tool.name in GOOD and GOOD[tool.name] is not None:
                if result.is_error:
                    failed.append([tool.name, structured])
            elif result.is_error:
                if not structured.get("error", {}).get("code"):
                    failed.append([tool.name, "an error without the error object"])
                refused.append(tool.name)
        report["failed"] = failed
        report["refused"] = len(refused)
        report["subscription_list"] = "structs_subscription_list" in refused

        # A task: created at once, polled to its end.
        created = await raw(client, "tools/call", {
            "name": "structs_calculate_proof_of_work",
            "arguments": {"action_type": "struct_build_complete", "entity_id": "5-1",
                          "difficulty": 700, "block_start": 1, "age": 600},
        })
        report["task_created"] = created["resultType"]
        task = created
        with anyio.fail_after(30):
            while task["status"] == "working":
                await anyio.sleep(task.get("pollIntervalMs", 500) / 1000)
                task = await raw(client, "tasks/get", {"taskId": created["taskId"]})
        report["task_status"] = task["status"]
        report["task_valid"] = task["result"]["structuredContent"]["valid"]

        # A listen stream on an online struct, and the transaction that changes it,
        # confirmed by elicitation in the call's rounds.
        structs = (await client.call_tool(
            "structs_list_entities", {"entity_type": "struct", "page_size": 30}
        )).structured_content["structs"]
        online = None
        for s in structs:
            sid = s["Struct"]["id"]
            one = (await client.call_tool("structs_query_struct", {"struct_id": sid}))
            if one.structured_content["struct"]["structAttributes"]["isOnline"]:
                online = sid
                break
        uri = f"structs://entities/{online}"
        async with client.listen(resource_subscriptions=[uri]) as sub:
            report["honored"] = list(sub.honored.resource_subscriptions or [])
            tx = {"transaction": {"body": {"messages": [
                {"@type": "/structs.structs.MsgStructDeactivate", "structId": online}]}}}
            done = await client.call_tool("structs_action_submit_transaction", tx)
            report["confirmed_tx_error"] = done.is_error
            with anyio.fail_after(10):
                async for event in sub:
                    report["updated"] = getattr(event, "uri", None) == uri
                    break


async def main():
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    report = {}
    if sys.argv[1] == "stdio":
        target = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
    else:
        target = sys.argv[2]
    await run(target, report)
    report["warnings"] = warnings.seen
    print(json.dumps(report))


anyio.run(main)
