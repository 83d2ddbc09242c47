// The session token that every API call must present.
//
// inspectord creates it on first start (256 random bits, hex) in a file of
// mode 0600 inside a directory of mode 0700, and reuses it afterwards;
// inspectorctl finds the same file. Where it lives, first match wins:
//   1. $INSPECTOR_TOKEN_FILE
//   2. $XDG_STATE_HOME/inspector/token
//   3. $HOME/.local/state/inspector/token
// All functions are thread-safe.
#ifndef INSPECTOR_COMMON_TOKEN_H_
#define INSPECTOR_COMMON_TOKEN_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace inspector {

// Where a client finds the token (docs/guides/daemon.md, Security defaults);
// part of the message that refuses a missing or wrong token. It names no
// local path: anyone who can connect may ask.
inline constexpr char kTokenLookupHint[] =
    "inspectorctl reads the token by itself; other clients read it from the "
    "daemon's token file, the first of --token-file, $INSPECTOR_TOKEN_FILE, "
    "$XDG_STATE_HOME/inspector/token and ~/.local/state/inspector/token";

// The gRPC metadata key that carries a web UI sign-in (server/auth/
// ui_sessions.h): the gateway sends the browser's cookie under it, and the
// daemon accepts a UI credential under no other key (never as
// `authorization: Bearer` or `x-session-token`).
inline constexpr char kUiSessionMetadataKey[] = "x-inspector-ui-session";

// The token file path per the rules above.
std::string DefaultTokenPath();

// Reads the token at `path`; creates it (and missing parent directories)
// if the file does not exist. Fails if the file exists but is readable or
// writable by group or others, or is empty, rather than trusting it.
absl::StatusOr<std::string> LoadOrCreateToken(const std::string& path);

// Reads an existing token; NOT_FOUND if there is no file.
absl::StatusOr<std::string> ReadToken(const std::string& path);

// 32 random bytes from the kernel, hex-encoded (64 characters).
absl::StatusOr<std::string> GenerateToken();

// Compares in time that depends only on the lengths, not the contents.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace inspector

#endif  // INSPECTOR_COMMON_TOKEN_H_
