"""The official Python MCP SDK against a server started with a bearer token, as a host
whose configuration left the token out, or has a wrong one, or the right one (argv:
URL TOKEN). Prints one JSON line: for each case, what the SDK raised (its type and
message) or, with the right token, how many tools it listed; tests/peers.rs checks that
what a user would read says which header to set."""

import asyncio
import json
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def leaves(error):
    """The errors under the task groups' wrappers, as the user would read them."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [{"type": type(error).__name__, "message": str(error)}]


async def attempt(url, token):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers) as http:
        try:
            async with streamable_http_client(url, http_client=http) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    await asyncio.wait_for(session.initialize(), 30)
                    tools = await session.list_tools()
                    return {"tools": len(tools.tools)}
        except Exception as error:  # noqa: BLE001 - what it raised is the answer
            return {"raised": leaves(error)}


async def main():
    url, token = sys.argv[1], sys.argv[2]
    report = {
        "none": await attempt(url, None),
        "wrong": await attempt(url, "wrong-" + token[::-1]),
        "right": await attempt(url, token),
    }
    print(json.dumps(report))


asyncio.run(main())
