// Text forms of protobuf values for the gateway's transcoder, following the
// proto3 JSON mapping: scalars from query and path text ("42", "true",
// base64), the well-known types with a one-string form (Timestamp in RFC
// 3339, Duration as "1.5s", FieldMask as "a,b.c", the wrappers), numbers
// written as JSON, and the descriptor questions the reader, the writer and
// request binding share (is this a wrapper, which field does a JSON name
// mean). Pure functions over descriptors and messages; thread-safe for
// distinct messages.
#ifndef INSPECTOR_GATEWAY_VALUE_FORMS_H_
#define INSPECTOR_GATEWAY_VALUE_FORMS_H_

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "common/strings.h"

namespace inspector::gateway::transcoding {

// Short names for the protobuf reflection types, within this internal
// namespace only.
using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::DynamicMessageFactory;
using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Message nesting that protobuf's parser accepts (its default recursion
// limit): a request nested deeper would be refused by the daemon, so it is
// refused here with a clear message. Depths count message levels, so a
// JSON object inside a google.protobuf.Struct costs three.
inline constexpr int kMaxDepth = 100;
// The range of Timestamp is kMinTimestampSeconds..kMaxTimestampSeconds
// (common/rfc3339.h).
// About 10,000 years, the range of Duration.
inline constexpr int64_t kMaxDurationSeconds = 315576000000;
// Requests and responses are usually small: the first 8 KiB of a call's
// messages come from the stack instead of the heap.
inline constexpr size_t kArenaInitialBlock = 8192;

// google.protobuf.DoubleValue, Int64Value, StringValue, ...
bool IsWrapper(google::protobuf::Descriptor::WellKnownType type);

// Well-known types that have a one-string form (query parameters).
bool HasTextForm(const google::protobuf::Descriptor* type);

// A field of enum google.protobuf.NullValue.
bool IsNullValueEnum(const google::protobuf::FieldDescriptor* field);

// The value of enum `type` that `text` names: its full name
// ("CONFIG_FORMAT_MCP_SERVERS") or its short name, the full name without the
// prefix that style gives every value of the enum ("CONFIG_FORMAT_" for
// ConfigFormat), matched ignoring case and with '-' standing for '_'
// ("mcp-servers", "vscode"). nullptr when it names none.
const google::protobuf::EnumValueDescriptor* FindEnumValue(
    const google::protobuf::EnumDescriptor* type, std::string_view text);

// Finds a field by its proto name ("server_id") or JSON name ("serverId").
const google::protobuf::FieldDescriptor* FindField(
    const google::protobuf::Descriptor* type, const std::string& name);

// RFC 3339 (the rule is in common/rfc3339.h), within Timestamp's range.
bool ParseTimestamp(std::string_view text, int64_t* seconds, int32_t* nanos);
// Appends the Timestamp as a quoted JSON string; false if out of range.
bool FormatTimestamp(int64_t seconds, int32_t nanos, std::string* out);
// "1.5s", "-0.001s", "3s", within Duration's range.
bool ParseDuration(std::string_view text, int64_t* seconds, int32_t* nanos);
// Appends the Duration as a quoted JSON string; false if out of range.
bool FormatDuration(int64_t seconds, int32_t nanos, std::string* out);

// FieldMask paths: "connection_mode" <-> "connectionMode".
std::string SnakeToCamel(std::string_view path);
std::string CamelToSnake(std::string_view path);

// A number, or "NaN", "Infinity", "-Infinity"; no surrounding spaces.
bool ParseDouble(std::string_view text, double* value);
// True if `value` is not finite or within the range of a float.
bool FitsFloat(double value);
// "true"/"1" or "false"/"0".
bool ParseBool(std::string_view text, bool* value);
// Standard or URL-safe base64.
bool DecodeBase64(std::string_view text, std::string* out);

// Integer text ("42", "-7"); no spaces, no '+'.
template <typename T>
bool ParseInteger(std::string_view text, T* value) {
  if (text.empty() || text.front() == '+' || text.front() == ' ' ||
      text.back() == ' ') {
    return false;
  }
  return absl::SimpleAtoi(AbslView(text), value);
}

// Stores one scalar value with Set* (singular) or Add* (repeated).
class Store {
 public:
  Store(google::protobuf::Message* message,
        const google::protobuf::FieldDescriptor* field)
      : message_(message),
        field_(field),
        reflection_(message->GetReflection()),
        repeated_(field->is_repeated()) {}

  void Int32(int32_t v) { Put(&R::AddInt32, &R::SetInt32, v); }
  void Int64(int64_t v) { Put(&R::AddInt64, &R::SetInt64, v); }
  void UInt32(uint32_t v) { Put(&R::AddUInt32, &R::SetUInt32, v); }
  void UInt64(uint64_t v) { Put(&R::AddUInt64, &R::SetUInt64, v); }
  void Double(double v) { Put(&R::AddDouble, &R::SetDouble, v); }
  void Float(float v) { Put(&R::AddFloat, &R::SetFloat, v); }
  void Bool(bool v) { Put(&R::AddBool, &R::SetBool, v); }
  void String(std::string v) {
    Put(&R::AddString, &R::SetString, std::move(v));
  }
  void Enum(int v) { Put(&R::AddEnumValue, &R::SetEnumValue, v); }

 private:
  using R = google::protobuf::Reflection;
  template <typename T>
  using Setter = void (R::*)(google::protobuf::Message*,
                             const google::protobuf::FieldDescriptor*, T) const;

  // Add for a repeated field, Set for a singular one.
  template <typename T>
  void Put(Setter<T> add, Setter<T> set, T v) {
    (reflection_->*(repeated_ ? add : set))(message_, field_, std::move(v));
  }

  google::protobuf::Message* message_;
  const google::protobuf::FieldDescriptor* field_;
  const google::protobuf::Reflection* reflection_;
  bool repeated_;
};

// What a field of this type expects, for error messages.
std::string Expectation(const google::protobuf::FieldDescriptor* field);

// Converts `text` to the type of scalar (or enum) `field` and stores it
// (Set for singular fields, Add for repeated ones). False if the text does
// not fit the type.
bool StoreText(google::protobuf::Message* message,
               const google::protobuf::FieldDescriptor* field,
               std::string_view text);

// Fills a Timestamp, Duration, FieldMask or wrapper from its text form.
bool StoreWellKnownText(google::protobuf::Message* message,
                        std::string_view text);

// Appends a double or float as JSON (non-finite values as quoted strings,
// the shortest text that reads back the same otherwise).
void AppendDouble(double value, std::string* out);
void AppendFloat(float value, std::string* out);

}  // namespace inspector::gateway::transcoding

#endif  // INSPECTOR_GATEWAY_VALUE_FORMS_H_
