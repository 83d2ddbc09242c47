#!/usr/bin/env python3
"""A handshake-era MCP server over stdio that answers server/discover with
garbage: a result that is no DiscoverResult (mode `result`), text that is
not JSON (mode `text`), or nothing at all (mode `silent`). It then serves
initialize, tools/list and a tools/call of `echo` like any 2025-11-25
server, so a client in `auto` mode must fall back to the handshake.

  garbage_discover_server.py [result|text|silent]

Stops when stdin closes.
"""
import json
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "result"


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method, mid = message.get("method"), message.get("id")
    if mid is None:
        continue  # notifications
    if method == "server/discover":
        if mode == "result":
            send({"jsonrpc": "2.0", "id": mid, "result": "garbage"})
        elif mode == "text":
            sys.stdout.write("this is not JSON at all\n")
            sys.stdout.flush()
        continue  # silent: no answer
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "garbage-discover", "version": "1.0.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{
            "name": "echo", "inputSchema": {"type": "object", "properties": {
                "text": {"type": "string"}}}}]}})
    elif method == "tools/call":
        text = message.get("params", {}).get("arguments", {}).get("text", "")
        send({"jsonrpc": "2.0", "id": mid,
              "result": {"content": [{"type": "text", "text": text}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601, "message": "Method not found"}})
