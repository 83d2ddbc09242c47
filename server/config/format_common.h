// Pieces shared by the configuration-file reader (formats.cc) and writer
// (format_writer.cc): JSON <-> google.protobuf.Value, the server an error
// is about, and the "type" strings of the map formats. Internal to
// server/config/. Pure functions, thread-safe.
#ifndef INSPECTOR_SERVER_CONFIG_FORMAT_COMMON_H_
#define INSPECTOR_SERVER_CONFIG_FORMAT_COMMON_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/struct.pb.h"
#include "inspector/v1/config.pb.h"

namespace inspector::config::format_internal {

// Configuration files keep their key order.
using Json = nlohmann::ordered_json;

// A JSON value as a google.protobuf.Value (numbers become doubles).
google::protobuf::Value ToValue(const Json& j);

// A google.protobuf.Value or Struct as JSON; object keys sorted, whole
// numbers up to 2^53 written as integers.
Json FromValue(const google::protobuf::Value& v);
Json FromStruct(const google::protobuf::Struct& s);

// Who the errors are about.
struct ServerContext {
  std::string prefix;  // `server "github"` or `servers[3]`
  std::string name;    // "" when unknown
};

// The context of the server called `name`: `server "name"`.
ServerContext ContextFor(std::string_view name);

// INVALID_CONFIG "<prefix>: <field>: <message>" with details "field" and,
// when known, "serverName".
absl::Status ServerError(const ServerContext& ctx, std::string_view field,
                         std::string_view message);

// Transport named by a "type" string of an MCP_SERVERS or VSCODE file
// ("stdio", "sse", "http", "streamable-http", ...), case-insensitive.
std::optional<std::string_view> TransportForType(std::string_view type);

// The "type" string the exporter writes for `transport` ("" = none).
std::string_view DefaultType(std::string_view transport,
                             v1::ConfigFormat format);

}  // namespace inspector::config::format_internal

#endif  // INSPECTOR_SERVER_CONFIG_FORMAT_COMMON_H_
