"""An agent instrumented by the field's own instrumentation: the official Python MCP
SDK with Traceloop's opentelemetry-instrumentation-mcp, exporting its spans over
OTLP/HTTP. It calls one tool inside a span of its own (`agent turn`) and prints the
trace id it made, as JSON.

    agent.py COLLECTOR_URL stdio COMMAND [ARG...]
    agent.py COLLECTOR_URL http URL
"""

import json
import sys

import anyio
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.mcp import McpInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "python-agent"}))
provider.add_span_processor(
    SimpleSpanProcessor(OTLPSpanExporter(endpoint=sys.argv[1].rstrip("/") + "/v1/traces"))
)
trace.set_tracer_provider(provider)

McpInstrumentor().instrument(tracer_provider=provider)

# The SDK's 1.x line, which the instrumentation patches (its 2.x moved the session).
from mcp import ClientSession, StdioServerParameters  # noqa: E402  (after instrumenting)
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamablehttp_client  # noqa: E402


async def turn(session):
    tracer = trace.get_tracer("agent")
    with tracer.start_as_current_span("agent turn") as span:
        await session.initialize()
        result = await session.call_tool("structs_query_player", {"player_id": "1-1"})
        ctx = span.get_span_context()
        return {
            "trace_id": format(ctx.trace_id, "032x"),
            "span_id": format(ctx.span_id, "016x"),
            "is_error": bool(result.isError),
        }


async def main():
    how = sys.argv[2]
    if how == "stdio":
        params = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                out = await turn(session)
    else:
        async with streamablehttp_client(sys.argv[3]) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                out = await turn(session)
    print(json.dumps(out), flush=True)


anyio.run(main)
provider.shutdown()
