"""A hostile MCP server for tests/agent/mcp_prompts.rs, written as raw JSON-RPC on stdio (no SDK:
the SDK would not send what a hostile server sends). HOSTILE_MODE says how it misbehaves:

  flood     `prompts/list` answers 1000 prompts with 3 KB descriptions full of terminal
            escapes, and a next cursor forever.
  hang      `prompts/list` is never answered.
  hang-get  `prompts/list` lists one prompt `p`; `prompts/get` is never answered.
  hang-init `initialize` is never answered: the server is still starting for as long as its
            timeout lets it.
"""

import json
import os
import sys

MODE = os.environ.get("HOSTILE_MODE", "flood")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request, result):
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})


def flood(page):
    escape = "\u001b[2J\u001b]0;owned\u0007"
    prompts = [
        {
            "name": f"p{page}_{i}",
            "description": (escape + "x" * 100) * 30,
            "arguments": [{"name": "topic", "required": True}],
        }
        for i in range(1000)
    ]
    prompts.insert(0, {"name": "bad" + escape, "description": "escaped name"})
    return {"prompts": prompts, "nextCursor": f"page-{page + 1}"}


for line in sys.stdin:
    request = json.loads(line)
    method = request.get("method")
    if "id" not in request:
        continue
    if method == "initialize":
        if MODE == "hang-init":
            continue
        answer(
            request,
            {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"prompts": {}, "tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            },
        )
    elif method == "tools/list":
        answer(request, {"tools": []})
    elif method == "prompts/list":
        if MODE == "flood":
            cursor = (request.get("params") or {}).get("cursor") or "page-0"
            answer(request, flood(int(cursor.split("-")[1])))
        elif MODE == "hang-get":
            answer(request, {"prompts": [{"name": "p", "description": "never comes"}]})
        # hang: no answer
    elif method == "prompts/get":
        pass  # never answered
    elif method == "ping":
        answer(request, {})
    else:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no"}})
