#include "clients/web-gateway/transcoder.h"

#include <google/protobuf/arena.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "clients/web-gateway/http_errors.h"
#include "common/errors.h"
#include "common/rfc3339.h"
#include "common/strings.h"
#include "google/api/httpbody.pb.h"

namespace inspector::gateway {
namespace {

using google::protobuf::Arena;
using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::DynamicMessageFactory;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Json = nlohmann::json;

// Message nesting that protobuf's parser accepts (its default recursion
// limit): a request nested deeper would be refused by the daemon, so it is
// refused here with a clear message. Depths count message levels, so a
// JSON object inside a google.protobuf.Struct costs three.
constexpr int kMaxDepth = 100;
// The range of Timestamp is kMinTimestampSeconds..kMaxTimestampSeconds
// (common/rfc3339.h).
// About 10,000 years, the range of Duration.
constexpr int64_t kMaxDurationSeconds = 315576000000;
// Requests and responses are usually small: the first 8 KiB of a call's
// messages come from the stack instead of the heap.
constexpr size_t kArenaInitialBlock = 8192;

bool IsWrapper(Descriptor::WellKnownType type) {
  switch (type) {
    case Descriptor::WELLKNOWNTYPE_DOUBLEVALUE:
    case Descriptor::WELLKNOWNTYPE_FLOATVALUE:
    case Descriptor::WELLKNOWNTYPE_INT64VALUE:
    case Descriptor::WELLKNOWNTYPE_UINT64VALUE:
    case Descriptor::WELLKNOWNTYPE_INT32VALUE:
    case Descriptor::WELLKNOWNTYPE_UINT32VALUE:
    case Descriptor::WELLKNOWNTYPE_STRINGVALUE:
    case Descriptor::WELLKNOWNTYPE_BYTESVALUE:
    case Descriptor::WELLKNOWNTYPE_BOOLVALUE:
      return true;
    default:
      return false;
  }
}

// Well-known types that have a one-string form (query parameters).
bool HasTextForm(const Descriptor* type) {
  Descriptor::WellKnownType wkt = type->well_known_type();
  return wkt == Descriptor::WELLKNOWNTYPE_TIMESTAMP ||
         wkt == Descriptor::WELLKNOWNTYPE_DURATION ||
         wkt == Descriptor::WELLKNOWNTYPE_FIELDMASK || IsWrapper(wkt);
}

bool IsNullValueEnum(const FieldDescriptor* field) {
  return field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM &&
         field->enum_type()->full_name() == "google.protobuf.NullValue";
}

// Finds a field by its proto name ("server_id") or JSON name ("serverId").
const FieldDescriptor* FindField(const Descriptor* type,
                                 const std::string& name) {
  if (const FieldDescriptor* f = type->FindFieldByName(name)) return f;
  const FieldDescriptor* f = type->FindFieldByCamelcaseName(name);
  if (f != nullptr && f->json_name() == name) return f;
  for (int i = 0; i < type->field_count(); ++i) {
    if (type->field(i)->json_name() == name) return type->field(i);
  }
  return nullptr;
}

// ---------------------------------------------------------------------
// Text forms of values.

// Reads ".d{1,9}" if present, as nanoseconds.
bool ReadFraction(std::string_view text, size_t* pos, int32_t* nanos) {
  *nanos = 0;
  if (*pos >= text.size() || text[*pos] != '.') return true;
  ++*pos;
  int digits = 0;
  int32_t value = 0;
  while (*pos < text.size() && text[*pos] >= '0' && text[*pos] <= '9') {
    if (digits == 9) return false;
    value = value * 10 + (text[*pos] - '0');
    ++digits;
    ++*pos;
  }
  if (digits == 0) return false;
  for (int i = digits; i < 9; ++i) value *= 10;
  *nanos = value;
  return true;
}

// RFC 3339 (the rule is in common/rfc3339.h), within Timestamp's range.
bool ParseTimestamp(std::string_view text, int64_t* seconds, int32_t* nanos) {
  return ParseRfc3339Timestamp(text, seconds, nanos);
}

bool FormatTimestamp(int64_t seconds, int32_t nanos, std::string* out) {
  std::string text;
  if (!AppendRfc3339Timestamp(seconds, nanos, &text)) return false;
  out->push_back('"');
  out->append(text);
  out->push_back('"');
  return true;
}

// "1.5s", "-0.001s", "3s".
bool ParseDuration(std::string_view text, int64_t* seconds, int32_t* nanos) {
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && text[pos] == '-') {
    negative = true;
    ++pos;
  }
  size_t start = pos;
  int64_t whole = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    whole = whole * 10 + (text[pos] - '0');
    if (whole > kMaxDurationSeconds) return false;
    ++pos;
  }
  if (pos == start) return false;
  if (!ReadFraction(text, &pos, nanos)) return false;
  if (pos + 1 != text.size() || text[pos] != 's') return false;
  *seconds = negative ? -whole : whole;
  if (negative) *nanos = -*nanos;
  return true;
}

