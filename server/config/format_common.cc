#include "server/config/format_common.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/strings.h"
#include "common/transports.h"

namespace inspector::config::format_internal {

using google::protobuf::Struct;
using google::protobuf::Value;

Value ToValue(const Json& j) {
  Value v;
  switch (j.type()) {
    case Json::value_t::boolean:
      v.set_bool_value(j.get<bool>());
      break;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      v.set_number_value(j.get<double>());
      break;
    case Json::value_t::string:
      v.set_string_value(j.get<std::string>());
      break;
    case Json::value_t::array: {
      auto* list = v.mutable_list_value();
      for (const Json& item : j) *list->add_values() = ToValue(item);
      break;
    }
    case Json::value_t::object: {
      auto* fields = v.mutable_struct_value()->mutable_fields();
      for (const auto& [key, item] : j.items()) (*fields)[key] = ToValue(item);
      break;
    }
    default:
      v.set_null_value(google::protobuf::NULL_VALUE);
      break;
  }
  return v;
}

constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

Json FromStruct(const Struct& s) {
  Json out = Json::object();
  std::vector<std::string> keys;
  for (const auto& [key, value] : s.fields()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) out[key] = FromValue(s.fields().at(key));
  return out;
}

Json FromValue(const Value& v) {
  switch (v.kind_case()) {
    case Value::kBoolValue:
      return v.bool_value();
    case Value::kNumberValue: {
      double d = v.number_value();
      if (!std::isfinite(d)) return nullptr;
      if (d == std::trunc(d) && std::fabs(d) < kMaxExactInteger) {
        return static_cast<int64_t>(d);
      }
      return d;
    }
    case Value::kStringValue:
      return v.string_value();
    case Value::kListValue: {
      Json out = Json::array();
      for (const Value& item : v.list_value().values()) {
        out.push_back(FromValue(item));
      }
      return out;
    }
    case Value::kStructValue:
      return FromStruct(v.struct_value());
    default:
      return nullptr;
  }
}

ServerContext ContextFor(std::string_view name) {
  return {absl::StrCat("server \"", AbslView(name), "\""), std::string(name)};
}

absl::Status ServerError(const ServerContext& ctx, std::string_view field,
                         std::string_view message) {
  ErrorDetails details = {{"field", std::string(field)}};
  if (!ctx.name.empty()) details.emplace_back("serverName", ctx.name);
  return Error(
      v1::INVALID_CONFIG,
      absl::StrCat(ctx.prefix, ": ", AbslView(field), ": ", AbslView(message)),
      std::move(details));
}

std::optional<std::string_view> TransportForType(std::string_view type) {
  std::string lower = absl::AsciiStrToLower(AbslView(type));
  if (lower == "stdio") return kTransportStdio;
  if (lower == "sse") return kTransportSse;
  if (lower == "http" || lower == "streamable-http" ||
      lower == "streamablehttp" || lower == "streamable_http") {
    return kTransportStreamableHttp;
  }
  return std::nullopt;
}

std::string_view DefaultType(std::string_view transport,
                             v1::ConfigFormat format) {
  if (transport == kTransportStdio) {
    return format == v1::CONFIG_FORMAT_VSCODE ? kTransportStdio : "";
  }
  if (transport == kTransportSse) return kTransportSse;
  return "http";
}

}  // namespace inspector::config::format_internal
