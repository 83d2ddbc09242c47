// The value codec of the headers MCP 2026-07-28 mirrors from a request
// body (Mcp-Name, Mcp-Param-*): a value goes as it is when it is visible
// ASCII without leading or trailing spaces, else as "=?base64?...?=".
// The engine encodes (it is the client); the front doors decode (they are
// the server).
//
// Stateless functions; thread-safe.
#ifndef INSPECTOR_SERVER_PROTOCOL_HEADER_CODEC_H_
#define INSPECTOR_SERVER_PROTOCOL_HEADER_CODEC_H_

#include <optional>
#include <string>

namespace inspector::protocol {

// A header value as the revision encodes it: plain when it is visible
// ASCII (spaces inside allowed) without leading or trailing whitespace
// and not itself of the sentinel form, else =?base64?...?=.
std::string EncodeHeaderValue(const std::string& value);

// A received value: "=?base64?...?=" decoded (standard Base64 with its
// padding, nothing else), a plain value as it is. nullopt for bad Base64
// or a plain value with control characters (other than tab) or DEL.
std::optional<std::string> DecodeHeaderValue(const std::string& value);

}  // namespace inspector::protocol

#endif  // INSPECTOR_SERVER_PROTOCOL_HEADER_CODEC_H_
