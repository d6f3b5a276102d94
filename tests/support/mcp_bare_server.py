"""The least an MCP stdio server can be, with no SDK: answers ``initialize``,
``tools/list`` (one tool, ``add``) and ``tools/call``, and ends the moment its stdin
closes (``os._exit``), so what a client's exit waits for is the client's own doing.
With ``IGNORE_EOF=1`` it lingers past the end of its stdin, as a stuck server would."""

import json
import os
import sys
import time

TOOL = {"name": "add", "description": "Add two whole numbers.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}


def answer(request: dict) -> dict | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                  "serverInfo": {"name": "bare", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        args = params.get("arguments") or {}
        result = {"content": [{"type": "text", "text": str(args.get("a", 0) + args.get("b", 0))}]}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no such method"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


for line in sys.stdin:
    reply = answer(json.loads(line)) if line.strip() else None
    if reply is not None:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
if os.environ.get("IGNORE_EOF"):
    time.sleep(60)
os._exit(0)
