// Reading JSON-RPC messages without rewriting them.
//
// The engine must route, record and correlate messages it may not fully
// understand, and it must change a message's id without re-serializing it
// (docs/architecture.md: forward what you see). InspectMessage()
// validates that the text is JSON, classifies it, and notes where the
// top-level "id" value sits so ReplaceId() can splice a new one in.
// Pure functions; thread-safe.
#ifndef INSPECTOR_SERVER_ENGINE_JSON_RPC_H_
#define INSPECTOR_SERVER_ENGINE_JSON_RPC_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace inspector::engine {

// The error codes JSON-RPC 2.0 defines (its section 5.1).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

enum class MessageKind {
  kRequest,       // has "method" and "id"
  kNotification,  // has "method", no "id"
  kResponse,      // has "id" and "result"
  kError,         // has "error" (and an "id", possibly null)
  kBatch,         // a JSON array
  kInvalid,       // JSON, but none of the above
};

// "request", "notification", "response", "error", "batch", "invalid".
const char* KindName(MessageKind kind);

struct MessageInfo {
  MessageKind kind = MessageKind::kInvalid;
  // JSON text of the top-level id ("7", "\"abc\"", "null"); empty if none.
  std::string id;
  // Byte offset and length of the id value in the inspected text.
  size_t id_offset = 0;
  size_t id_length = 0;
  std::string method;
  // tools/call and prompts/get: params.name; resources/read, subscribe and
  // unsubscribe: params.uri; completion/complete: params.ref.name or uri;
  // tasks/get, tasks/update and tasks/cancel: params.taskId.
  std::string target;
  // JSON text of the progress token: params._meta.progressToken of a
  // request, params.progressToken of notifications/progress.
  std::string progress_token;
  // notifications/cancelled: JSON text of params.requestId.
  std::string cancelled_request_id;
  // kError: error.code as decimal text.
  std::string error_code;
  // notifications/message: params.level; notifications/resources/updated:
  // params.uri is in target.
  std::string level;
  // The top-level "jsonrpc" is the string "2.0".
  bool jsonrpc_2_0 = false;
};

// PROTOCOL_ERROR (INTERNAL) if `raw` is not a single valid JSON value;
// otherwise the message's classification. A JSON value that is not an
// object or array is kInvalid.
absl::StatusOr<MessageInfo> InspectMessage(std::string_view raw);

// `raw` with its id value (as located by InspectMessage) replaced by
// `new_id_json`. Everything else is kept byte for byte.
std::string ReplaceId(std::string_view raw, const MessageInfo& info,
                      std::string_view new_id_json);

// The reference tokens of an RFC 6901 JSON Pointer ("/a/b~1c" -> a, b/c;
// "" -> none: the whole document); nullopt if `pointer` is not one.
std::optional<std::vector<std::string>> PointerTokens(std::string_view pointer);

// The text of the value `tokens` (PointerTokens) point at in `raw`, which
// InspectMessage accepted (valid JSON), found by scanning: nothing is
// parsed or copied on the way. Arrays take decimal indexes without
// leading zeros; of duplicate keys the last wins. nullopt if there is no
// such value.
std::optional<std::string_view> FindByPointer(
    std::string_view raw, const std::vector<std::string>& tokens);

// JSON text of `text` as a JSON string (quoted and escaped).
std::string JsonQuote(std::string_view text);

// The string value of JSON string text (`"abc"` -> abc); the text itself if
// it is not a JSON string (numbers: `7` -> 7). `json_text` is valid JSON.
std::string UnquoteJson(std::string_view json_text);

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_JSON_RPC_H_
