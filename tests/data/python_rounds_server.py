"""A 2026-era MCP server written with the official Python SDK (`mcp` 2.3.0), for the
client's tests: tools whose parameters are filled by asking the client, which the SDK
does in rounds (`input_required`) under 2026-07-28 and with requests mid-call under
2025-11-25.

- `confirm_delete(name)`: asks for a yes (an elicitation form with `confirm`).
- `summarize(text)`: asks the client's model for a summary (sampling).
- `count_roots()`: asks for the client's roots.
- `add(a, b)`: asks nothing; its sum is off by `ROUNDS_FIXTURE_SKEW` when set (a
  deliberate change, for the replay tests to catch).

Run: `python python_rounds_server.py stdio`, or `... http PORT` (streamable HTTP at /mcp).
"""

import os
import sys
from typing import Annotated

from mcp.server.mcpserver import Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel

app = MCPServer("rounds-fixture")


class Confirm(BaseModel):
    confirm: bool = True


def ask_confirm(name: str) -> Elicit[Confirm]:
    return Elicit(f"Delete {name}?", Confirm)


@app.tool()
def confirm_delete(name: str, answer: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
    """Deletes a thing once a person says yes."""
    return f"deleted {name}" if answer.confirm else f"kept {name}"


def ask_model(text: str) -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))],
        max_tokens=50,
    )


@app.tool()
def summarize(text: str, reply: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Summarizes a text with the client's model."""
    content = reply.content
    said = content.text if isinstance(content, TextContent) else str(content)
    return f"summary: {said}"


def ask_roots() -> ListRoots:
    return ListRoots()


@app.tool()
def count_roots(roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """Counts the client's roots."""
    return f"{len(roots.roots)} roots"


@app.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b + int(os.environ.get("ROUNDS_FIXTURE_SKEW", "0"))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
