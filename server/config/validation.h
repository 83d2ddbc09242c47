// Validation and partial updates of server configurations.
//
// NormalizeAndValidate() is the single place that decides whether a
// v1::ServerConfig is acceptable: every path that stores a configuration
// (CreateServer, UpdateServer, ImportServers) runs it on the final value.
// ApplyUpdate() implements UpdateServer's partial-update rules
// (apply_update.cc). ParseHttpUrl() (http_url.cc) is the URL parser the
// URL fields go through. All are pure functions on their arguments (no
// I/O, no clock) and thread-safe as long as callers do not share the
// messages they pass in.
//
// Errors: a configuration that breaks a rule gives INVALID_CONFIG (built with
// inspector::Error) whose message names the field, says what is wrong and
// how to fix it, and whose "field" detail is the field's JSON name as the
// mcp.json file spells it: "url", "connectionMode", "env.FOO",
// "headers.Authorization", "args[3]", "timeouts.request",
// "oauth.redirectUri". A malformed update request (unknown or read-only mask
// path) gives INVALID_REQUEST.
#ifndef INSPECTOR_SERVER_CONFIG_VALIDATION_H_
#define INSPECTOR_SERVER_CONFIG_VALIDATION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/transports.h"
#include "google/protobuf/field_mask.pb.h"
#include "inspector/v1/config.pb.h"

namespace inspector::config {

// Transport names (ServerConfig.transport) are in common/transports.h.

// Connection modes (ServerConfig.connection_mode).
inline constexpr std::string_view kConnectionModeDirect = "direct";
inline constexpr std::string_view kConnectionModeProxy = "proxy";

// Limits enforced by NormalizeAndValidate(). Oversized input is refused, not
// truncated.
inline constexpr size_t kMaxNameChars = 200;           // Unicode code points
inline constexpr size_t kMaxCommandBytes = 4096;       // also cwd
inline constexpr size_t kMaxUrlBytes = 8192;           // url and oauth URLs
inline constexpr size_t kMaxEntries = 1000;            // args, env, headers,
                                                       // scopes, extra keys
inline constexpr size_t kMaxValueBytes = 64 * 1024;    // one arg/env/header
inline constexpr size_t kMaxExtraBytes = 1024 * 1024;  // extra, serialized
inline constexpr uint32_t kMaxTimeoutMs = 24u * 60 * 60 * 1000;  // 24 hours
// The most retries (maxRetries) and backoff delays a server may have.
inline constexpr uint32_t kMaxRetries = 100;

// Normalizes `config` in place and checks it against the rules of the
// mcp.json format (seed "Configuration File Format"):
//
//  - name: leading/trailing ASCII whitespace is trimmed; then required,
//    1-200 characters, valid UTF-8, no control characters.
//  - transport: required, "stdio", "streamableHttp" or "sse".
//  - stdio: command required (no NUL, at most 4096 bytes); url and headers
//    not allowed. streamableHttp/sse: url required (see ParseHttpUrl);
//    command, args, env and cwd not allowed.
//  - connectionMode: filled in when unset or empty ("proxy" for stdio,
//    "direct" for HTTP transports); otherwise "direct" or "proxy", and
//    stdio cannot be "direct".
//  - args/env/headers: at most 1000 entries, values at most 64 KiB; env
//    names non-empty without '=' or NUL; header names RFC 7230 tokens
//    (unique ignoring case, not Content-Length/Transfer-Encoding), header
//    values without CR, LF or other control characters except tab.
//  - timeouts: each at most 24 hours (86400000 ms); 0 means the default.
//  - oauth: authorizationUrl/tokenUrl valid http(s) URLs when set,
//    redirectUri a loopback URL (localhost, 127.0.0.1, [::1]), scopes
//    non-empty RFC 6749 scope tokens, protocolVersion one of "2025-03-26",
//    "2025-06-18", "2025-11-25", registrationStrategy one of "dcr",
//    "preregistered", "cimd" (both may be empty).
//  - extra: at most 1000 keys and 1 MiB serialized.
//  - roots: at most 1000; each uri a file:// URI (at most 8192 bytes, valid
//    UTF-8, no whitespace or control characters), each name at most 64 KiB
//    without control characters.
//
// Optional strings that are present but empty (command, cwd, url,
// connectionMode) are cleared first, so "" means "not set". id, createdAt
// and updatedAt are neither checked nor changed.
//
// Returns OK, or INVALID_CONFIG for the first rule broken, with a "field"
// detail. On error `config` may be partly normalized.
absl::Status NormalizeAndValidate(v1::ServerConfig* config);

// Applies an UpdateServer patch to `target` (the stored configuration).
//
// With a non-empty `mask`, exactly the listed fields are replaced: a listed
// field absent from `patch` is cleared in `target`. Paths are the fields'
// JSON names ("env", "connectionMode", "timeouts") or proto names
// ("connection_mode"); sub-fields of timeouts, oauth and clientCapabilities
// may be named ("timeouts.request", "oauth.clientSecret",
// "clientCapabilities.sampling"), and "extra.<key>" sets or
// removes one key of extra. Listing a field and one of its sub-fields
// applies both, in order.
//
// Without a mask, every field present in `patch` replaces the stored one:
// optional scalars that are set (an explicitly empty string, e.g. "url": "",
// clears the field once NormalizeAndValidate runs), lists and maps that are
// non-empty, and timeouts/oauth/extra when set (each replaced as a whole).
//
// Switching transports:
//  - with a mask, list everything that changes, e.g. stdio -> sse:
//      mask  ["transport", "url", "command", "args", "env", "cwd",
//             "connectionMode"]
//      patch {"transport": "sse", "url": "https://host/sse"}
//    which clears the stdio fields and lets connectionMode be derived again.
//  - without a mask, a patch whose transport moves between stdio and the
//    HTTP transports also clears the old family's fields it does not set
//    itself (stdio: command, args, env, cwd; HTTP: url, headers) and
//    connectionMode unless given, so {"transport": "sse", "url": "..."}
//    alone turns a stdio server into an SSE one.
//
// id, createdAt and updatedAt are never touched; naming them in the mask
// gives INVALID_REQUEST, as does an unknown or empty path (the message names
// it; details "field": "updateMask", "path": <path>). On error `target` is
// unchanged. The result is not validated: callers run NormalizeAndValidate.
absl::Status ApplyUpdate(const v1::ServerConfig& patch,
                         const google::protobuf::FieldMask& mask,
                         v1::ServerConfig* target);

// An absolute http(s) URL taken apart by ParseHttpUrl().
struct HttpUrl {
  // "http" or "https", lower case.
  std::string scheme;
  // Host as written, without brackets for IPv6 ("localhost", "::1").
  std::string host;
  bool ipv6 = false;
  // 1-65535, or 0 when the URL names no port.
  int port = 0;
  // Everything after the authority: path, query and fragment ("" or "/...",
  // "?...", "#...").
  std::string path;
};

// Parses `url` strictly: http:// or https:// (any case), a host (DNS name,
// IPv4 or [IPv6]; ASCII letters, digits, '-', '.', '_', '~'), an optional
// port 1-65535, then path/query/fragment. Refused: user credentials in the
// authority, whitespace, control and non-ASCII characters, backslashes,
// malformed percent escapes, more than 8192 bytes. Returns INVALID_ARGUMENT
// whose message says what is wrong (without repeating the URL).
absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url);

}  // namespace inspector::config

#endif  // INSPECTOR_SERVER_CONFIG_VALIDATION_H_
