"""A scripted agent on the official Python MCP SDK, for tests/recordings.rs: the same
steps every run, one of which a variant changes, so that two recordings of it differ in
exactly that step. It starts its server over stdio as a host does.

argv: VARIANT COMMAND ARGS...   (VARIANT: `a`, or `b`, whose planet step asks for another
planet, one the world lacks; or `secret`, two calls that carry secrets: one under a key a
configuration hides, one as an id that comes back in the error)

It prints one JSON line per step with what the SDK handed back, whole (the result as the
SDK's model dumps it), then `{"done": true}`. Any failure it did not expect raises."""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def say(**line):
    print(json.dumps(line, sort_keys=True), flush=True)


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def secrets(session):
    for name, arguments in [
        ("keyed", {"player_id": "1-1", "session_key": "K-9f8e7d6c"}),
        ("bad id", {"player_id": "sk-live-AbCdEf123456"}),
    ]:
        result = await session.call_tool("structs_query_player", arguments)
        say(step=name, result=dump(result))


async def steps(session, variant):
    if variant == "secret":
        await secrets(session)
        return
    tools = await session.list_tools()
    say(step="tools", names=sorted(t.name for t in tools.tools))
    planet = "2-1" if variant == "a" else "2-999"
    for name, tool, arguments in [
        ("player", "structs_query_player", {"player_id": "1-1"}),
        ("planet", "structs_query_planet", {"planet_id": planet}),
        ("guild", "structs_query_guild", {"guild_id": "0-1"}),
        ("players", "structs_list_players", {"page_size": 5}),
        ("player again", "structs_query_player", {"player_id": "1-1"}),
    ]:
        result = await session.call_tool(tool, arguments)
        say(step=name, result=dump(result))
    read = await session.read_resource("structs://entities/1-2")
    say(step="read", result=dump(read))
    prompt = await session.get_prompt("brief", {"entity_id": "1-1"})
    say(step="prompt", result=dump(prompt))


async def main():
    variant, command = sys.argv[1], sys.argv[2:]
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            say(step="initialize", protocol=init.protocol_version)
            await steps(session, variant)
    say(done=True)


anyio.run(main)
