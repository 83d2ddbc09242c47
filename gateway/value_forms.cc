#include "gateway/value_forms.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/rfc3339.h"
#include "common/utf8.h"

namespace inspector::gateway::transcoding {
namespace {


}  // namespace

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

const EnumValueDescriptor* FindEnumValue(const EnumDescriptor* type,
                                         std::string_view text) {
  if (const EnumValueDescriptor* exact =
          type->FindValueByName(std::string(text))) {
    return exact;
  }
  // ConfigFormat -> CONFIG_FORMAT_, then the short name in upper case.
  std::string name;
  for (char c : type->name()) {
    if (absl::ascii_isupper(static_cast<unsigned char>(c)) && !name.empty()) {
      name += '_';
    }
    name += absl::ascii_toupper(static_cast<unsigned char>(c));
  }
  name += '_';
  if (text.empty()) return nullptr;
  for (char c : text) {
    name += c == '-' ? '_' : absl::ascii_toupper(static_cast<unsigned char>(c));
  }
  return type->FindValueByName(name);
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
          FindEnumValue(field->enum_type(), text);
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

}  // namespace inspector::gateway::transcoding
