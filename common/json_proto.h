// Conversions between JSON (nlohmann::json values or JSON text) and protobuf
// messages, through protobuf's proto3 JSON mapping.
//
// protobuf 3.21 answers with its own util::Status; these helpers return
// absl::Status so that callers can use RETURN_IF_ERROR and our error codes.
// The most common case, an MCP JSON object carried in a
// google.protobuf.Struct field, has JsonObjectToStruct() and StructToJson().
// Pure functions, thread-safe.
#ifndef INSPECTOR_COMMON_JSON_PROTO_H_
#define INSPECTOR_COMMON_JSON_PROTO_H_

#include <google/protobuf/message.h>
#include <google/protobuf/struct.pb.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace inspector {

struct JsonToProtoOptions {
  // Skip fields the message does not declare instead of failing (rows
  // written by a newer build, for example).
  bool ignore_unknown_fields = false;
};

struct ProtoToJsonOptions {
  // Indent and break lines.
  bool add_whitespace = false;
  // Write fields that hold their default value.
  bool always_print_primitive_fields = false;
};

// Parses JSON `text` into `message` (which is not cleared first, as with
// protobuf's JsonStringToMessage). InvalidArgument with protobuf's reason
// when the text is not JSON or does not fit the message.
absl::Status JsonTextToMessage(std::string_view text,
                               google::protobuf::Message* message,
                               const JsonToProtoOptions& options = {});

// The same for a parsed JSON value.
absl::Status JsonToMessage(const nlohmann::json& value,
                           google::protobuf::Message* message,
                           const JsonToProtoOptions& options = {});

// `message` as JSON text in lowerCamelCase field names. InvalidArgument
// with protobuf's reason when it cannot be written. (A non-finite number in
// a Struct is written as the string "NaN", "Infinity" or "-Infinity".)
absl::StatusOr<std::string> MessageToJsonText(
    const google::protobuf::Message& message,
    const ProtoToJsonOptions& options = {});

// Replaces `out` with the JSON object `value`. When `value` is not an
// object, or protobuf's parser refuses it, `out` is left empty and the
// answer says why.
absl::Status JsonObjectToStruct(const nlohmann::json& value,
                                google::protobuf::Struct* out);

// `value` as a JSON object; an empty object if it cannot be written.
nlohmann::json StructToJson(const google::protobuf::Struct& value);

}  // namespace inspector

#endif  // INSPECTOR_COMMON_JSON_PROTO_H_
