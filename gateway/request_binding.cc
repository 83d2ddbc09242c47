// Transcoder::BuildRequest: binds an HTTP request to a route's gRPC
// request message, in the order transcoder.h documents: the body (raw into
// google.api.HttpBody, or JSON through json_reader.h), then path variables,
// then query parameters for the fields still open.
#include <google/protobuf/arena.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gateway/json_reader.h"
#include "gateway/path_template.h"
#include "gateway/transcoder.h"
#include "gateway/value_forms.h"
#include "common/errors.h"
#include "common/utf8.h"

namespace inspector::gateway {
namespace {

using google::protobuf::Arena;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using transcoding::Expectation;
using transcoding::FindField;
using transcoding::HasTextForm;
using transcoding::kArenaInitialBlock;
using transcoding::ReadJsonBody;
using transcoding::StoreText;
using transcoding::StoreWellKnownText;

// Splits "a.b.c" without allocating per part.
std::vector<std::string_view> SplitDots(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t dot = text.find('.', start);
    if (dot == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, dot - start));
    start = dot + 1;
  }
}

// Query component decoding: '+' is a space, then %XX.
bool DecodeQueryComponent(std::string_view raw, std::string* out) {
  if (raw.find('+') == std::string_view::npos) return PercentDecode(raw, out);
  std::string spaced(raw);
  std::replace(spaced.begin(), spaced.end(), '+', ' ');
  return PercentDecode(spaced, out);
}

absl::Status InvalidField(std::string_view field, std::string_view what) {
  std::string name(field);
  return Error(ErrorCode::INVALID_REQUEST,
               absl::StrCat("invalid value for field \"", name,
                            "\": ", std::string(what)),
               {{"field", name}});
}

}  // namespace

