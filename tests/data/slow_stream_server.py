"""A 2025-11-25 MCP server over streamable HTTP whose session stream opens slowly.

It answers a session's GET (the server-to-client stream) only after half a second,
and names its one tool after what it saw when tools/list came: `stream-was-open` if
the GET had been answered by then, `stream-was-not-open` if the list overtook it. A
server that sends on that stream as soon as a request arrives loses what it sends in
the second case. Prints its port on the first line of stdout.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SESSION = "slow-stream-session"
opened = threading.Event()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, id_ = message.get("method"), message.get("id")
        if id_ is None:
            return self.reply(202)
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "slow-stream", "version": "1"},
            }
            return self.reply(
                200,
                {"jsonrpc": "2.0", "id": id_, "result": result},
                [("Mcp-Session-Id", SESSION)],
            )
        if method == "tools/list":
            name = "stream-was-open" if opened.is_set() else "stream-was-not-open"
            tool = {"name": name, "inputSchema": {"type": "object"}}
            return self.reply(200, {"jsonrpc": "2.0", "id": id_, "result": {"tools": [tool]}})
        if method in ("ping",):
            return self.reply(200, {"jsonrpc": "2.0", "id": id_, "result": {}})
        error = {"code": -32601, "message": f"no method {method}"}
        return self.reply(400, {"jsonrpc": "2.0", "id": id_, "error": error})

    def do_GET(self):
        time.sleep(0.5)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.flush()
        opened.set()
        try:
            while True:
                time.sleep(1)
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
        except OSError:
            pass

    def do_DELETE(self):
        self.reply(200)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
