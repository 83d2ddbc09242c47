// The session file: a recorded session as JSON in the shape of the
// ProxySession (docs/guides/intercept-and-sessions.md), written by
// ExportSession and read back by ImportSession.
//
//   {
//     "format": "inspectord-session/1",
//     "id": "<session id>",
//     "started_at": "2026-01-02T03:04:05.678Z",
//     "ended_at": "..." | null,
//     "transport": "stdio" | "streamable_http" | "sse",
//     "server_command": "npx -y pkg" | null,   (stdio)
//     "server_url": "http://..." | null,       (streamable_http, sse)
//     "metadata": {"kind", "name", "notes", "server": {...},
//                  "protocol_version"?, "end_reason"?, "replay_of"?, ...},
//     "messages": [{
//       "id": "<message id>", "sequence": 1, "timestamp": "...",
//       "direction": "client_to_server" | "server_to_client",
//       "transport": "stdio", "raw": {the JSON-RPC message},
//       "jsonrpc_id": 1 | "a" | null, "method": "tools/call" | null,
//       "correlated_id": "<message id>" | null, "modified": false,
//       "original_raw": {...} | null, "kind": "request",
//       "target"?, "duration_ms"?, "success"?, "error_code"?,
//       "truncated"?, "raw_size"?, "raw_is_text"?
//     }, ...]
//   }
//
// Determinism: keys are sorted, two-space indent, numbers as nlohmann's
// shortest round-trip form, a final newline; raw and original_raw are
// re-serialized that way. So export(import(export(x))) == export(x) byte for
// byte (the ids of an imported session's messages are kept for that, see
// storage/session_store.h).
//
// Masking (unless include_secrets): every env and header value of the
// server, secrets in its URL and arguments (common/secrets.h), and, in
// raw and original_raw, scalar values under secret-looking keys
// (IsSecretName: token, password, secret, api_key, authorization, ...) and
// secrets in http(s) URLs in string values. Each becomes "[REDACTED]".
// Messages stored cut (truncated) or that are not JSON keep their text as a
// JSON string with "raw_is_text": true, unmasked.
//
// Pure functions, thread-safe.
#ifndef INSPECTOR_SERVER_SESSIONS_SESSION_FILE_H_
#define INSPECTOR_SERVER_SESSIONS_SESSION_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/session_store.h"

namespace inspector::sessions {

inline constexpr std::string_view kSessionFileFormat = "inspectord-session/1";

struct ExportedFile {
  std::string json;
  uint32_t masked = 0;  // values replaced by "[REDACTED]"
};

ExportedFile ExportSessionFile(
    const storage::StoredSession& session,
    const std::vector<storage::SessionMessage>& messages,
    bool include_secrets);

// A session file read back: the session (id, kind, transport, times,
// server_json, name, notes, metadata_json, ...) and its messages in order,
// each with its file id and correlated_index. INVALID_REQUEST (details
// {"field": "<JSON Pointer>"}) naming the first problem: not JSON, not an
// object, a missing or mistyped member, an unknown transport, direction or
// kind, a bad timestamp, sequences out of order, duplicate message ids, a
// correlated_id naming no earlier message.
struct ParsedFile {
  storage::StoredSession session;
  std::vector<storage::SessionMessage> messages;
};
absl::StatusOr<ParsedFile> ParseSessionFile(std::string_view json);

// The server's command line (argv joined with spaces, quoted where
// needed) and URL from sessions.server_json, secrets masked unless
// `include_secrets`; "" when unknown or not that kind of server.
std::string ServerCommandLine(const std::string& server_json,
                              bool include_secrets);
std::string ServerUrl(const std::string& server_json, bool include_secrets);

// A stored session as API output: server_command and server_url filled,
// masked.
v1::Session SessionForApi(const storage::StoredSession& stored);

// "stdio", "streamable_http", "sse" for the stored transport names, and
// back ("" if unknown).
std::string FileTransport(std::string_view stored);
std::string StoredTransport(std::string_view file);

}  // namespace inspector::sessions

#endif  // INSPECTOR_SERVER_SESSIONS_SESSION_FILE_H_
