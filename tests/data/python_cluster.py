"""An agent on the official Python MCP SDK (`Client`, default mode: 2026-07-28 where the
server speaks it) working through one URL, for tests/cluster.rs: behind HAProxy each
request may reach another server. Modes (argv[1]):

session URL
    A scripted session: a result handle read back page by page, a proof-of-work task
    polled to its end, a long task cancelled, a plan with a step reference run as a
    task, a listen stream on a struct and the transaction that changes it. Prints one
    JSON line of what it saw, without ids or times, so that runs through one server and
    through several compare equal.

steady URL STOPFILE
    Calls in a loop (a query, a list, a handle's page, a proof-of-work task polled to
    its end) until STOPFILE exists. Prints counts and every error it met.

long URL N OUTFILE
    Starts N long tasks (a proof-of-work waiting on a block far ahead: no CPU), writes
    their ids to OUTFILE, then polls them all. Once one has ended it asks the rest to
    stop, and polls until all have. Prints each task's end, its message and the server
    the task list says ran it.
"""

import base64
import json
import os
import sys
import time

import anyio
import mcp_types as types
from mcp import Client
from mcp.client import advertise
from pydantic import ConfigDict

# On one thread, the nonce found is the first that meets the difficulty, the same on
# every server (on every core, whichever thread finds one first gives its own).
QUICK_POW = {"action_type": "struct_build_complete", "entity_id": "5-1",
             "difficulty": 700, "block_start": 1, "age": 600, "threads": 1}
# Hashing starts only when the difficulty has fallen to one leading zero: blocks away.
LONG_POW = {"action_type": "struct_build_complete", "entity_id": "5-1",
            "difficulty": 100000000, "block_start": 1, "wait_for_difficulty": 1}


class Anything(types.Result):
    """A result read as it came (the Tasks extension's shapes are not in the SDK)."""

    model_config = ConfigDict(extra="allow")


async def raw(client, method, params):
    request = types.Request[dict, str](method=method, params=params)
    result = await client.session.send_request(request, Anything)
    return result.model_dump(by_alias=True, exclude_none=True)


def client(url):
    return Client(url, extensions=[advertise("io.modelcontextprotocol/tasks")])


async def call(c, name, args):
    """A tool's structured answer; a tool error raises."""
    result = await c.call_tool(name, args)
    if result.is_error:
        raise RuntimeError(f"{name}: {result.structured_content or result.content}")
    return result.structured_content


async def task_to_end(c, created, limit=60):
    task = created
    with anyio.fail_after(limit):
        while task["status"] == "working":
            await anyio.sleep(task.get("pollIntervalMs", 500) / 1000)
            task = await raw(c, "tasks/get", {"taskId": created["taskId"]})
    return task


async def start_task(c, name, args):
    created = await raw(c, "tools/call", {"name": name, "arguments": args})
    if created.get("resultType") != "task":
        raise RuntimeError(f"{name} did not become a task: {created}")
    return created


async def handle_pages(c):
    """A list over the limit (the players with their references), read back page by
    page: what the pages held, and how many there were."""
    first = await call(c, "structs_list_players", {
        "page_size": 100, "include_references": True, "reference_depth": 2})
    handle = first["result_handle"]
    players, references, page = [], set(), 1
    while True:
        got = await call(c, "structs_handle_fetch",
                         {"handle": handle, "page": page, "page_size": 25})
        players += [p["Player"]["id"] for p in got["data"].get("players", [])]
        references |= set(got["data"].get("references", {}))
        if not got["page_info"]["has_more"]:
            return {"rows": got["page_info"]["total"], "players": len(players),
                    "references": len(references), "first": players[0], "pages": page}
        page += 1


async def session(url):
    report = {}
    async with client(url) as c:
        report["protocol"] = c.protocol_version
        report["tools"] = len((await c.list_tools()).tools)
        report["handle"] = await handle_pages(c)

        done = await task_to_end(c, await start_task(
            c, "structs_calculate_proof_of_work", QUICK_POW))
        sc = done["result"]["structuredContent"]
        report["pow"] = {"status": done["status"], "valid": sc["valid"],
                         "nonce": sc["nonce"], "hash": sc["hash"]}

        long = await start_task(c, "structs_calculate_proof_of_work", LONG_POW)
        await anyio.sleep(1.2)
        await raw(c, "tasks/cancel", {"taskId": long["taskId"]})
        ended = await task_to_end(c, long, 20)
        report["cancelled"] = ended["status"]

        plan = {"steps": [
            {"tool": "structs_list_players", "params": {"page_size": 2}},
            {"tool": "structs_query_player",
             "params": {"player_id": "${step[0].data.players[1].Player.id}"}},
        ]}
        ran = await task_to_end(c, await start_task(c, "structs_plan_execute", plan))
        answer = ran["result"]["structuredContent"]
        steps = answer["steps"]
        report["plan"] = {"success": answer["success"],
                          "steps": [s["status"] for s in steps],
                          "resolved": steps[1]["resolved_params"]["player_id"],
                          "player": steps[1]["data"]["player"]["Player"]["id"]}
        listed = await call(c, "structs_task_list", {"limit": 100})
        mine = [t for t in listed["tasks"] if t["task_id"] == ran["taskId"]]
        report["plan_records"] = len(mine)

        structs = (await call(c, "structs_list_entities",
                              {"entity_type": "struct", "page_size": 30}))["structs"]
        online = None
        for s in structs:
            one = await call(c, "structs_query_struct", {"struct_id": s["Struct"]["id"]})
            if one["struct"]["structAttributes"]["isOnline"]:
                online = s["Struct"]["id"]
                break
        uri = f"structs://entities/{online}"
        async with c.listen(resource_subscriptions=[uri]) as sub:
            report["honored"] = list(sub.honored.resource_subscriptions or [])
            # The servers read serve-rest as a node, which takes only signed bytes;
            # serve-rest checks no signature and takes the transaction's JSON as them.
            tx = {"body": {"messages": [
                {"@type": "/structs.structs.MsgStructDeactivate", "structId": online}]}}
            signed = base64.b64encode(json.dumps(tx).encode()).decode()
            sent = await c.call_tool("structs_action_submit_transaction", {"tx_bytes": signed})
            report["tx_error"] = sent.is_error
            with anyio.fail_after(15):
                async for event in sub:
                    report["updated"] = getattr(event, "uri", None) == uri
                    break
        after = await call(c, "structs_query_struct", {"struct_id": online})
        report["online_after"] = after["struct"]["structAttributes"]["isOnline"]
    return report


