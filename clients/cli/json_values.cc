#include "clients/cli/json_values.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "common/json_proto.h"

namespace inspector::cli {
namespace {

constexpr int64_t kMaxExactInt = int64_t{1} << 53;

absl::Status InexactNumber(const std::string& where, const std::string& text) {
  return UsageError(
      absl::StrCat(where.empty() ? "a number" : where, " (", text,
                   ") is too large to be sent exactly: MCP arguments travel "
                   "as double-precision numbers"),
      "send it as a string instead (quote it: '\"" + text + "\"')");
}

std::string Child(const std::string& where, const std::string& key) {
  return where.empty() ? key : absl::StrCat(where, ".", key);
}

}  // namespace

nlohmann::json ValueToJson(const google::protobuf::Value& value) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kNullValue:
      return nullptr;
    case google::protobuf::Value::kNumberValue: {
      const double number = value.number_value();
      if (std::isfinite(number) && std::trunc(number) == number &&
          std::fabs(number) <= kMaxExactInteger) {
        return static_cast<int64_t>(number);
      }
      return number;
    }
    case google::protobuf::Value::kStringValue:
      return value.string_value();
    case google::protobuf::Value::kBoolValue:
      return value.bool_value();
    case google::protobuf::Value::kStructValue:
      return StructToJson(value.struct_value());
    case google::protobuf::Value::kListValue: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& item : value.list_value().values()) {
        list.push_back(ValueToJson(item));
      }
      return list;
    }
    default:
      return nullptr;
  }
}

nlohmann::json StructToJson(const google::protobuf::Struct& value) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [key, field] : value.fields()) {
    object[key] = ValueToJson(field);
  }
  return object;
}

absl::StatusOr<google::protobuf::Value> JsonToValue(const nlohmann::json& json,
                                                    const std::string& where) {
  google::protobuf::Value value;
  switch (json.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      value.set_null_value(google::protobuf::NULL_VALUE);
      break;
    case nlohmann::json::value_t::boolean:
      value.set_bool_value(json.get<bool>());
      break;
    case nlohmann::json::value_t::number_integer: {
      const int64_t number = json.get<int64_t>();
      if (number > kMaxExactInt || number < -kMaxExactInt) {
        return InexactNumber(where, json.dump());
      }
      value.set_number_value(static_cast<double>(number));
      break;
    }
    case nlohmann::json::value_t::number_unsigned: {
      const uint64_t number = json.get<uint64_t>();
      if (number > static_cast<uint64_t>(kMaxExactInt)) {
        return InexactNumber(where, json.dump());
      }
      value.set_number_value(static_cast<double>(number));
      break;
    }
    case nlohmann::json::value_t::number_float: {
      const double number = json.get<double>();
      if (!std::isfinite(number)) return InexactNumber(where, json.dump());
      value.set_number_value(number);
      break;
    }
    case nlohmann::json::value_t::string:
      value.set_string_value(json.get<std::string>());
      break;
    case nlohmann::json::value_t::array: {
      auto* list = value.mutable_list_value();
      size_t index = 0;
      for (const auto& item : json) {
        absl::StatusOr<google::protobuf::Value> converted =
            JsonToValue(item, absl::StrCat(where, "[", index++, "]"));
        if (!converted.ok()) return converted.status();
        *list->add_values() = *std::move(converted);
      }
      break;
    }
    case nlohmann::json::value_t::object: {
      absl::StatusOr<google::protobuf::Struct> converted =
          JsonToStruct(json, where);
      if (!converted.ok()) return converted.status();
      *value.mutable_struct_value() = *std::move(converted);
      break;
    }
    default:
      return UsageError(absl::StrCat(where, ": unsupported JSON value"));
  }
  return value;
}

absl::StatusOr<google::protobuf::Struct> JsonToStruct(
    const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) {
    return UsageError(absl::StrCat(where.empty() ? "the value" : where,
                                   " must be a JSON object, not ",
                                   json.type_name()));
  }
  google::protobuf::Struct object;
  for (const auto& [key, item] : json.items()) {
    absl::StatusOr<google::protobuf::Value> converted =
        JsonToValue(item, Child(where, key));
    if (!converted.ok()) return converted.status();
    (*object.mutable_fields())[key] = *std::move(converted);
  }
  return object;
}

std::string PrettyJson(const nlohmann::json& json) {
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

absl::StatusOr<std::string> ProtoToJsonText(
    const google::protobuf::Message& message, bool add_whitespace) {
  ProtoToJsonOptions options;
  options.add_whitespace = add_whitespace;
  options.always_print_primitive_fields = true;
  absl::StatusOr<std::string> json = MessageToJsonText(message, options);
  if (!json.ok()) {
    return LocalError(v1::INTERNAL_ERROR,
                      absl::StrCat("cannot print the answer as JSON: ",
                                   json.status().message()));
  }
  return json;
}

absl::StatusOr<std::string> ProtoToJsonLine(
    const google::protobuf::Message& message) {
  return ProtoToJsonText(message, /*add_whitespace=*/false);
}

}  // namespace inspector::cli
