// ApplyUpdate() (validation.h): UpdateServer's partial-update rules, by
// reflection over v1::ServerConfig: mask paths resolved to fields (JSON or
// proto names, sub-fields, "extra.<key>"), then copied or cleared. Pure;
// thread-safe.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/struct.pb.h"
#include "server/config/validation.h"

namespace inspector::config {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

absl::Status MaskError(std::string_view path, std::string_view message) {
  return Error(v1::INVALID_REQUEST,
               absl::StrCat("updateMask: ", AbslView(message)),
               {{"field", "updateMask"}, {"path", std::string(path)}});
}

// Copies field `f` from `src` to `dst`, clearing it in `dst` when `src`
// does not have it.
void CopyField(const Message& src, Message* dst, const FieldDescriptor* f) {
  const Reflection* sr = src.GetReflection();
  const Reflection* dr = dst->GetReflection();
  dr->ClearField(dst, f);
  if (f->is_repeated()) {
    int n = sr->FieldSize(src, f);
    for (int i = 0; i < n; ++i) {
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_STRING:
          dr->AddString(dst, f, sr->GetRepeatedString(src, f, i));
          break;
        case FieldDescriptor::CPPTYPE_MESSAGE:
          dr->AddMessage(dst, f)->CopyFrom(sr->GetRepeatedMessage(src, f, i));
          break;
        case FieldDescriptor::CPPTYPE_INT32:
          dr->AddInt32(dst, f, sr->GetRepeatedInt32(src, f, i));
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          dr->AddInt64(dst, f, sr->GetRepeatedInt64(src, f, i));
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          dr->AddUInt32(dst, f, sr->GetRepeatedUInt32(src, f, i));
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          dr->AddUInt64(dst, f, sr->GetRepeatedUInt64(src, f, i));
          break;
        case FieldDescriptor::CPPTYPE_DOUBLE:
          dr->AddDouble(dst, f, sr->GetRepeatedDouble(src, f, i));
          break;
        case FieldDescriptor::CPPTYPE_FLOAT:
          dr->AddFloat(dst, f, sr->GetRepeatedFloat(src, f, i));
          break;
        case FieldDescriptor::CPPTYPE_BOOL:
          dr->AddBool(dst, f, sr->GetRepeatedBool(src, f, i));
          break;
        case FieldDescriptor::CPPTYPE_ENUM:
          dr->AddEnumValue(dst, f, sr->GetRepeatedEnumValue(src, f, i));
          break;
      }
    }
    return;
  }
  if (!sr->HasField(src, f)) return;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      dr->SetString(dst, f, sr->GetString(src, f));
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      dr->MutableMessage(dst, f)->CopyFrom(sr->GetMessage(src, f));
      break;
    case FieldDescriptor::CPPTYPE_INT32:
      dr->SetInt32(dst, f, sr->GetInt32(src, f));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      dr->SetInt64(dst, f, sr->GetInt64(src, f));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      dr->SetUInt32(dst, f, sr->GetUInt32(src, f));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      dr->SetUInt64(dst, f, sr->GetUInt64(src, f));
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      dr->SetDouble(dst, f, sr->GetDouble(src, f));
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      dr->SetFloat(dst, f, sr->GetFloat(src, f));
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      dr->SetBool(dst, f, sr->GetBool(src, f));
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      dr->SetEnumValue(dst, f, sr->GetEnumValue(src, f));
      break;
  }
}

// The field of `d` whose proto name or JSON name is `name`.
const FieldDescriptor* FindField(const Descriptor* d, std::string_view name) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->name() == name || f->json_name() == name) return f;
  }
  return nullptr;
}

bool IsReadOnly(const FieldDescriptor* f) {
  return f->number() == v1::ServerConfig::kIdFieldNumber ||
         f->number() == v1::ServerConfig::kCreatedAtFieldNumber ||
         f->number() == v1::ServerConfig::kUpdatedAtFieldNumber;
}

std::string KnownPaths() {
  const Descriptor* d = v1::ServerConfig::descriptor();
  std::vector<std::string> names;
  for (int i = 0; i < d->field_count(); ++i) {
    if (!IsReadOnly(d->field(i))) names.push_back(d->field(i)->json_name());
  }
  return absl::StrJoin(names, ", ");
}

// One resolved mask path.
struct MaskOp {
  const FieldDescriptor* field = nullptr;     // in ServerConfig
  const FieldDescriptor* subfield = nullptr;  // in Timeouts / OAuthConfig
  std::string extra_key;                      // for "extra.<key>"
  bool is_extra_key = false;
};

