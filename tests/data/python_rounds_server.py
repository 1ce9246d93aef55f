"""A 2026-era MCP server written with the official Python SDK (`mcp` 2.3.0), for the
client's tests: tools whose parameters are filled by asking the client, which the SDK
does in rounds (`input_required`) under 2026-07-28 and with requests mid-call under
2025-11-25.

- `confirm_delete(name)`: asks for a yes (an elicitation form with `confirm`).
- `summarize(text)`: asks the client's model for a summary (sampling).
- `count_roots()`: asks for the client's roots.
- `add(a, b)`: asks nothing; its sum is off by `ROUNDS_FIXTURE_SKEW` when set (a
  deliberate change, for the replay tests to catch).
- `slow_square(n, seconds=0.3)`: n*n (plus `ROUNDS_FIXTURE_SKEW`) after `seconds`. For a 2026-07-28
  client that declares the Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`)
  the call answers at once with `resultType: "task"` and runs on; `tasks/get` follows
  it (`pollIntervalMs` 100, `ttlMs` 60000), `tasks/cancel` stops it, `tasks/update` is
  acknowledged (these tasks never ask for input). Any other client gets the plain result.
  The SDK has no tasks of its own: `Tasks` below builds them on its extension hooks.

Run: `python python_rounds_server.py stdio`, or `... http PORT` (streamable HTTP at /mcp).
"""

import asyncio
import os
import sys
import time
import uuid
from datetime import datetime, timezone
from typing import Annotated, Any

from mcp import MCPError
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CreateMessageResult,
    InputResponseRequestParams,
    ListRootsResult,
    RequestParams,
    SamplingMessage,
    TextContent,
)
from mcp_types.methods import is_input_required, serialize_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

TASKS = "io.modelcontextprotocol/tasks"
POLL_INTERVAL_MS = 100
TTL_MS = 60_000


class TaskRef(RequestParams):
    task_id: str


class TaskUpdate(InputResponseRequestParams):
    task_id: str


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Tasks(Extension):
    """The Tasks extension for the named tools, kept in this process's memory."""

    identifier = TASKS

    def __init__(self, *tools: str) -> None:
        self._tools = frozenset(tools)
        self._tasks: dict[str, dict[str, Any]] = {}
        self._expires: dict[str, float] = {}
        self._running: dict[str, asyncio.Task[None]] = {}

    def methods(self) -> list[MethodBinding]:
        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        return [
            MethodBinding(method=method, params_type=params, handler=handler, protocol_versions=modern)
            for method, params, handler in (
                ("tasks/get", TaskRef, self._get),
                ("tasks/update", TaskUpdate, self._update),
                ("tasks/cancel", TaskRef, self._cancel),
            )
        ]

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> Any:
        caps = ctx.session.client_capabilities
        declared = caps is not None and TASKS in (caps.extensions or {})
        if params.name not in self._tools or not declared or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return await call_next(ctx)
        now = _now()
        task_id = uuid.uuid4().hex
        task = {
            "taskId": task_id,
            "status": "working",
            "statusMessage": f"{params.name} is running",
            "createdAt": now,
            "lastUpdatedAt": now,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }
        self._tasks[task_id] = task
        self._expires[task_id] = time.monotonic() + TTL_MS / 1000
        self._running[task_id] = asyncio.get_running_loop().create_task(self._run(task, ctx, call_next))
        return {"resultType": "task", **task}

    async def _run(self, task: dict[str, Any], ctx: Any, call_next: Any) -> None:
        try:
            result = await call_next(ctx)
            if isinstance(result, BaseModel):
                result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if is_input_required(result):
                ended: dict[str, Any] = {
                    "status": "failed",
                    "error": {"code": INTERNAL_ERROR, "message": "this fixture's tasks cannot ask for input"},
                }
            else:
                wire = serialize_server_result("tools/call", ctx.protocol_version, result)
                ended = {"status": "completed", "result": wire}
        except asyncio.CancelledError:
            raise  # `_cancel` wrote the task's end
        except MCPError as e:
            ended = {"status": "failed", "error": e.error.model_dump(by_alias=True, mode="json", exclude_none=True)}
        except Exception as e:
            ended = {"status": "failed", "error": {"code": INTERNAL_ERROR, "message": str(e)}}
        finally:
            self._running.pop(task["taskId"], None)
        task.pop("statusMessage", None)
        task.update(ended, lastUpdatedAt=_now())

    def _find(self, task_id: str) -> dict[str, Any]:
        now = time.monotonic()
        for gone in [t for t, at in self._expires.items() if at < now and t not in self._running]:
            self._tasks.pop(gone, None)
            self._expires.pop(gone, None)
        task = self._tasks.get(task_id)
        if task is None:
            raise MCPError(INVALID_PARAMS, f"no task {task_id!r}", {"taskId": task_id})
        return task

    async def _get(self, ctx: Any, params: TaskRef) -> dict[str, Any]:
        return dict(self._find(params.task_id))

    async def _update(self, ctx: Any, params: TaskUpdate) -> dict[str, Any]:
        self._find(params.task_id)  # nothing is asked, so any answers are ignored
        return {}

    async def _cancel(self, ctx: Any, params: TaskRef) -> dict[str, Any]:
        task = self._find(params.task_id)
        running = self._running.pop(params.task_id, None)
        if running is not None and task["status"] == "working":
            running.cancel()
            task.pop("statusMessage", None)
            task.update(status="cancelled", lastUpdatedAt=_now())
        return {}


app = MCPServer("rounds-fixture", extensions=[Tasks("slow_square")])


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


@app.tool()
async def slow_square(n: int, seconds: float = 0.3) -> int:
    """Squares a number, slowly: a task for a client that declares the Tasks extension."""
    await asyncio.sleep(seconds)
    return n * n + int(os.environ.get("ROUNDS_FIXTURE_SKEW", "0"))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
