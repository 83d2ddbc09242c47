#!/bin/sh
# A very small stdio MCP server for tests that start many sessions: it
# answers initialize, ping and tools/list (no tools), answers tools/call
# with a log message (notifications/message) first and an empty result,
# ignores notifications, and answers anything else with -32601. It starts in a
# few milliseconds, unlike a Node server. Exits when stdin closes.
while IFS= read -r line; do
  case "$line" in
    *'"method":"notifications/'*) continue ;;
  esac
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([^,}]*\).*/\1/p')
  [ -n "$id" ] || continue
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"tiny","version":"1.0.0"}}}\n' "$id" ;;
    *'"method":"ping"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}\n' "$id" ;;
    *'"method":"tools/call"'*)
      printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n'
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}\n' "$id" ;;
    *)
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id" ;;
  esac
done
