#include "gateway/json_writer.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gateway/value_forms.h"
#include "common/errors.h"
#include "common/json_text.h"
#include "common/strings.h"

namespace inspector::gateway::transcoding {
namespace {

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

}  // namespace

absl::Status WriteMessageJson(const DescriptorPool* pool,
                              DynamicMessageFactory* factory,
                              const Message& message, std::string* out) {
  JsonWriter writer(pool, factory, out);
  return writer.WriteMessage(message);
}

absl::Status WriteFieldJson(const DescriptorPool* pool,
                            DynamicMessageFactory* factory,
                            const Message& message,
                            const FieldDescriptor* field, std::string* out) {
  JsonWriter writer(pool, factory, out);
  return writer.WriteFieldValue(message, field);
}

}  // namespace inspector::gateway::transcoding
