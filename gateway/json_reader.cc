#include "gateway/json_reader.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gateway/value_forms.h"
#include "common/errors.h"
#include "common/utf8.h"

namespace inspector::gateway::transcoding {
namespace {

using Json = nlohmann::json;

// A JSON number (integral, in range) or string holding an integer.
template <typename T>
bool JsonToInteger(const Json& j, T* value) {
  using Limits = std::numeric_limits<T>;
  if (j.is_number_unsigned()) {
    uint64_t v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(Limits::max())) return false;
    *value = static_cast<T>(v);
    return true;
  }
  if (j.is_number_integer()) {
    int64_t v = j.get<int64_t>();
    if (v < 0 && !Limits::is_signed) return false;
    if (v < static_cast<int64_t>(Limits::min()) ||
        (v > 0 &&
         static_cast<uint64_t>(v) > static_cast<uint64_t>(Limits::max()))) {
      return false;
    }
    *value = static_cast<T>(v);
    return true;
  }
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) return false;
    // 2^63 and 2^64 are exact doubles; the largest T converts upwards.
    double upper = static_cast<double>(Limits::max()) + 1.0;
    if (d < static_cast<double>(Limits::min()) || d >= upper) return false;
    *value = static_cast<T>(d);
    return true;
  }
  if (j.is_string())
    return ParseInteger(j.get_ref<const std::string&>(), value);
  return false;
}

class JsonReader {
 public:
  JsonReader(const DescriptorPool* pool, DynamicMessageFactory* factory)
      : pool_(pool), factory_(factory) {}

  void Push(std::string_view name) { path_.push_back({name, -1}); }
  void Pop() { path_.pop_back(); }

  absl::Status ReadMessage(const Json& j, Message* message, int depth) {
    if (depth > kMaxDepth) return Fail("nested too deeply");
    const Descriptor* type = message->GetDescriptor();
    switch (type->well_known_type()) {
      case Descriptor::WELLKNOWNTYPE_TIMESTAMP:
      case Descriptor::WELLKNOWNTYPE_DURATION:
      case Descriptor::WELLKNOWNTYPE_FIELDMASK:
        if (!j.is_string() ||
            !StoreWellKnownText(message, j.get_ref<const std::string&>())) {
          return Fail(ExpectationOf(type), &j);
        }
        return absl::OkStatus();
      case Descriptor::WELLKNOWNTYPE_STRUCT:
        return ReadStruct(j, message, depth);
      case Descriptor::WELLKNOWNTYPE_VALUE:
        return ReadValue(j, message, depth);
      case Descriptor::WELLKNOWNTYPE_LISTVALUE:
        return ReadList(j, message, depth);
      case Descriptor::WELLKNOWNTYPE_ANY:
        return ReadAny(j, message, depth);
      default:
        break;
    }
    if (IsWrapper(type->well_known_type())) {
      return ReadScalar(j, message, type->FindFieldByNumber(1));
    }
    if (!j.is_object()) return Fail("expected an object", &j);
    for (const auto& [key, value] : j.get_ref<const Json::object_t&>()) {
      const FieldDescriptor* field = FindField(type, key);
      if (field == nullptr) continue;  // unknown fields are ignored
      Push(key);
      absl::Status status = ReadField(value, message, field, depth);
      if (!status.ok()) return status;
      Pop();
    }
    return absl::OkStatus();
  }

  // The whole field: a map from an object, a repeated field from an array,
  // a singular one from a value.
  absl::Status ReadField(const Json& j, Message* message,
                         const FieldDescriptor* field, int depth) {
    const Reflection* reflection = message->GetReflection();
    if (field->is_map()) {
      if (j.is_null()) return absl::OkStatus();
      if (!j.is_object()) return Fail("expected an object", &j);
      const FieldDescriptor* key_field = field->message_type()->map_key();
      const FieldDescriptor* value_field = field->message_type()->map_value();
      for (const auto& [key, value] : j.get_ref<const Json::object_t&>()) {
        Push(key);
        Message* entry = reflection->AddMessage(message, field);
        if (!StoreText(entry, key_field, key)) {
          return Fail(
              absl::StrCat("invalid map key: ", Expectation(key_field)));
        }
        // The entry is one message level below `message`.
        absl::Status status = ReadSingular(value, entry, value_field, depth + 1,
                                           /*in_container=*/true);
        if (!status.ok()) return status;
        Pop();
      }
      return absl::OkStatus();
    }
    if (field->is_repeated()) {
      if (j.is_null()) return absl::OkStatus();
      if (!j.is_array()) return Fail("expected an array", &j);
      const auto& array = j.get_ref<const Json::array_t&>();
      for (size_t i = 0; i < array.size(); ++i) {
        path_.push_back({{}, static_cast<int64_t>(i)});
        absl::Status status =
            ReadSingular(array[i], message, field, depth, true);
        if (!status.ok()) return status;
        Pop();
      }
      return absl::OkStatus();
    }
    return ReadSingular(j, message, field, depth, false);
  }

