#include "common/json_proto.h"

#include <google/protobuf/stubs/stringpiece.h>
#include <google/protobuf/util/json_util.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace inspector {
namespace {

template <typename ProtobufStatus>
absl::Status FromProtobuf(const ProtobufStatus& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      std::string(status.message().data(), status.message().size()));
}

}  // namespace

absl::Status JsonTextToMessage(std::string_view text,
                               google::protobuf::Message* message,
                               const JsonToProtoOptions& options) {
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = options.ignore_unknown_fields;
  return FromProtobuf(google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(text.data(), text.size()), message, parse));
}

absl::Status JsonToMessage(const nlohmann::json& value,
                           google::protobuf::Message* message,
                           const JsonToProtoOptions& options) {
  return JsonTextToMessage(
      value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      message, options);
}

absl::StatusOr<std::string> MessageToJsonText(
    const google::protobuf::Message& message,
    const ProtoToJsonOptions& options) {
  google::protobuf::util::JsonPrintOptions print;
  print.add_whitespace = options.add_whitespace;
  print.always_print_primitive_fields = options.always_print_primitive_fields;
  std::string text;
  absl::Status status = FromProtobuf(
      google::protobuf::util::MessageToJsonString(message, &text, print));
  if (!status.ok()) return status;
  return text;
}

absl::Status JsonObjectToStruct(const nlohmann::json& value,
                                google::protobuf::Struct* out) {
  out->Clear();
  if (!value.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a JSON object, got ", value.type_name()));
  }
  absl::Status status = JsonToMessage(value, out);
  if (!status.ok()) out->Clear();
  return status;
}

nlohmann::json StructToJson(const google::protobuf::Struct& value) {
  absl::StatusOr<std::string> text = MessageToJsonText(value);
  if (!text.ok()) return nlohmann::json::object();
  nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, false);
  return parsed.is_discarded() ? nlohmann::json::object() : parsed;
}

}  // namespace inspector
