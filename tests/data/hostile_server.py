"""An MCP server over stdio that misbehaves in one way, named by its argument.

endless-tools   tools/list pages never end (each page points at the next)
silent-prompts  declares prompts and never answers prompts/list
silent-init     never answers initialize
huge            answers tools/list with one line over 16 MB
deep            answers tools/list nested 100,000 levels deep
stderr-endless  writes to stderr without ever ending the line, then serves
flood           after initialize, sends 40,000 elicitation requests while it serves
sampling-flood  after initialize, sends 40,000 sampling requests while it serves
ask-forever     answers every tools/call with input_required, asking again each round
task-input      answers tools/call with a task that waits on input until tasks/update
                brings it, then completes with the answer it was given
"""
import json
import sys
import threading

mode = sys.argv[1]
out = sys.stdout


lock = threading.Lock()
given = None  # task-input: the name tasks/update brought


def send(message):
    with lock:
        out.write(json.dumps(message) + "\n")
        out.flush()


def answer(id_, result):
    send({"jsonrpc": "2.0", "id": id_, "result": result})


if mode == "stderr-endless":
    def spill():
        chunk = "x" * 65536
        for _ in range(2000):
            sys.stderr.write(chunk)
        sys.stderr.flush()
    threading.Thread(target=spill, daemon=True).start()

for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method = message.get("method")
    id_ = message.get("id")
    if id_ is None:
        if method == "notifications/initialized" and mode == "sampling-flood":
            def flood():
                for n in range(40000):
                    send({"jsonrpc": "2.0", "id": f"ask-{n}", "method": "sampling/createMessage",
                          "params": {"messages": [{"role": "user", "content": {
                              "type": "text", "text": "again?"}}], "maxTokens": 5}})
            threading.Thread(target=flood, daemon=True).start()
        if method == "notifications/initialized" and mode == "flood":
            def flood():
                for n in range(40000):
                    send({"jsonrpc": "2.0", "id": f"ask-{n}", "method": "elicitation/create",
                          "params": {"message": "again?", "requestedSchema": {
                              "type": "object", "properties": {}}}})
            threading.Thread(target=flood, daemon=True).start()
        continue
    if method == "initialize":
        if mode == "silent-init":
            continue
        caps = {"tools": {}}
        if mode == "silent-prompts":
            caps["prompts"] = {}
        answer(id_, {"protocolVersion": message["params"]["protocolVersion"],
                     "capabilities": caps,
                     "serverInfo": {"name": "hostile-" + mode, "version": "1"}})
    elif method == "tools/list":
        if mode == "endless-tools":
            n = int((message.get("params") or {}).get("cursor") or 0)
            answer(id_, {"tools": [{"name": f"tool-{n}", "inputSchema": {"type": "object"}}],
                         "nextCursor": str(n + 1)})
        elif mode == "huge":
            tool = {"name": "big", "description": "x" * (17 * 1024 * 1024),
                    "inputSchema": {"type": "object"}}
            answer(id_, {"tools": [tool]})
        elif mode == "deep":
            depth = 100000
            out.write('{"jsonrpc":"2.0","id":' + json.dumps(id_) + ',"result":{"tools":[],"x":'
                      + "[" * depth + "]" * depth + "}}\n")
            out.flush()
        else:
            answer(id_, {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call" and mode == "ask-forever":
        params = message.get("params") or {}
        state = str(int(params.get("requestState") or 0) + 1)
        answer(id_, {"resultType": "input_required", "requestState": state,
                     "inputRequests": {"again": {"method": "elicitation/create", "params": {
                         "mode": "form", "message": f"once more? ({state})", "requestedSchema": {
                             "type": "object", "properties": {}}}}}})
    elif method == "tools/call" and mode == "task-input":
        task = {"taskId": "t1", "status": "working", "createdAt": "2026-11-28T00:00:00Z",
                "lastUpdatedAt": "2026-11-28T00:00:00Z", "ttlMs": 60000, "pollIntervalMs": 50}
        answer(id_, dict(task, resultType="task"))
    elif method == "tasks/get" and mode == "task-input":
        base = {"taskId": "t1", "createdAt": "2026-11-28T00:00:00Z",
                "lastUpdatedAt": "2026-11-28T00:00:01Z", "ttlMs": 60000, "pollIntervalMs": 50}
        if given is None:
            answer(id_, dict(base, resultType="complete", status="input_required", inputRequests={
                "name": {"method": "elicitation/create", "params": {"mode": "form",
                    "message": "your name?", "requestedSchema": {"type": "object",
                        "properties": {"name": {"type": "string", "default": "Ada"}}}}}}))
        else:
            answer(id_, dict(base, resultType="complete", status="completed", result={
                "content": [{"type": "text", "text": "hello " + given}], "isError": False}))
    elif method == "tasks/update" and mode == "task-input":
        given = message["params"]["inputResponses"]["name"]["content"]["name"]
        answer(id_, {"resultType": "complete"})
    elif method == "prompts/list":
        continue
    elif method == "ping":
        answer(id_, {})
    elif method is not None:
        send({"jsonrpc": "2.0", "id": id_,
              "error": {"code": -32601, "message": "no method " + method}})
