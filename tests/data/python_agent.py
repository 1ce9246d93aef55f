"""A scripted agent on the official Python MCP SDK, for tests/python_agent.rs. It starts
its server over stdio as a host does (argv: SCENARIO COMMAND ARGS...; the command is
whatever the test gives: the server itself, `structs-console proxy`, or either behind
`tee`), and prints one JSON line for each thing it saw, as it sees it.

Scenarios:

- `structs`: a fixed session against our own server (tools, a call answered and one
  refused, resources, prompts, completions, ping); what varies between runs is only
  the wall-clock time in some answers.
- `everything`: a fixed session against the MCP reference server (`server-everything`),
  only calls whose answers are the same every run.
- `hold TOOL ARGS_JSON STEPS`: lists the tools, then for each of STEPS (a comma-separated
  list of names) prints `{"ready": NAME}`, waits for a line on stdin (the test's go-ahead,
  given once it has set its breakpoint), calls TOOL with ARGS_JSON and prints what came
  back: the result, or what the SDK raised for a JSON-RPC error.
- `faults N`: N calls, player and planet queries in a fixed order, each with a 2 s read
  timeout; prints each outcome (`ok` with the result's text, the error code of an
  isError result, `timeout` when the SDK gave up waiting, or the code of a JSON-RPC
  error).

Each line is `{"step": NAME, ...}`; the last is `{"done": true, "warnings": [...]}` with
the SDK's own warnings. Any failure the scenario did not expect raises, and the
exit code says so."""

import json
import logging
import sys

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp import types
from mcp.client.stdio import stdio_client


class Warnings(logging.Handler):
    """Keeps the SDK's own warnings."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = []

    def emit(self, record):
        self.seen.append(record.getMessage())


def say(**line):
    print(json.dumps(line, sort_keys=True), flush=True)


def outcome(result):
    """A tool result as the agent reads it: the flag, the text, the structured content."""
    return {
        "is_error": bool(result.is_error),
        "text": [c.text for c in result.content if getattr(c, "type", None) == "text"],
        "structured": result.structured_content,
    }


async def structs(session):
    tools = await session.list_tools()
    say(step="tools", names=[t.name for t in tools.tools])
    player = await session.call_tool("structs_query_player", {"player_id": "1-1"})
    say(step="player", **outcome(player))
    missing = await session.call_tool("structs_query_player", {"player_id": "1-999"})
    say(step="missing", **outcome(missing))
    planet = await session.call_tool("structs_query_planet", {"planet_id": "2-1"})
    say(step="planet", **outcome(planet))
    resources = await session.list_resources()
    say(step="resources", uris=[str(r.uri) for r in resources.resources])
    read = await session.read_resource("structs://entities/2-1")
    say(step="read", text=read.contents[0].text)
    prompts = await session.list_prompts()
    say(step="prompts", names=[p.name for p in prompts.prompts])
    got = await session.get_prompt("brief", {"entity_id": "1-1"})
    say(step="prompt", text=got.messages[0].content.text)
    done = await session.complete(
        types.PromptReference(type="ref/prompt", name="plan-build"),
        {"name": "struct_type", "value": "refin"},
    )
    say(step="complete", values=done.completion.values)
    await session.send_ping()
    say(step="ping")


async def everything(session):
    tools = await session.list_tools()
    say(step="tools", names=sorted(t.name for t in tools.tools))
    echo = await session.call_tool("echo", {"message": "through the tap ✓"})
    say(step="echo", **outcome(echo))
    total = await session.call_tool("get-sum", {"a": 19, "b": 23})
    say(step="sum", **outcome(total))
    resources = await session.list_resources()
    say(step="resources", uris=sorted(str(r.uri) for r in resources.resources))
    prompts = await session.list_prompts()
    say(step="prompts", names=sorted(p.name for p in prompts.prompts))
    got = await session.get_prompt("simple-prompt")
    say(step="prompt", text=got.messages[0].content.text)
    await session.send_ping()
    say(step="ping")


async def go_ahead():
    line = await anyio.to_thread.run_sync(sys.stdin.readline)
    if not line:
        raise RuntimeError("the test closed stdin before its go-ahead")


async def hold(session, tool, arguments, steps):
    tools = await session.list_tools()
    say(step="tools", count=len(tools.tools))
    for name in steps:
        say(ready=name)
        await go_ahead()
        try:
            result = await session.call_tool(tool, arguments)
        except MCPError as e:
            # A JSON-RPC error: the SDK raises it rather than return a result.
            raised = {"code": e.error.code, "message": e.error.message, "data": e.error.data}
            say(step=name, raised=raised)
            continue
        say(step=name, **outcome(result))


async def faults(session, calls):
    for n in range(1, calls + 1):
        # Every fourth call asks for a planet, the others for a player.
        tool, arguments = (
            ("structs_query_planet", {"planet_id": "2-1"})
            if n % 4 == 0
            else ("structs_query_player", {"player_id": "1-1"})
        )
        try:
            result = await session.call_tool(tool, arguments, read_timeout_seconds=2)
        except MCPError as e:
            # The SDK's own timeout; any other JSON-RPC error is reported by its code.
            timeout = e.error.code == types.REQUEST_TIMEOUT
            say(step=n, tool=tool, outcome="timeout" if timeout else e.error.code, raised=str(e))
            continue
        if result.is_error:
            error = result.structured_content["error"]
            say(step=n, tool=tool, outcome=error["code"], details=error.get("details"))
        else:
            say(step=n, tool=tool, outcome="ok", text=outcome(result)["text"])


async def main():
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    scenario, rest = sys.argv[1], sys.argv[2:]
    if scenario == "hold":
        tool, arguments, steps = rest[0], json.loads(rest[1]), rest[2].split(",")
        command = rest[3:]
    elif scenario == "faults":
        calls, command = int(rest[0]), rest[1:]
    else:
        command = rest
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            say(step="initialize", server=init.server_info.name, protocol=init.protocol_version)
            if scenario == "structs":
                await structs(session)
            elif scenario == "everything":
                await everything(session)
            elif scenario == "hold":
                await hold(session, tool, arguments, steps)
            elif scenario == "faults":
                await faults(session, calls)
            else:
                raise SystemExit(f"no scenario {scenario!r}")
    say(done=True, warnings=warnings.seen)


anyio.run(main)