  // An error for the current field path.
  absl::Status Fail(std::string_view what, const Json* value = nullptr) const {
    std::string got;
    if (value != nullptr) {
      // Containers are only named: dumping them would recurse as deep as
      // the input nests.
      if (value->is_object()) {
        got = ", got an object";
      } else if (value->is_array()) {
        got = ", got an array";
      } else {
        std::string text =
            value->dump(-1, ' ', false, Json::error_handler_t::replace);
        if (text.size() > 80) text = absl::StrCat(text.substr(0, 77), "...");
        got = absl::StrCat(", got ", text);
      }
    }
    std::string path = PathText();
    if (path.empty()) {
      return Error(
          ErrorCode::INVALID_REQUEST,
          absl::StrCat("invalid request body: ", std::string(what), got));
    }
    return Error(ErrorCode::INVALID_REQUEST,
                 absl::StrCat("invalid value for field \"", path,
                              "\": ", std::string(what), got),
                 {{"field", path}});
  }

 private:
  struct PathPart {
    std::string_view name;
    int64_t index;  // -1 for a name
  };

  std::string PathText() const {
    std::string out;
    for (const PathPart& part : path_) {
      if (part.index >= 0) {
        absl::StrAppend(&out, "[", part.index, "]");
      } else {
        if (!out.empty()) out.push_back('.');
        out.append(part.name);
      }
    }
    return out;
  }

  static std::string ExpectationOf(const Descriptor* type) {
    switch (type->well_known_type()) {
      case Descriptor::WELLKNOWNTYPE_TIMESTAMP:
        return "expected an RFC 3339 timestamp such as "
               "\"2024-01-15T10:00:00Z\"";
      case Descriptor::WELLKNOWNTYPE_DURATION:
        return "expected a duration such as \"1.5s\"";
      default:
        return "expected a comma-separated list of field paths";
    }
  }

  absl::Status ReadSingular(const Json& j, Message* message,
                            const FieldDescriptor* field, int depth,
                            bool in_container) {
    const Reflection* reflection = message->GetReflection();
    bool is_message = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (j.is_null()) {
      if (is_message && field->message_type()->well_known_type() ==
                            Descriptor::WELLKNOWNTYPE_VALUE) {
        Message* value = field->is_repeated()
                             ? reflection->AddMessage(message, field)
                             : reflection->MutableMessage(message, field);
        return ReadValue(j, value, depth + 1);
      }
      if (IsNullValueEnum(field)) {
        Store(message, field).Enum(0);
        return absl::OkStatus();
      }
      if (in_container) return Fail("null is not allowed here");
      return absl::OkStatus();  // null leaves a field unset
    }
    if (const auto* oneof = field->real_containing_oneof();
        oneof != nullptr && !field->is_repeated()) {
      const FieldDescriptor* set =
          reflection->GetOneofFieldDescriptor(*message, oneof);
      if (set != nullptr && set != field) {
        return Fail(absl::StrCat("another field of oneof \"", oneof->name(),
                                 "\" (", set->json_name(), ") is already set"));
      }
    }
    if (is_message) {
      Message* sub = field->is_repeated()
                         ? reflection->AddMessage(message, field)
                         : reflection->MutableMessage(message, field);
      return ReadMessage(j, sub, depth + 1);
    }
    return ReadScalar(j, message, field);
  }