bool FormatDuration(int64_t seconds, int32_t nanos, std::string* out) {
  if (seconds < -kMaxDurationSeconds || seconds > kMaxDurationSeconds ||
      nanos < -999999999 || nanos > 999999999 || (seconds > 0 && nanos < 0) ||
      (seconds < 0 && nanos > 0)) {
    return false;
  }
  out->push_back('"');
  if (seconds < 0 || nanos < 0) out->push_back('-');
  absl::StrAppend(out, seconds < 0 ? -seconds : seconds);
  AppendNanosFraction(nanos < 0 ? -nanos : nanos, out);
  out->append("s\"");
  return true;
}

// FieldMask paths: "connection_mode" <-> "connectionMode".
std::string SnakeToCamel(std::string_view path) {
  std::string out;
  bool upper = false;
  for (char c : path) {
    if (c == '_') {
      upper = true;
    } else if (upper && c >= 'a' && c <= 'z') {
      out.push_back(static_cast<char>(c - 'a' + 'A'));
      upper = false;
    } else {
      out.push_back(c);
      upper = false;
    }
  }
  return out;
}

std::string CamelToSnake(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (c >= 'A' && c <= 'Z') {
      out.push_back('_');
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool ParseDouble(std::string_view text, double* value) {
  if (text == "NaN") {
    *value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (text == "Infinity") {
    *value = std::numeric_limits<double>::infinity();
    return true;
  }
  if (text == "-Infinity") {
    *value = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (text.empty() || text.front() == ' ' || text.back() == ' ') return false;
  return absl::SimpleAtod(AbslView(text), value) && std::isfinite(*value);
}

bool FitsFloat(double value) {
  return !std::isfinite(value) ||
         std::fabs(value) <= std::numeric_limits<float>::max();
}

bool ParseBool(std::string_view text, bool* value) {
  if (text == "true" || text == "1") {
    *value = true;
    return true;
  }
  if (text == "false" || text == "0") {
    *value = false;
    return true;
  }
  return false;
}

bool DecodeBase64(std::string_view text, std::string* out) {
  if (text.find_first_of("-_") != std::string_view::npos) {
    return absl::WebSafeBase64Unescape(AbslView(text), out);
  }
  return absl::Base64Unescape(AbslView(text), out);
}

// Integer text ("42", "-7"); no spaces, no '+'.
template <typename T>
bool ParseInteger(std::string_view text, T* value) {
  if (text.empty() || text.front() == '+' || text.front() == ' ' ||
      text.back() == ' ') {
    return false;
  }
  return absl::SimpleAtoi(AbslView(text), value);
}

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

// What a field of this type expects, for error messages.
std::string Expectation(const FieldDescriptor* field) {
  switch (field->type()) {
    case FieldDescriptor::TYPE_INT32:
    case FieldDescriptor::TYPE_SINT32:
    case FieldDescriptor::TYPE_SFIXED32:
      return "expected a 32-bit integer";
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_SINT64:
    case FieldDescriptor::TYPE_SFIXED64:
      return "expected a 64-bit integer";
    case FieldDescriptor::TYPE_UINT32:
    case FieldDescriptor::TYPE_FIXED32:
      return "expected an unsigned 32-bit integer";
    case FieldDescriptor::TYPE_UINT64:
    case FieldDescriptor::TYPE_FIXED64:
      return "expected an unsigned 64-bit integer";
    case FieldDescriptor::TYPE_DOUBLE:
      return "expected a number";
    case FieldDescriptor::TYPE_FLOAT:
      return "expected a number in the range of a 32-bit float";
    case FieldDescriptor::TYPE_BOOL:
      return "expected true or false";
    case FieldDescriptor::TYPE_STRING:
      return "expected a UTF-8 string";
    case FieldDescriptor::TYPE_BYTES:
      return "expected base64";
    case FieldDescriptor::TYPE_ENUM:
      return absl::StrCat("expected a value of enum ",
                          field->enum_type()->full_name());
    case FieldDescriptor::TYPE_MESSAGE:
    case FieldDescriptor::TYPE_GROUP:
      switch (field->message_type()->well_known_type()) {
        case Descriptor::WELLKNOWNTYPE_TIMESTAMP:
          return "expected an RFC 3339 timestamp such as "
                 "\"2024-01-15T10:00:00Z\"";
        case Descriptor::WELLKNOWNTYPE_DURATION:
          return "expected a duration such as \"1.5s\"";
        case Descriptor::WELLKNOWNTYPE_FIELDMASK:
          return "expected a comma-separated list of field paths";
        default:
          return "expected an object";
      }
  }
  return "unexpected value";
}

// Stores one scalar value with Set* (singular) or Add* (repeated).
class Store {
 public:
  Store(Message* message, const FieldDescriptor* field)
      : message_(message),
        field_(field),
        reflection_(message->GetReflection()),
        repeated_(field->is_repeated()) {}

  void Int32(int32_t v) {
    repeated_ ? reflection_->AddInt32(message_, field_, v)
              : reflection_->SetInt32(message_, field_, v);
  }
  void Int64(int64_t v) {
    repeated_ ? reflection_->AddInt64(message_, field_, v)
              : reflection_->SetInt64(message_, field_, v);
  }
  void UInt32(uint32_t v) {
    repeated_ ? reflection_->AddUInt32(message_, field_, v)
              : reflection_->SetUInt32(message_, field_, v);
  }
  void UInt64(uint64_t v) {
    repeated_ ? reflection_->AddUInt64(message_, field_, v)
              : reflection_->SetUInt64(message_, field_, v);
  }
  void Double(double v) {
    repeated_ ? reflection_->AddDouble(message_, field_, v)
              : reflection_->SetDouble(message_, field_, v);
  }
  void Float(float v) {
    repeated_ ? reflection_->AddFloat(message_, field_, v)
              : reflection_->SetFloat(message_, field_, v);
  }
  void Bool(bool v) {
    repeated_ ? reflection_->AddBool(message_, field_, v)
              : reflection_->SetBool(message_, field_, v);
  }
  void String(std::string v) {
    repeated_ ? reflection_->AddString(message_, field_, std::move(v))
              : reflection_->SetString(message_, field_, std::move(v));
  }
  void Enum(int v) {
    repeated_ ? reflection_->AddEnumValue(message_, field_, v)
              : reflection_->SetEnumValue(message_, field_, v);
  }

 private:
  Message* message_;
  const FieldDescriptor* field_;
  const Reflection* reflection_;
  bool repeated_;
};

// Converts `text` to the type of scalar (or enum) `field` and stores it.
// False if the text does not fit the type.
bool StoreText(Message* message, const FieldDescriptor* field,
               std::string_view text) {
  Store store(message, field);
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if (!ParseInteger(text, &v)) return false;
      store.Int32(v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v;
      if (!ParseInteger(text, &v)) return false;
      store.Int64(v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v;
      if (!ParseInteger(text, &v)) return false;
      store.UInt32(v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v;
      if (!ParseInteger(text, &v)) return false;
      store.UInt64(v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double v;
      if (!ParseDouble(text, &v)) return false;
      store.Double(v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double v;
      if (!ParseDouble(text, &v) || !FitsFloat(v)) return false;
      store.Float(static_cast<float>(v));
      return true;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool v;
      if (!ParseBool(text, &v)) return false;
      store.Bool(v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      if (field->type() == FieldDescriptor::TYPE_BYTES) {
        std::string bytes;
        if (!DecodeBase64(text, &bytes)) return false;
        store.String(std::move(bytes));
        return true;
      }
      if (!IsValidUtf8(text)) return false;
      store.String(std::string(text));
      return true;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const EnumValueDescriptor* value =
          field->enum_type()->FindValueByName(std::string(text));
      if (value != nullptr) {
        store.Enum(value->number());
        return true;
      }
      int32_t number;
      if (!ParseInteger(text, &number)) return false;
      store.Enum(number);
      return true;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return false;
  }
  return false;
}

// Fills a Timestamp, Duration, FieldMask or wrapper from its text form.
bool StoreWellKnownText(Message* message, std::string_view text) {
  const Descriptor* type = message->GetDescriptor();
  const Reflection* reflection = message->GetReflection();
  switch (type->well_known_type()) {
    case Descriptor::WELLKNOWNTYPE_TIMESTAMP:
    case Descriptor::WELLKNOWNTYPE_DURATION: {
      int64_t seconds;
      int32_t nanos;
      bool ok = type->well_known_type() == Descriptor::WELLKNOWNTYPE_TIMESTAMP
                    ? ParseTimestamp(text, &seconds, &nanos)
                    : ParseDuration(text, &seconds, &nanos);
      if (!ok) return false;
      reflection->SetInt64(message, type->FindFieldByNumber(1), seconds);
      reflection->SetInt32(message, type->FindFieldByNumber(2), nanos);
      return true;
    }
    case Descriptor::WELLKNOWNTYPE_FIELDMASK: {
      const FieldDescriptor* paths = type->FindFieldByNumber(1);
      reflection->ClearField(message, paths);
      size_t start = 0;
      while (start <= text.size() && !text.empty()) {
        size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        std::string_view path = text.substr(start, comma - start);
        if (path.empty() || !IsValidUtf8(path)) return false;
        reflection->AddString(message, paths, CamelToSnake(path));
        start = comma + 1;
      }
      return true;
    }
    default:
      if (IsWrapper(type->well_known_type())) {
        return StoreText(message, type->FindFieldByNumber(1), text);
      }
      return false;
  }
}

// ---------------------------------------------------------------------
// JSON -> message.

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
          const EnumValueDescriptor* value =
              field->enum_type()->FindValueByName(
                  j.get_ref<const std::string&>());
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

// ---------------------------------------------------------------------
// Message -> JSON.

void AppendDouble(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("\"NaN\"");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else {
    char buffer[32];
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    out->append(buffer, result.ptr);
  }
}

void AppendFloat(float value, std::string* out) {
  if (!std::isfinite(value)) {
    AppendDouble(value, out);
    return;
  }
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

class JsonWriter {
 public:
  JsonWriter(const DescriptorPool* pool, DynamicMessageFactory* factory,
             std::string* out)
      : pool_(pool), factory_(factory), out_(out) {}

  absl::Status WriteMessage(const Message& message) {
    const Descriptor* type = message.GetDescriptor();
    const Reflection* reflection = message.GetReflection();
    switch (type->well_known_type()) {
      case Descriptor::WELLKNOWNTYPE_TIMESTAMP:
      case Descriptor::WELLKNOWNTYPE_DURATION: {
        int64_t seconds =
            reflection->GetInt64(message, type->FindFieldByNumber(1));
        int32_t nanos =
            reflection->GetInt32(message, type->FindFieldByNumber(2));
        bool timestamp =
            type->well_known_type() == Descriptor::WELLKNOWNTYPE_TIMESTAMP;
        if (!(timestamp ? FormatTimestamp(seconds, nanos, out_)
                        : FormatDuration(seconds, nanos, out_))) {
          return Fail(absl::StrCat(type->full_name(), " out of range"));
        }
        return absl::OkStatus();
      }
      case Descriptor::WELLKNOWNTYPE_FIELDMASK: {
        const FieldDescriptor* paths = type->FindFieldByNumber(1);
        std::string joined;
        for (int i = 0; i < reflection->FieldSize(message, paths); ++i) {
          if (i > 0) joined.push_back(',');
          joined.append(
              SnakeToCamel(reflection->GetRepeatedString(message, paths, i)));
        }
        AppendJsonString(out_, joined);
        return absl::OkStatus();
      }
      case Descriptor::WELLKNOWNTYPE_STRUCT:
        return WriteStruct(message);
      case Descriptor::WELLKNOWNTYPE_VALUE:
        return WriteValue(message);
      case Descriptor::WELLKNOWNTYPE_LISTVALUE:
        return WriteList(message);
      case Descriptor::WELLKNOWNTYPE_ANY:
        return WriteAny(message);
      default:
        break;
    }
    if (IsWrapper(type->well_known_type())) {
      return WriteSingular(message, type->FindFieldByNumber(1), -1);
    }
    out_->push_back('{');
    bool first = true;
    absl::Status status = WriteFields(message, &first);
    if (!status.ok()) return status;
    out_->push_back('}');
    return absl::OkStatus();
  }

  // The value of one field: an array, an object for a map, or a value.
  absl::Status WriteFieldValue(const Message& message,
                               const FieldDescriptor* field) {
    const Reflection* reflection = message.GetReflection();
    if (field->is_map()) return WriteMap(message, field);
    if (field->is_repeated()) {
      out_->push_back('[');
      int size = reflection->FieldSize(message, field);
      for (int i = 0; i < size; ++i) {
        if (i > 0) out_->push_back(',');
        absl::Status status = WriteSingular(message, field, i);
        if (!status.ok()) return status;
      }
      out_->push_back(']');
      return absl::OkStatus();
    }
    return WriteSingular(message, field, -1);
  }

 private:
  static absl::Status Fail(std::string_view what) {
    return Error(
        ErrorCode::INTERNAL_ERROR,
        absl::StrCat("cannot write the response as JSON: ", std::string(what)));
  }

  absl::Status WriteFields(const Message& message, bool* first) {
    const Descriptor* type = message.GetDescriptor();
    const Reflection* reflection = message.GetReflection();
    for (int i = 0; i < type->field_count(); ++i) {
      const FieldDescriptor* field = type->field(i);
      if (!field->is_repeated() && field->has_presence() &&
          !reflection->HasField(message, field)) {
        continue;
      }
      if (!*first) out_->push_back(',');
      *first = false;
      AppendJsonString(out_, field->json_name());
      out_->push_back(':');
      absl::Status status = WriteFieldValue(message, field);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  absl::Status WriteSingular(const Message& message,
                             const FieldDescriptor* field, int index) {
    const Reflection* reflection = message.GetReflection();
    bool repeated = index >= 0;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        absl::StrAppend(
            out_, repeated ? reflection->GetRepeatedInt32(message, field, index)
                           : reflection->GetInt32(message, field));
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        absl::StrAppend(
            out_, "\"",
            repeated ? reflection->GetRepeatedInt64(message, field, index)
                     : reflection->GetInt64(message, field),
            "\"");
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        absl::StrAppend(out_, repeated ? reflection->GetRepeatedUInt32(
                                             message, field, index)
                                       : reflection->GetUInt32(message, field));
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        absl::StrAppend(
            out_, "\"",
            repeated ? reflection->GetRepeatedUInt64(message, field, index)
                     : reflection->GetUInt64(message, field),
            "\"");
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        AppendDouble(repeated
                         ? reflection->GetRepeatedDouble(message, field, index)
                         : reflection->GetDouble(message, field),
                     out_);
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        AppendFloat(repeated
                        ? reflection->GetRepeatedFloat(message, field, index)
                        : reflection->GetFloat(message, field),
                    out_);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        out_->append((repeated
                          ? reflection->GetRepeatedBool(message, field, index)
                          : reflection->GetBool(message, field))
                         ? "true"
                         : "false");
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        if (IsNullValueEnum(field)) {
          out_->append("null");
          break;
        }
        int number =
            repeated ? reflection->GetRepeatedEnumValue(message, field, index)
                     : reflection->GetEnumValue(message, field);
        const EnumValueDescriptor* value =
            field->enum_type()->FindValueByNumber(number);
        if (value != nullptr) {
          AppendJsonString(out_, value->name());
        } else {
          absl::StrAppend(out_, number);
        }
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        const std::string& text =
            repeated ? reflection->GetRepeatedStringReference(message, field,
                                                              index, &scratch)
                     : reflection->GetStringReference(message, field, &scratch);
        if (field->type() == FieldDescriptor::TYPE_BYTES) {
          std::string encoded;
          absl::Base64Escape(AbslView(text), &encoded);
          out_->push_back('"');
          out_->append(encoded);
          out_->push_back('"');
        } else {
          AppendJsonString(out_, text);
        }
        break;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        return WriteMessage(
            repeated ? reflection->GetRepeatedMessage(message, field, index)
                     : reflection->GetMessage(message, field));
    }
    return absl::OkStatus();
  }

  // Map entries sorted by key, so output does not depend on hash order.
  absl::Status WriteMap(const Message& message, const FieldDescriptor* field) {
    const Reflection* reflection = message.GetReflection();
    const FieldDescriptor* key_field = field->message_type()->map_key();
    const FieldDescriptor* value_field = field->message_type()->map_value();
    struct Entry {
      std::string key;
      int64_t signed_key = 0;
      uint64_t unsigned_key = 0;
      const Message* entry = nullptr;
    };
    int size = reflection->FieldSize(message, field);
    std::vector<Entry> entries;
    entries.reserve(size);
    for (int i = 0; i < size; ++i) {
      const Message& entry = reflection->GetRepeatedMessage(message, field, i);
      const Reflection* entry_reflection = entry.GetReflection();
      Entry e;
      e.entry = &entry;
      switch (key_field->cpp_type()) {
        case FieldDescriptor::CPPTYPE_STRING:
          e.key = entry_reflection->GetString(entry, key_field);
          break;
        case FieldDescriptor::CPPTYPE_BOOL:
          e.unsigned_key = entry_reflection->GetBool(entry, key_field);
          e.key = e.unsigned_key ? "true" : "false";
          break;
        case FieldDescriptor::CPPTYPE_INT32:
          e.signed_key = entry_reflection->GetInt32(entry, key_field);
          e.key = absl::StrCat(e.signed_key);
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          e.signed_key = entry_reflection->GetInt64(entry, key_field);
          e.key = absl::StrCat(e.signed_key);
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          e.unsigned_key = entry_reflection->GetUInt32(entry, key_field);
          e.key = absl::StrCat(e.unsigned_key);
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          e.unsigned_key = entry_reflection->GetUInt64(entry, key_field);
          e.key = absl::StrCat(e.unsigned_key);
          break;
        default:
          return Fail("unsupported map key type");
      }
      entries.push_back(std::move(e));
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) {
                       if (a.signed_key != b.signed_key) {
                         return a.signed_key < b.signed_key;
                       }
                       if (a.unsigned_key != b.unsigned_key) {
                         return a.unsigned_key < b.unsigned_key;
                       }
                       return a.key < b.key;
                     });
    // Parsing keeps the last of repeated keys; so does the output.
    out_->push_back('{');
    bool first = true;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i + 1 < entries.size() && entries[i + 1].key == entries[i].key) {
        continue;
      }
      if (!first) out_->push_back(',');
      first = false;
      AppendJsonString(out_, entries[i].key);
      out_->push_back(':');
      absl::Status status = WriteSingular(*entries[i].entry, value_field, -1);
      if (!status.ok()) return status;
    }
    out_->push_back('}');
    return absl::OkStatus();
  }

  absl::Status WriteValue(const Message& message) {
    const Descriptor* type = message.GetDescriptor();
    const Reflection* reflection = message.GetReflection();
    const FieldDescriptor* kind =
        type->oneof_decl_count() > 0
            ? reflection->GetOneofFieldDescriptor(message, type->oneof_decl(0))
            : nullptr;
    if (kind == nullptr) {
      out_->append("null");
      return absl::OkStatus();
    }
    switch (kind->number()) {
      case 1:  // null_value
        out_->append("null");
        return absl::OkStatus();
      case 2: {  // number_value
        double value = reflection->GetDouble(message, kind);
        if (!std::isfinite(value)) {
          return Fail("a google.protobuf.Value holds NaN or Infinity");
        }
        AppendDouble(value, out_);
        return absl::OkStatus();
      }
      case 3: {  // string_value
        std::string scratch;
        AppendJsonString(
            out_, reflection->GetStringReference(message, kind, &scratch));
        return absl::OkStatus();
      }
      case 4:  // bool_value
        out_->append(reflection->GetBool(message, kind) ? "true" : "false");
        return absl::OkStatus();
      case 5:  // struct_value
        return WriteStruct(reflection->GetMessage(message, kind));
      case 6:  // list_value
        return WriteList(reflection->GetMessage(message, kind));
      default:
        return Fail("unknown kind of google.protobuf.Value");
    }
  }

  absl::Status WriteStruct(const Message& message) {
    return WriteMap(message, message.GetDescriptor()->FindFieldByNumber(1));
  }

  absl::Status WriteList(const Message& message) {
    return WriteFieldValue(message,
                           message.GetDescriptor()->FindFieldByNumber(1));
  }

  absl::Status WriteAny(const Message& message) {
    const Descriptor* any = message.GetDescriptor();
    const Reflection* reflection = message.GetReflection();
    std::string url = reflection->GetString(message, any->FindFieldByNumber(1));
    if (url.empty()) {
      out_->append("{}");
      return absl::OkStatus();
    }
    size_t slash = url.rfind('/');
    const Descriptor* type = pool_->FindMessageTypeByName(
        slash == std::string::npos ? url : url.substr(slash + 1));
    if (type == nullptr) return Fail(absl::StrCat("unknown Any type ", url));
    std::unique_ptr<Message> inner(factory_->GetPrototype(type)->New());
    if (!inner->ParseFromString(
            reflection->GetString(message, any->FindFieldByNumber(2)))) {
      return Fail(absl::StrCat("malformed Any of type ", url));
    }
    out_->append("{\"@type\":");
    AppendJsonString(out_, url);
    if (type->well_known_type() != Descriptor::WELLKNOWNTYPE_UNSPECIFIED) {
      out_->append(",\"value\":");
      absl::Status status = WriteMessage(*inner);
      if (!status.ok()) return status;
    } else {
      bool first = false;
      absl::Status status = WriteFields(*inner, &first);
      if (!status.ok()) return status;
    }
    out_->push_back('}');
    return absl::OkStatus();
  }

  const DescriptorPool* pool_;
  DynamicMessageFactory* factory_;
  std::string* out_;
};

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

bool IsBlank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

absl::Status InvalidField(std::string_view field, std::string_view what) {
  std::string name(field);
  return Error(ErrorCode::INVALID_REQUEST,
               absl::StrCat("invalid value for field \"", name,
                            "\": ", std::string(what)),
               {{"field", name}});
}

// Parses `body` as JSON into `message` (field == nullptr) or into its
// `field`.
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

}  // namespace

Transcoder::Transcoder(const DescriptorPool* pool)
    : pool_(pool), factory_(pool) {
  http_body_ = pool_->FindMessageTypeByName("google.api.HttpBody");
  if (http_body_ != nullptr) {
    http_body_content_type_ = http_body_->FindFieldByName("content_type");
    http_body_data_ = http_body_->FindFieldByName("data");
    if (http_body_content_type_ == nullptr || http_body_data_ == nullptr) {
      http_body_ = nullptr;
    }
  }
}

const Message* Transcoder::Prototype(const Descriptor* type) const {
  return factory_.GetPrototype(type);
}

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

absl::StatusOr<HttpBodyOut> Transcoder::RenderResponse(
    const Route& route, std::string_view serialized_response) const {
  if (route.method == nullptr) {
    return Error(ErrorCode::INTERNAL_ERROR, "route without a method");
  }
  const Descriptor* output = route.method->output_type();
  auto malformed = [&] {
    return Error(
        ErrorCode::INTERNAL_ERROR,
        absl::StrCat("the response is not a valid ", output->full_name()));
  };
  if (route.response_body.empty() && output == http_body_ &&
      http_body_ != nullptr) {
    google::api::HttpBody http_body;
    if (!http_body.ParseFromArray(
            serialized_response.data(),
            static_cast<int>(serialized_response.size()))) {
      return malformed();
    }
    HttpBodyOut out;
    out.content_type = http_body.content_type().empty()
                           ? "application/json"
                           : std::move(*http_body.mutable_content_type());
    out.body = std::move(*http_body.mutable_data());
    return out;
  }

  char initial_block[kArenaInitialBlock];
  google::protobuf::ArenaOptions arena_options;
  arena_options.initial_block = initial_block;
  arena_options.initial_block_size = sizeof(initial_block);
  Arena arena(arena_options);
  Message* response = Prototype(output)->New(&arena);
  if (!response->ParseFromArray(serialized_response.data(),
                                static_cast<int>(serialized_response.size()))) {
    return malformed();
  }
  HttpBodyOut out;
  out.content_type = "application/json";
  out.body.reserve(serialized_response.size() * 2 + 16);
  JsonWriter writer(pool_, &factory_, &out.body);
  if (route.response_body.empty()) {
    absl::Status status = writer.WriteMessage(*response);
    if (!status.ok()) return status;
    return out;
  }
  const FieldDescriptor* field = output->FindFieldByName(route.response_body);
  if (field == nullptr) {
    return Error(ErrorCode::INTERNAL_ERROR,
                 absl::StrCat("route response_body \"", route.response_body,
                              "\" names no field of ", output->full_name()));
  }
  if (http_body_ != nullptr && !field->is_repeated() &&
      field->message_type() == http_body_) {
    const Message& http_body =
        response->GetReflection()->GetMessage(*response, field);
    const Reflection* reflection = http_body.GetReflection();
    out.content_type =
        reflection->GetString(http_body, http_body_content_type_);
    if (out.content_type.empty()) out.content_type = "application/json";
    out.body = reflection->GetString(http_body, http_body_data_);
    return out;
  }
  absl::Status status = writer.WriteFieldValue(*response, field);
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<HttpBodyOut> Transcoder::RenderStreamMessage(
    const Route& route, std::string_view serialized_message) const {
  return RenderResponse(route, serialized_message);
}

absl::StatusOr<std::string> Transcoder::MessageToJson(
    const Message& message) const {
  std::string out;
  JsonWriter writer(pool_, &factory_, &out);
  absl::Status status = writer.WriteMessage(message);
  if (!status.ok()) return status;
  return out;
}

}  // namespace inspector::gateway
