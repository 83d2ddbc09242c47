#include "server/config/export_secrets.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"

namespace inspector::config {
namespace {

using google::protobuf::FieldDescriptor;

// The secret string fields of OAuthConfig.
std::vector<const FieldDescriptor*> SecretFields() {
  std::vector<const FieldDescriptor*> out;
  const auto* descriptor = v1::OAuthConfig::descriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (field->is_repeated() ||
        field->cpp_type() != FieldDescriptor::CPPTYPE_STRING) {
      continue;
    }
    if (IsSecretOAuthKey(field->json_name())) out.push_back(field);
  }
  return out;
}

}  // namespace

bool IsSecretOAuthKey(std::string_view name) {
  auto ends_with = [name](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           name.substr(name.size() - suffix.size()) == suffix;
  };
  return name == "clientSecret" || name == "privateKey" ||
         ends_with("Secret") || ends_with("Token") || ends_with("Key") ||
         ends_with("Password");
}

std::vector<std::string> OmitSecretsForExport(v1::ServerConfig* server) {
  std::vector<std::string> omitted;
  if (!server->has_oauth()) return omitted;
  v1::OAuthConfig* oauth = server->mutable_oauth();
  const auto* reflection = oauth->GetReflection();
  for (const FieldDescriptor* field : SecretFields()) {
    if (reflection->GetString(*oauth, field).empty()) continue;
    reflection->ClearField(oauth, field);
    omitted.push_back(
        absl::StrCat(server->name(), ".oauth.", field->json_name()));
  }
  return omitted;
}

void KeepOmittedSecrets(const v1::ServerConfig& existing,
                        v1::ServerConfig* imported) {
  if (!existing.has_oauth() || !imported->has_oauth() ||
      existing.oauth().client_id() != imported->oauth().client_id()) {
    return;
  }
  v1::OAuthConfig* oauth = imported->mutable_oauth();
  const auto* reflection = oauth->GetReflection();
  for (const FieldDescriptor* field : SecretFields()) {
    if (!reflection->GetString(*oauth, field).empty()) continue;
    std::string kept = reflection->GetString(existing.oauth(), field);
    if (!kept.empty()) reflection->SetString(oauth, field, std::move(kept));
  }
}

}  // namespace inspector::config