  absl::Status ReadScalar(const Json& j, Message* message,
                          const FieldDescriptor* field) {
    Store store(message, field);
    bool ok = false;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: {
        int32_t v;
        if ((ok = JsonToInteger(j, &v))) store.Int32(v);
        break;
      }
      case FieldDescriptor::CPPTYPE_INT64: {
        int64_t v;
        if ((ok = JsonToInteger(j, &v))) store.Int64(v);
        break;
      }
      case FieldDescriptor::CPPTYPE_UINT32: {
        uint32_t v;
        if ((ok = JsonToInteger(j, &v))) store.UInt32(v);
        break;
      }
      case FieldDescriptor::CPPTYPE_UINT64: {
        uint64_t v;
        if ((ok = JsonToInteger(j, &v))) store.UInt64(v);
        break;
      }
      case FieldDescriptor::CPPTYPE_DOUBLE:
      case FieldDescriptor::CPPTYPE_FLOAT: {
        double v = 0;
        if (j.is_number()) {
          v = j.get<double>();
          ok = true;
        } else if (j.is_string()) {
          ok = ParseDouble(j.get_ref<const std::string&>(), &v);
        }
        if (field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
          ok = ok && FitsFloat(v);
          if (ok) store.Float(static_cast<float>(v));
        } else if (ok) {
          store.Double(v);
        }
        break;
      }
      case FieldDescriptor::CPPTYPE_BOOL:
        if ((ok = j.is_boolean())) store.Bool(j.get<bool>());
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        if (j.is_string()) {
          const std::string& text = j.get_ref<const std::string&>();
          if (field->type() == FieldDescriptor::TYPE_BYTES) {
            std::string bytes;
            if ((ok = DecodeBase64(text, &bytes)))
              store.String(std::move(bytes));
          } else {
            ok = true;  // nlohmann::json only accepts valid UTF-8
            store.String(text);
          }
        }
        break;
      case FieldDescriptor::CPPTYPE_ENUM:
        if (j.is_string()) {
          const EnumValueDescriptor* value = FindEnumValue(
              field->enum_type(), j.get_ref<const std::string&>());
          if (value == nullptr) {
            return Fail(absl::StrCat("unknown value of enum ",
                                     field->enum_type()->full_name()),
                        &j);
          }
          store.Enum(value->number());
          ok = true;
        } else {
          int32_t number;
          if ((ok = j.is_number() && JsonToInteger(j, &number))) {
            store.Enum(number);
          }
        }
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        break;
    }
    if (!ok) return Fail(Expectation(field), &j);
    return absl::OkStatus();
  }

  absl::Status ReadValue(const Json& j, Message* message, int depth) {
    if (depth > kMaxDepth) return Fail("nested too deeply");
    const Descriptor* type = message->GetDescriptor();
    const Reflection* reflection = message->GetReflection();
    switch (j.type()) {
      case Json::value_t::null:
        reflection->SetEnumValue(message, type->FindFieldByNumber(1), 0);
        return absl::OkStatus();
      case Json::value_t::number_integer:
      case Json::value_t::number_unsigned:
      case Json::value_t::number_float: {
        double number = j.get<double>();
        if (!std::isfinite(number)) return Fail("number out of range");
        reflection->SetDouble(message, type->FindFieldByNumber(2), number);
        return absl::OkStatus();
      }
      case Json::value_t::string:
        reflection->SetString(message, type->FindFieldByNumber(3),
                              j.get_ref<const std::string&>());
        return absl::OkStatus();
      case Json::value_t::boolean:
        reflection->SetBool(message, type->FindFieldByNumber(4), j.get<bool>());
        return absl::OkStatus();
      case Json::value_t::object:
        return ReadStruct(
            j, reflection->MutableMessage(message, type->FindFieldByNumber(5)),
            depth + 1);
      case Json::value_t::array:
        return ReadList(
            j, reflection->MutableMessage(message, type->FindFieldByNumber(6)),
            depth + 1);
      default:
        return Fail("expected a JSON value");
    }
  }

  absl::Status ReadStruct(const Json& j, Message* message, int depth) {
    if (depth > kMaxDepth) return Fail("nested too deeply");
    if (!j.is_object()) return Fail("expected an object", &j);
    const FieldDescriptor* fields =
        message->GetDescriptor()->FindFieldByNumber(1);
    const FieldDescriptor* key_field = fields->message_type()->map_key();
    const FieldDescriptor* value_field = fields->message_type()->map_value();
    const Reflection* reflection = message->GetReflection();
    for (const auto& [key, value] : j.get_ref<const Json::object_t&>()) {
      Push(key);
      Message* entry = reflection->AddMessage(message, fields);
      entry->GetReflection()->SetString(entry, key_field, key);
      // Struct -> map entry -> Value: two message levels.
      absl::Status status = ReadValue(
          value, entry->GetReflection()->MutableMessage(entry, value_field),
          depth + 2);
      if (!status.ok()) return status;
      Pop();
    }
    return absl::OkStatus();
  }

  absl::Status ReadList(const Json& j, Message* message, int depth) {
    if (depth > kMaxDepth) return Fail("nested too deeply");
    if (!j.is_array()) return Fail("expected an array", &j);
    const FieldDescriptor* values =
        message->GetDescriptor()->FindFieldByNumber(1);
    const Reflection* reflection = message->GetReflection();
    const auto& array = j.get_ref<const Json::array_t&>();
    for (size_t i = 0; i < array.size(); ++i) {
      path_.push_back({{}, static_cast<int64_t>(i)});
      absl::Status status = ReadValue(
          array[i], reflection->AddMessage(message, values), depth + 1);
      if (!status.ok()) return status;
      Pop();
    }
    return absl::OkStatus();
  }

  // {"@type": "type.googleapis.com/pkg.Type", ...fields} or, for
  // well-known types, {"@type": ..., "value": <its JSON>}.
  absl::Status ReadAny(const Json& j, Message* message, int depth) {
    if (!j.is_object()) return Fail("expected an object", &j);
    const auto& object = j.get_ref<const Json::object_t&>();
    if (object.empty()) return absl::OkStatus();
    auto type_it = object.find("@type");
    if (type_it == object.end() || !type_it->second.is_string()) {
      return Fail("expected \"@type\" with a type URL");
    }
    const std::string& url = type_it->second.get_ref<const std::string&>();
    size_t slash = url.rfind('/');
    const Descriptor* type = pool_->FindMessageTypeByName(
        slash == std::string::npos ? url : url.substr(slash + 1));
    if (type == nullptr)
      return Fail("unknown type in \"@type\"", &type_it->second);
    std::unique_ptr<Message> inner(factory_->GetPrototype(type)->New());
    if (type->well_known_type() != Descriptor::WELLKNOWNTYPE_UNSPECIFIED) {
      auto value_it = object.find("value");
      if (value_it == object.end()) return Fail("expected \"value\"");
      Push("value");
      absl::Status status =
          ReadMessage(value_it->second, inner.get(), depth + 1);
      if (!status.ok()) return status;
      Pop();
    } else {
      absl::Status status = ReadMessage(j, inner.get(), depth + 1);
      if (!status.ok()) return status;
    }
    const Descriptor* any = message->GetDescriptor();
    const Reflection* reflection = message->GetReflection();
    reflection->SetString(message, any->FindFieldByNumber(1), url);
    reflection->SetString(message, any->FindFieldByNumber(2),
                          inner->SerializeAsString());
    return absl::OkStatus();
  }

  const DescriptorPool* pool_;
  DynamicMessageFactory* factory_;
  std::vector<PathPart> path_;
};

bool IsBlank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

absl::Status ReadJsonBody(const DescriptorPool* pool,
                          DynamicMessageFactory* factory, std::string_view body,
                          Message* message, const FieldDescriptor* field) {
  if (IsBlank(body)) return absl::OkStatus();
  Json json;
  try {
    json = Json::parse(body.begin(), body.end());
  } catch (const Json::exception& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, ..." ->
    // "parse error at line 1, ..."
    size_t bracket = what.find("] ");
    if (what.rfind("[json.exception.", 0) == 0 &&
        bracket != std::string::npos) {
      what = what.substr(bracket + 2);
    }
    return Error(ErrorCode::INVALID_REQUEST,
                 absl::StrCat("the request body is not valid JSON: ", what));
  }
  JsonReader reader(pool, factory);
  if (field == nullptr) {
    if (json.is_null()) return absl::OkStatus();
    return reader.ReadMessage(json, message, 0);
  }
  reader.Push(field->json_name());
  return reader.ReadField(json, message, field, 0);
}

}  // namespace inspector::gateway::transcoding
