"""The official Python MCP SDK as an agent's host: lists and calls tools, reads a
resource, lists and gets prompts, completes arguments and sets the log level, over
stdio (argv: stdio BINARY ARGS...) or streamable HTTP (argv: http URL). Prints one
JSON line of what it saw; tests/peers.rs checks it. Any failure raises."""

import asyncio
import json
import logging
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


class Warnings(logging.Handler):
    """Keeps the SDK's own warnings (a failed session termination, say)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = []

    def emit(self, record):
        self.seen.append(record.getMessage())


async def exercise(session, report):
    await session.initialize()
    caps = session.server_capabilities
    report["capabilities"] = sorted(
        k for k in ("tools", "resources", "prompts", "completions", "logging")
        if getattr(caps, k, None) is not None
    )
    tools = await session.list_tools()
    report["tools"] = len(tools.tools)
    called = await session.call_tool("structs_query_entity", {"id": "1-1"})
    report["call_error"] = called.is_error
    report["call_player"] = called.structured_content["entity"]["Player"]["id"]
    read = await session.read_resource("structs://entities/2-1")
    report["read"] = json.loads(read.contents[0].text)["Planet"]["id"]
    prompts = await session.list_prompts()
    report["prompts"] = [p.name for p in prompts.prompts]
    got = await session.get_prompt("brief", {"entity_id": "1-1"})
    report["prompt_text"] = got.messages[0].content.text
    report["prompt_resource"] = str(got.messages[1].content.resource.uri)
    done = await session.complete(
        types.PromptReference(type="ref/prompt", name="plan-build"),
        {"name": "struct_type", "value": "refin"},
    )
    report["completion"] = done.completion.values
    done = await session.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="structs://entities/{id}"),
        {"name": "id", "value": "2-1"},
    )
    report["template_completion"] = done.completion.values
    report["template_total"] = done.completion.total


async def main():
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    report = {}
    if sys.argv[1] == "stdio":
        params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, report)
    else:
        async with streamable_http_client(sys.argv[2]) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await exercise(session, report)
    report["warnings"] = warnings.seen
    print(json.dumps(report))


asyncio.run(main())
