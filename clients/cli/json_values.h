// Conversions between google.protobuf.Struct/Value (how the API carries MCP
// JSON) and nlohmann::json (how inspectorctl parses and pretty-prints it),
// and compact proto3 JSON for line-oriented output.
// All functions are pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_JSON_VALUES_H_
#define INSPECTOR_CLIENTS_CLI_JSON_VALUES_H_

#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/struct.pb.h"

namespace inspector::cli {

// The largest integer a JSON number carried as a double (Struct's only
// number type) holds exactly: 2^53.
inline constexpr double kMaxExactInteger = 9007199254740992.0;

// `value` as JSON. Whole numbers within ±2^53 become integers, so that 3
// prints as 3 and not 3.0.
nlohmann::json ValueToJson(const google::protobuf::Value& value);
nlohmann::json StructToJson(const google::protobuf::Struct& value);

// `json` as a Value. Integers beyond ±2^53 cannot be carried exactly and
// give a usage error naming where they are (`where`, then ".key" / "[i]").
absl::StatusOr<google::protobuf::Value> JsonToValue(const nlohmann::json& json,
                                                    const std::string& where);
// The same for a JSON object; anything else is a usage error.
absl::StatusOr<google::protobuf::Struct> JsonToStruct(
    const nlohmann::json& json, const std::string& where);

// `json` indented by two spaces, ending in a newline.
std::string PrettyJson(const nlohmann::json& json);

// `message` as proto3 JSON (camelCase names, scalar fields printed even
// when they hold their default), indented when `add_whitespace`. An
// INTERNAL_ERROR when it cannot be printed.
absl::StatusOr<std::string> ProtoToJsonText(
    const google::protobuf::Message& message, bool add_whitespace);

// `message` as proto3 JSON on one line (camelCase names, scalar fields
// printed even when they hold their default), without a newline.
absl::StatusOr<std::string> ProtoToJsonLine(
    const google::protobuf::Message& message);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_JSON_VALUES_H_