absl::StatusOr<std::string> Transcoder::BuildRequest(
    const Route& route, const PathBindings& bindings, std::string_view query,
    std::string_view body, std::string_view content_type) const {
  if (route.method == nullptr) {
    return Error(ErrorCode::INTERNAL_ERROR, "route without a method");
  }
  const Descriptor* input = route.method->input_type();
  // It lands in a proto3 string field, which the daemon refuses to parse
  // unless it is UTF-8.
  if (!IsValidUtf8(content_type)) {
    return Error(ErrorCode::INVALID_REQUEST,
                 "the Content-Type header is not valid UTF-8");
  }
  char initial_block[kArenaInitialBlock];
  google::protobuf::ArenaOptions arena_options;
  arena_options.initial_block = initial_block;
  arena_options.initial_block_size = sizeof(initial_block);
  Arena arena(arena_options);
  Message* request = Prototype(input)->New(&arena);
  const Reflection* reflection = request->GetReflection();

  // 1. The body.
  const FieldDescriptor* body_field = nullptr;
  if (route.body == "*") {
    if (input == http_body_ && http_body_ != nullptr) {
      reflection->SetString(request, http_body_content_type_,
                            std::string(content_type));
      reflection->SetString(request, http_body_data_, std::string(body));
    } else {
      absl::Status status =
          ReadJsonBody(pool_, &factory_, body, request, nullptr);
      if (!status.ok()) return status;
    }
  } else if (!route.body.empty()) {
    body_field = input->FindFieldByName(route.body);
    if (body_field == nullptr) {
      return Error(ErrorCode::INTERNAL_ERROR,
                   absl::StrCat("route body \"", route.body,
                                "\" names no field of ", input->full_name()));
    }
    if (http_body_ != nullptr && !body_field->is_repeated() &&
        body_field->message_type() == http_body_) {
      if (!body.empty()) {
        Message* http_body = reflection->MutableMessage(request, body_field);
        http_body->GetReflection()->SetString(
            http_body, http_body_content_type_, std::string(content_type));
        http_body->GetReflection()->SetString(http_body, http_body_data_,
                                              std::string(body));
      }
    } else {
      absl::Status status =
          ReadJsonBody(pool_, &factory_, body, request, body_field);
      if (!status.ok()) return status;
    }
  }

  // 2. Path variables.
  for (const auto& [field_path, value] : bindings) {
    Message* message = request;
    std::vector<std::string_view> parts = SplitDots(field_path);
    const FieldDescriptor* field = nullptr;
    for (size_t i = 0; i < parts.size(); ++i) {
      field = message->GetDescriptor()->FindFieldByName(std::string(parts[i]));
      bool last = i + 1 == parts.size();
      if (field == nullptr || field->is_repeated() ||
          (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) == last) {
        return Error(
            ErrorCode::INTERNAL_ERROR,
            absl::StrCat("path variable \"", field_path,
                         "\" names no scalar field of ", input->full_name()));
      }
      if (!last)
        message = message->GetReflection()->MutableMessage(message, field);
    }
    if (!StoreText(message, field, value)) {
      return InvalidField(field_path,
                          absl::StrCat(Expectation(field), " in the path"));
    }
  }

  // 3. Query parameters, for what the body and path left open.
  if (route.body != "*" && !query.empty()) {
    std::vector<std::string> singular_seen;
    std::string key;
    std::string value;
    size_t start = 0;
    while (start <= query.size()) {
      size_t amp = query.find('&', start);
      if (amp == std::string_view::npos) amp = query.size();
      std::string_view param = query.substr(start, amp - start);
      start = amp + 1;
      if (param.empty()) continue;
      size_t eq = param.find('=');
      std::string_view raw_key = param.substr(0, eq);
      std::string_view raw_value = eq == std::string_view::npos
                                       ? std::string_view()
                                       : param.substr(eq + 1);
      if (!DecodeQueryComponent(raw_key, &key) || key.empty()) continue;

      // Resolve the (possibly dotted, either-form) name; unknown: ignore.
      std::vector<std::string_view> parts = SplitDots(key);
      std::vector<const FieldDescriptor*> chain;
      const Descriptor* type = input;
      bool known = true;
      for (size_t i = 0; i < parts.size(); ++i) {
        const FieldDescriptor* field =
            type == nullptr ? nullptr : FindField(type, std::string(parts[i]));
        if (field == nullptr) {
          known = false;
          break;
        }
        chain.push_back(field);
        bool last = i + 1 == parts.size();
        if (!last) {
          if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
              field->is_repeated() || HasTextForm(field->message_type())) {
            known = false;
            break;
          }
          type = field->message_type();
        }
      }
      if (!known) continue;
      if (body_field != nullptr && chain[0] == body_field) continue;
      std::string proto_path;
      for (const FieldDescriptor* field : chain) {
        if (!proto_path.empty()) proto_path.push_back('.');
        proto_path.append(field->name());
      }
      bool bound = false;
      for (const auto& [bound_path, unused] : bindings) {
        if (bound_path == proto_path ||
            (bound_path.size() > proto_path.size() &&
             bound_path.compare(0, proto_path.size(), proto_path) == 0 &&
             bound_path[proto_path.size()] == '.') ||
            (proto_path.size() > bound_path.size() &&
             proto_path.compare(0, bound_path.size(), bound_path) == 0 &&
             proto_path[bound_path.size()] == '.')) {
          bound = true;
          break;
        }
      }
      if (bound) continue;

      const FieldDescriptor* field = chain.back();
      bool is_message = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
      if (field->is_map() ||
          (is_message && !HasTextForm(field->message_type()))) {
        return InvalidField(key, "cannot be set from a query parameter");
      }
      if (!DecodeQueryComponent(raw_value, &value)) {
        return InvalidField(key, "malformed percent-encoding in the query");
      }
      if (!field->is_repeated()) {
        if (std::find(singular_seen.begin(), singular_seen.end(), proto_path) !=
            singular_seen.end()) {
          return InvalidField(key, "given more than once in the query");
        }
        singular_seen.push_back(proto_path);
      }
      Message* message = request;
      for (size_t i = 0; i + 1 < chain.size(); ++i) {
        message = message->GetReflection()->MutableMessage(message, chain[i]);
      }
      bool ok;
      if (is_message) {
        Message* sub =
            field->is_repeated()
                ? message->GetReflection()->AddMessage(message, field)
                : message->GetReflection()->MutableMessage(message, field);
        ok = StoreWellKnownText(sub, value);
      } else {
        ok = StoreText(message, field, value);
      }
      if (!ok) return InvalidField(key, Expectation(field));
    }
  }
  return request->SerializeAsString();
}

}  // namespace inspector::gateway