absl::StatusOr<MaskOp> ResolvePath(const std::string& path) {
  if (path.empty()) return MaskError(path, "contains an empty path");
  size_t dot = path.find('.');
  std::string head = path.substr(0, dot);
  MaskOp op;
  op.field = FindField(v1::ServerConfig::descriptor(), head);
  if (op.field == nullptr) {
    return MaskError(path,
                     absl::StrCat("unknown field \"", path,
                                  "\"; updatable fields are ", KnownPaths()));
  }
  if (IsReadOnly(op.field)) {
    return MaskError(path, absl::StrCat("\"", path,
                                        "\" cannot be updated; id, createdAt "
                                        "and updatedAt are set by the "
                                        "daemon"));
  }
  if (dot == std::string::npos) return op;
  std::string rest = path.substr(dot + 1);
  if (op.field->number() == v1::ServerConfig::kExtraFieldNumber) {
    if (rest.empty()) return MaskError(path, "\"extra.\" names no key");
    op.is_extra_key = true;
    op.extra_key = rest;
    return op;
  }
  if (op.field->number() != v1::ServerConfig::kTimeoutsFieldNumber &&
      op.field->number() != v1::ServerConfig::kOauthFieldNumber &&
      op.field->number() != v1::ServerConfig::kClientCapabilitiesFieldNumber) {
    return MaskError(path, absl::StrCat("unknown field \"", path, "\"; only ",
                                        "timeouts, oauth, clientCapabilities "
                                        "and extra have sub-fields"));
  }
  op.subfield = FindField(op.field->message_type(), rest);
  if (op.subfield == nullptr) {
    std::vector<std::string> names;
    const Descriptor* d = op.field->message_type();
    for (int i = 0; i < d->field_count(); ++i) {
      names.push_back(d->field(i)->json_name());
    }
    return MaskError(path, absl::StrCat("unknown field \"", path, "\"; ",
                                        op.field->json_name(), " has ",
                                        absl::StrJoin(names, ", ")));
  }
  return op;
}

void ApplyMaskOp(const v1::ServerConfig& patch, const MaskOp& op,
                 v1::ServerConfig* target) {
  if (op.is_extra_key) {
    auto* fields = target->mutable_extra()->mutable_fields();
    auto it = patch.extra().fields().find(op.extra_key);
    if (it == patch.extra().fields().end()) {
      fields->erase(op.extra_key);
    } else {
      (*fields)[op.extra_key] = it->second;
    }
    if (fields->empty()) target->clear_extra();
    return;
  }
  if (op.subfield == nullptr) {
    CopyField(patch, target, op.field);
    return;
  }
  const Reflection* r = target->GetReflection();
  const Message& src = patch.GetReflection()->GetMessage(patch, op.field);
  Message* dst = r->MutableMessage(target, op.field);
  CopyField(src, dst, op.subfield);
  if (dst->ByteSizeLong() == 0) r->ClearField(target, op.field);
}

}  // namespace

absl::Status ApplyUpdate(const v1::ServerConfig& patch,
                         const google::protobuf::FieldMask& mask,
                         v1::ServerConfig* target) {
  if (mask.paths_size() > 0) {
    // Resolve everything first so that an error leaves `target` unchanged.
    std::vector<MaskOp> ops;
    for (const std::string& path : mask.paths()) {
      auto op = ResolvePath(path);
      if (!op.ok()) return op.status();
      ops.push_back(*std::move(op));
    }
    for (const MaskOp& op : ops) ApplyMaskOp(patch, op, target);
    return absl::OkStatus();
  }

  // No mask: take whatever the patch carries.
  bool family_change = patch.has_transport() && !patch.transport().empty() &&
                       target->has_transport() &&
                       (patch.transport() == kTransportStdio) !=
                           (target->transport() == kTransportStdio);
  if (family_change) {
    if (patch.transport() == kTransportStdio) {
      target->clear_url();
      target->clear_headers();
      target->clear_converted_from_stdio();
    } else {
      target->clear_command();
      target->clear_args();
      target->clear_env();
      target->clear_cwd();
    }
    target->clear_connection_mode();
  }
  const Descriptor* d = v1::ServerConfig::descriptor();
  const Reflection* r = patch.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (IsReadOnly(f)) continue;
    bool present =
        f->is_repeated() ? r->FieldSize(patch, f) > 0 : r->HasField(patch, f);
    if (present) CopyField(patch, target, f);
  }
  return absl::OkStatus();
}

}  // namespace inspector::config