def describe(e):
    """An exception in one line; an exception group as its leaves."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(x) for x in e.exceptions)
    return f"{type(e).__name__}: {e}"[:400]


async def steady(url, stop):
    """Calls until `stop` exists. A transport error ends the SDK's client (its task
    group fails), so the agent opens another and goes on, as a host would."""
    counts = {"calls": 0, "tasks": 0, "connections": 0}
    errors = []
    while not os.path.exists(stop):
        try:
            async with client(url) as c:
                counts["connections"] += 1
                await steady_calls(c, stop, counts, errors)
        except Exception as e:  # noqa: BLE001 - every error is the finding
            errors.append(f"connection: {describe(e)}")
            await anyio.sleep(0.2)
    return {"counts": counts, "errors": errors}


async def steady_calls(c, stop, counts, errors):
    handle = (await call(c, "structs_list_players", {
        "page_size": 100, "include_references": True, "reference_depth": 2}))["result_handle"]
    while not os.path.exists(stop):
        for name, args in [
            ("structs_query_player", {"player_id": "1-1"}),
            ("structs_list_planets", {"page_size": 5}),
            ("structs_handle_fetch", {"handle": handle, "page": 2, "page_size": 10}),
        ]:
            try:
                await call(c, name, args)
                counts["calls"] += 1
            except RuntimeError as e:
                errors.append(f"{name}: {e}"[:400])
        try:
            done = await task_to_end(c, await start_task(
                c, "structs_calculate_proof_of_work", QUICK_POW), 30)
            if done["status"] != "completed":
                errors.append(f"task ended {done['status']}: {done.get('statusMessage')}")
            counts["tasks"] += 1
        except RuntimeError as e:
            errors.append(f"task: {e}"[:400])
        await anyio.sleep(0.05)


async def long_tasks(url, n, out):
    async with client(url) as c:
        created = [await start_task(c, "structs_calculate_proof_of_work", LONG_POW)
                   for _ in range(n)]
        ids = [t["taskId"] for t in created]
        # Where each runs, as the task list says, before anything stops.
        listed = (await call(c, "structs_task_list", {"limit": 100}))["tasks"]
        servers = {t["task_id"]: t.get("server") for t in listed}
    with open(out + ".tmp", "w") as f:
        json.dump([{"task": i, "server": servers.get(i)} for i in ids], f)
    os.rename(out + ".tmp", out)
    ended, errors = {}, []
    cancelled = False
    with anyio.fail_after(90):
        while len(ended) < n:
            # One client a round: a request in flight on a server that is killed ends
            # the SDK's client, and the agent polls again through another.
            try:
                async with client(url) as c:
                    for i in ids:
                        if i not in ended:
                            t = await raw(c, "tasks/get", {"taskId": i})
                            if t["status"] != "working":
                                ended[i] = t
                    if ended and not cancelled:
                        for i in ids:
                            if i not in ended:
                                await raw(c, "tasks/cancel", {"taskId": i})
                        cancelled = True
            except Exception as e:  # noqa: BLE001
                errors.append(describe(e))
            await anyio.sleep(0.5)
    return {"errors": errors, "tasks": [
        {"task": i, "server": servers.get(i), "status": ended[i]["status"],
         "message": ended[i].get("statusMessage")} for i in ids]}


async def main():
    mode, url = sys.argv[1], sys.argv[2]
    started = time.monotonic()
    if mode == "session":
        report = await session(url)
    elif mode == "steady":
        report = await steady(url, sys.argv[3])
    elif mode == "long":
        report = await long_tasks(url, int(sys.argv[3]), sys.argv[4])
    else:
        raise SystemExit(f"unknown mode {mode}")
    report["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(report))


if __name__ == "__main__":
    anyio.run(main)
