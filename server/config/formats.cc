// Reading configuration files (ParseConfigFile in formats.h): format
// detection and the readers of each format's server entries. JSONC itself is
// common/jsonc.h, writing is format_writer.cc and the pieces both share are
// format_common.h.
#include "server/config/formats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/jsonc.h"
#include "common/rfc3339.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "common/transports.h"
#include "server/config/format_common.h"
#include "server/config/validation.h"

namespace inspector::config {
namespace {

using format_internal::ContextFor;
using format_internal::DefaultType;
using format_internal::Json;
using format_internal::ServerContext;
using format_internal::ServerError;
using format_internal::ToValue;
using format_internal::TransportForType;
using google::protobuf::Struct;
using google::protobuf::Value;

// ---- Reading JSON(C) -------------------------------------------------------

// The configuration file as a document (JSONC: comments and trailing commas
// allowed; common/jsonc.h).
absl::StatusOr<Json> ParseJson(std::string_view content) {
  if (content.size() > kMaxConfigFileBytes) {
    return Error(
        v1::TOO_LARGE,
        absl::StrCat("the file is ", content.size(), " bytes; the limit is ",
                     kMaxConfigFileBytes, " (16 MiB)"),
        {{"limit", absl::StrCat(kMaxConfigFileBytes)}});
  }
  if (IsBlankJsonc(content)) {
    return Error(v1::INVALID_REQUEST,
                 "the file is empty; expected a JSON object such as "
                 "{\"mcpServers\": {...}}");
  }
  JsoncOptions options;
  options.max_depth = kMaxConfigFileDepth;
  options.duplicate_key_error = [](std::string_view container,
                                   std::string_view key) -> absl::Status {
    if (container == "mcpServers" || container == "servers") {
      return Error(
          v1::INVALID_CONFIG,
          absl::StrCat("server \"", AbslView(key),
                       "\": name: appears more than once in \"",
                       AbslView(container), "\"; server names must be unique"),
          {{"field", "name"}, {"serverName", std::string(key)}});
    }
    return DuplicateJsoncKeyError(container, key);
  };
  return ParseJsonc(content, options);
}

// "a string", "an array", ...
std::string Described(const Json& j) {
  std::string name = j.type_name();
  bool vowel = !name.empty() && absl::StrContains("aeiou", name.substr(0, 1));
  return absl::StrCat(vowel ? "an " : "a ", name);
}

// ---- Reading servers -------------------------------------------------------

// An error about a server entry as a whole; `path` locates it in the file
// ("mcpServers.github", "servers[3]").
absl::Status EntryError(const ServerContext& ctx, std::string_view path,
                        std::string_view message) {
  ErrorDetails details = {{"field", std::string(path)}};
  if (!ctx.name.empty()) details.emplace_back("serverName", ctx.name);
  return Error(v1::INVALID_CONFIG,
               absl::StrCat(ctx.prefix, ": ", AbslView(message)),
               std::move(details));
}

// Re-issues a NormalizeAndValidate() error with the server named.
absl::Status InServer(const ServerContext& ctx, const absl::Status& status) {
  ErrorDetails details;
  for (auto& [key, value] : GetErrorDetails(status)) {
    details.emplace_back(key, value);
  }
  if (!ctx.name.empty()) details.emplace_back("serverName", ctx.name);
  std::string reason = ErrorReason(status);
  v1::ErrorCode code = v1::INVALID_CONFIG;
  v1::ErrorCode_Parse(reason, &code);
  return Error(code, absl::StrCat(ctx.prefix, ": ", status.message()),
               std::move(details));
}

absl::Status ReadString(const ServerContext& ctx, const Json& j,
                        std::string_view field, std::string* out) {
  if (!j.is_string()) {
    return ServerError(
        ctx, field, absl::StrCat("must be a string (got ", Described(j), ")"));
  }
  *out = j.get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadStringList(
    const ServerContext& ctx, const Json& j, std::string_view field,
    google::protobuf::RepeatedPtrField<std::string>* out) {
  if (!j.is_array()) {
    return ServerError(
        ctx, field,
        absl::StrCat("must be an array of strings (got ", Described(j), ")"));
  }
  out->Clear();
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) {
      return ServerError(
          ctx, absl::StrCat(AbslView(field), "[", i, "]"),
          absl::StrCat("must be a string, not ", Described(j[i]), " (",
                       AbslView(field), " is an array of strings)"));
    }
    out->Add(j[i].get<std::string>());
  }
  return absl::OkStatus();
}

absl::Status ReadStringMap(
    const ServerContext& ctx, const Json& j, std::string_view field,
    google::protobuf::Map<std::string, std::string>* out) {
  if (!j.is_object()) {
    return ServerError(
        ctx, field,
        absl::StrCat("must be an object of strings (got ", Described(j), ")"));
  }
  out->clear();
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) {
      return ServerError(
          ctx, absl::StrCat(AbslView(field), ".", key),
          absl::StrCat("must be a string (got ", Described(value),
                       value.is_number() ? "); quote it" : ")"));
    }
    (*out)[key] = value.get<std::string>();
  }
  return absl::OkStatus();
}

absl::Status ReadMillis(const ServerContext& ctx, const Json& j,
                        std::string_view field, uint32_t* out) {
  std::string error = absl::StrCat(
      "must be a whole number of milliseconds (got ", Described(j), ")");
  double value;
  if (j.is_number_unsigned() || j.is_number_integer()) {
    value = j.get<double>();
  } else if (j.is_number_float()) {
    value = j.get<double>();
    if (value != std::trunc(value)) return ServerError(ctx, field, error);
  } else {
    return ServerError(ctx, field, error);
  }
  if (value < 0) return ServerError(ctx, field, "must not be negative");
  if (value > std::numeric_limits<uint32_t>::max()) {
    return ServerError(ctx, field,
                       absl::StrCat("is too large; the limit is ",
                                    kMaxTimeoutMs, " (24 hours)"));
  }
  *out = static_cast<uint32_t>(value);
  return absl::OkStatus();
}

// Known keys of a sub-object, by JSON name; proto names are accepted too.
std::string_view Canonical(std::string_view key) {
  static const std::pair<std::string_view, std::string_view> kAliases[] = {
      {"max_total", "maxTotal"},
      {"ping_interval", "pingInterval"},
      {"progress_resets_timeout", "progressResetsTimeout"},
      {"client_id", "clientId"},
      {"client_secret", "clientSecret"},
      {"authorization_url", "authorizationUrl"},
      {"token_url", "tokenUrl"},
      {"redirect_uri", "redirectUri"},
      {"protocol_version", "protocolVersion"},
      {"registration_strategy", "registrationStrategy"},
      {"client_request", "clientRequest"},
      {"elicitation_url", "elicitationUrl"},
      {"grant_type", "grantType"},
      {"private_key", "privateKey"},
      {"private_key_file", "privateKeyFile"},
      {"signing_algorithm", "signingAlgorithm"},
      {"key_id", "keyId"},
      {"idp_token_url", "idpTokenUrl"},
      {"idp_client_id", "idpClientId"},
      {"idp_client_secret", "idpClientSecret"},
      {"id_token", "idToken"},
      {"id_token_file", "idTokenFile"},
      {"token_endpoint_auth_method", "tokenEndpointAuthMethod"},
      {"client_metadata_url", "clientMetadataUrl"},
  };
  for (const auto& [alias, name] : kAliases) {
    if (key == alias) return name;
  }
  return key;
}

absl::Status ReadTimeouts(const ServerContext& ctx, const Json& j,
                          v1::Timeouts* out) {
  if (!j.is_object()) {
    return ServerError(
        ctx, "timeouts",
        absl::StrCat("must be an object (got ", Described(j), ")"));
  }
  for (const auto& [raw_key, value] : j.items()) {
    std::string_view key = Canonical(raw_key);
    std::string field = absl::StrCat("timeouts.", raw_key);
    if (value.is_null()) continue;
    uint32_t ms = 0;
    if (key == "progressResetsTimeout") {
      if (!value.is_boolean()) {
        return ServerError(
            ctx, field,
            absl::StrCat("must be true or false (got ", Described(value), ")"));
      }
      out->set_progress_resets_timeout(value.get<bool>());
      continue;
    }
    if (key != "connection" && key != "request" && key != "maxTotal" &&
        key != "pingInterval" && key != "idle" && key != "clientRequest") {
      return ServerError(ctx, field,
                         "unknown key; timeouts has connection, request, "
                         "maxTotal, pingInterval, idle, clientRequest and "
                         "progressResetsTimeout");
    }
    RETURN_IF_ERROR(ReadMillis(ctx, value, field, &ms));
    if (key == "clientRequest") out->set_client_request(ms);
    if (key == "connection") out->set_connection(ms);
    if (key == "request") out->set_request(ms);
    if (key == "maxTotal") out->set_max_total(ms);
    if (key == "pingInterval") out->set_ping_interval(ms);
    if (key == "idle") out->set_idle(ms);
  }
  return absl::OkStatus();
}

absl::Status ReadOAuth(const ServerContext& ctx, const Json& j,
                       v1::OAuthConfig* out) {
  if (!j.is_object()) {
    return ServerError(
        ctx, "oauth",
        absl::StrCat("must be an object (got ", Described(j), ")"));
  }
  for (const auto& [raw_key, value] : j.items()) {
    std::string_view key = Canonical(raw_key);
    std::string field = absl::StrCat("oauth.", raw_key);
    if (value.is_null()) continue;
    if (key == "scopes") {
      RETURN_IF_ERROR(ReadStringList(ctx, value, field, out->mutable_scopes()));
      continue;
    }
    std::string* target = nullptr;
    if (key == "clientId") target = out->mutable_client_id();
    if (key == "clientSecret") target = out->mutable_client_secret();
    if (key == "authorizationUrl") target = out->mutable_authorization_url();
    if (key == "tokenUrl") target = out->mutable_token_url();
    if (key == "redirectUri") target = out->mutable_redirect_uri();
    if (key == "protocolVersion") target = out->mutable_protocol_version();
    if (key == "registrationStrategy") {
      target = out->mutable_registration_strategy();
    }
    if (key == "tokenEndpointAuthMethod") {
      target = out->mutable_token_endpoint_auth_method();
    }
    if (key == "clientMetadataUrl") target = out->mutable_client_metadata_url();
    if (key == "grantType") target = out->mutable_grant_type();
    if (key == "privateKey") target = out->mutable_private_key();
    if (key == "privateKeyFile") target = out->mutable_private_key_file();
    if (key == "signingAlgorithm") target = out->mutable_signing_algorithm();
    if (key == "keyId") target = out->mutable_key_id();
    if (key == "idpTokenUrl") target = out->mutable_idp_token_url();
    if (key == "idpClientId") target = out->mutable_idp_client_id();
    if (key == "idpClientSecret") target = out->mutable_idp_client_secret();
    if (key == "idToken") target = out->mutable_id_token();
    if (key == "idTokenFile") target = out->mutable_id_token_file();
    if (target == nullptr) {
      return ServerError(ctx, field,
                         "unknown key; oauth has clientId, clientSecret, "
                         "authorizationUrl, tokenUrl, scopes, redirectUri, "
                         "protocolVersion, registrationStrategy, "
                         "tokenEndpointAuthMethod, clientMetadataUrl, "
                         "grantType, privateKey, privateKeyFile, "
                         "signingAlgorithm, keyId, idpTokenUrl, idpClientId, "
                         "idpClientSecret, idToken and idTokenFile");
    }
    RETURN_IF_ERROR(ReadString(ctx, value, field, target));
  }
  return absl::OkStatus();
}

absl::Status ReadClientCapabilities(const ServerContext& ctx, const Json& j,
                                    v1::ClientCapabilities* out) {
  if (!j.is_object()) {
    return ServerError(
        ctx, "clientCapabilities",
        absl::StrCat("must be an object (got ", Described(j), ")"));
  }
  for (const auto& [raw_key, value] : j.items()) {
    std::string_view key = Canonical(raw_key);
    std::string field = absl::StrCat("clientCapabilities.", raw_key);
    if (value.is_null()) continue;
    if (key != "sampling" && key != "elicitation" && key != "elicitationUrl" &&
        key != "roots" && key != "apps") {
      return ServerError(ctx, field,
                         "unknown key; clientCapabilities has sampling, "
                         "elicitation, elicitationUrl, roots and apps");
    }
    if (!value.is_boolean()) {
      return ServerError(
          ctx, field,
          absl::StrCat("must be true or false (got ", Described(value), ")"));
    }
    bool on = value.get<bool>();
    if (key == "sampling") out->set_sampling(on);
    if (key == "elicitation") out->set_elicitation(on);
    if (key == "elicitationUrl") out->set_elicitation_url(on);
    if (key == "roots") out->set_roots(on);
    if (key == "apps") out->set_apps(on);
  }
  return absl::OkStatus();
}

absl::Status ReadRoots(const ServerContext& ctx, const Json& j,
                       google::protobuf::RepeatedPtrField<v1::Root>* out) {
  if (!j.is_array()) {
    return ServerError(
        ctx, "roots",
        absl::StrCat("must be an array of {\"uri\", \"name\"} objects (got ",
                     Described(j), ")"));
  }
  for (size_t i = 0; i < j.size(); ++i) {
    const Json& item = j[i];
    std::string field = absl::StrCat("roots[", i, "]");
    if (!item.is_object()) {
      return ServerError(
          ctx, field,
          absl::StrCat("must be an object with uri and name (got ",
                       Described(item), ")"));
    }
    v1::Root* root = out->Add();
    for (const auto& [key, value] : item.items()) {
      if (value.is_null()) continue;
      std::string key_field = absl::StrCat(field, ".", key);
      if (key == "uri") {
        RETURN_IF_ERROR(ReadString(ctx, value, key_field, root->mutable_uri()));
      } else if (key == "name") {
        RETURN_IF_ERROR(
            ReadString(ctx, value, key_field, root->mutable_name()));
      } else {
        return ServerError(ctx, key_field, "unknown key; a root has uri and name");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ReadTimestamp(const ServerContext& ctx, const Json& j,
                           std::string_view field,
                           google::protobuf::Timestamp* out) {
  std::string text;
  RETURN_IF_ERROR(ReadString(ctx, j, field, &text));
  int64_t seconds = 0;
  int32_t nanos = 0;
  if (!ParseRfc3339Timestamp(text, &seconds, &nanos)) {
    return ServerError(ctx, field,
                       absl::StrCat("\"", text,
                                    "\" is not an RFC 3339 timestamp like "
                                    "\"2024-01-15T10:00:00Z\""));
  }
  out->set_seconds(seconds);
  out->set_nanos(nanos);
  return absl::OkStatus();
}

// One server of an INSPECTOR file.
absl::Status ReadInspectorServer(const ServerContext& ctx, const Json& j,
                                 v1::ServerConfig* out) {
  auto* extra = out->mutable_extra()->mutable_fields();
  for (const auto& [key, value] : j.items()) {
    if (key == "extra") {
      if (value.is_null()) continue;
      if (!value.is_object()) {
        return ServerError(
            ctx, "extra",
            absl::StrCat("must be an object (got ", Described(value), ")"));
      }
      for (const auto& [extra_key, item] : value.items()) {
        (*extra)[extra_key] = ToValue(item);
      }
      continue;
    }
    std::string text;
    if (key == "id" || key == "name" || key == "transport" ||
        key == "command" || key == "cwd" || key == "url" ||
        key == "connectionMode" || key == "protocol") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(ReadString(ctx, value, key, &text));
      if (key == "id") out->set_id(text);
      if (key == "name") out->set_name(text);
      if (key == "transport") out->set_transport(text);
      if (key == "command") out->set_command(text);
      if (key == "cwd") out->set_cwd(text);
      if (key == "url") out->set_url(text);
      if (key == "connectionMode") out->set_connection_mode(text);
      if (key == "protocol") out->set_protocol(text);
    } else if (key == "args") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(ReadStringList(ctx, value, key, out->mutable_args()));
    } else if (key == "env") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(ReadStringMap(ctx, value, key, out->mutable_env()));
    } else if (key == "headers") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(ReadStringMap(ctx, value, key, out->mutable_headers()));
    } else if (key == "timeouts") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(ReadTimeouts(ctx, value, out->mutable_timeouts()));
    } else if (key == "oauth") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(ReadOAuth(ctx, value, out->mutable_oauth()));
    } else if (key == "clientCapabilities") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(ReadClientCapabilities(
          ctx, value, out->mutable_client_capabilities()));
    } else if (key == "roots") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(ReadRoots(ctx, value, out->mutable_roots()));
    } else if (key == "maxRetries") {
      if (value.is_null()) continue;
      uint32_t count = 0;
      if (!value.is_number_unsigned() && !value.is_number_integer()) {
        return ServerError(ctx, key,
                           absl::StrCat("must be a whole number (got ",
                                        Described(value), ")"));
      }
      if (value.get<double>() < 0 ||
          value.get<double>() > std::numeric_limits<uint32_t>::max()) {
        return ServerError(ctx, key, "is out of range");
      }
      count = value.get<uint32_t>();
      out->set_max_retries(count);
    } else if (key == "retryBackoff") {
      if (value.is_null()) continue;
      if (!value.is_array()) {
        return ServerError(ctx, key,
                           absl::StrCat("must be an array of milliseconds "
                                        "(got ",
                                        Described(value), ")"));
      }
      out->clear_retry_backoff();
      for (size_t i = 0; i < value.size(); ++i) {
        uint32_t ms = 0;
        RETURN_IF_ERROR(
            ReadMillis(ctx, value[i], absl::StrCat(key, "[", i, "]"), &ms));
        out->add_retry_backoff(ms);
      }
    } else if (key == "retryableErrors") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(
          ReadStringList(ctx, value, key, out->mutable_retryable_errors()));
    } else if (key == "createdAt") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(
          ReadTimestamp(ctx, value, key, out->mutable_created_at()));
    } else if (key == "updatedAt") {
      if (value.is_null()) continue;
      RETURN_IF_ERROR(
          ReadTimestamp(ctx, value, key, out->mutable_updated_at()));
    } else {
      (*extra)[key] = ToValue(value);
    }
  }
  if (extra->empty()) out->clear_extra();
  return absl::OkStatus();
}

// Transport of a URL server that does not say: SSE when the path ends in
// /sse, Streamable HTTP otherwise.
std::string_view TransportForUrl(std::string_view url) {
  auto parsed = ParseHttpUrl(url);
  if (!parsed.ok()) return kTransportStreamableHttp;
  std::string_view path = parsed->path;
  path = path.substr(0, path.find_first_of("?#"));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return absl::EndsWith(AbslView(path), "/sse") ? kTransportSse
                                                : kTransportStreamableHttp;
}

// Keys an MCP_SERVERS or VSCODE server entry has that the inspector models.
bool IsMapFormatKey(std::string_view key) {
  return key == "type" || key == "command" || key == "args" || key == "env" ||
         key == "cwd" || key == "url" || key == "headers";
}

// One server of an MCP_SERVERS or VSCODE file.
absl::Status ReadMapServer(const ServerContext& ctx, const Json& j,
                           v1::ConfigFormat format, v1::ServerConfig* out) {
  std::string field =
      format == v1::CONFIG_FORMAT_VSCODE ? "servers" : "mcpServers";
  if (!j.is_object()) {
    return EntryError(
        ctx, absl::StrCat(field, ".", ctx.name),
        absl::StrCat("each entry of \"", field, "\" must be an object (got ",
                     Described(j), ")"));
  }
  auto* extra = out->mutable_extra()->mutable_fields();
  std::optional<std::string> type;
  for (const auto& [key, value] : j.items()) {
    if (!IsMapFormatKey(key)) {
      (*extra)[key] = ToValue(value);
      continue;
    }
    if (value.is_null()) continue;
    std::string text;
    if (key == "type") {
      RETURN_IF_ERROR(ReadString(ctx, value, key, &text));
      type = text;
    } else if (key == "command") {
      RETURN_IF_ERROR(ReadString(ctx, value, key, &text));
      out->set_command(text);
    } else if (key == "cwd") {
      RETURN_IF_ERROR(ReadString(ctx, value, key, &text));
      out->set_cwd(text);
    } else if (key == "url") {
      RETURN_IF_ERROR(ReadString(ctx, value, key, &text));
      out->set_url(text);
    } else if (key == "args") {
      RETURN_IF_ERROR(ReadStringList(ctx, value, key, out->mutable_args()));
    } else if (key == "env") {
      RETURN_IF_ERROR(ReadStringMap(ctx, value, key, out->mutable_env()));
    } else if (key == "headers") {
      RETURN_IF_ERROR(ReadStringMap(ctx, value, key, out->mutable_headers()));
    }
  }
  if (type.has_value()) {
    auto transport = TransportForType(*type);
    if (!transport.has_value()) {
      return ServerError(ctx, "type",
                         absl::StrCat("\"", *type,
                                      "\" is not a supported type; use "
                                      "\"stdio\", \"http\" (Streamable HTTP) "
                                      "or \"sse\""));
    }
    out->set_transport(std::string(*transport));
    if (*type != DefaultType(*transport, format)) {
      (*extra)["type"].set_string_value(*type);
    }
  } else if (out->has_command() && out->has_url()) {
    return ServerError(ctx, "url",
                       "a server has either command (stdio) or url (HTTP), "
                       "not both; remove one or set \"type\"");
  } else if (out->has_command()) {
    out->set_transport(std::string(kTransportStdio));
  } else if (out->has_url()) {
    out->set_transport(std::string(TransportForUrl(out->url())));
  } else {
    return ServerError(ctx, "command",
                       "the server needs \"command\" (a stdio server) or "
                       "\"url\" (an HTTP server)");
  }
  if (extra->empty()) out->clear_extra();
  return absl::OkStatus();
}

std::string_view FormatName(v1::ConfigFormat format) {
  switch (format) {
    case v1::CONFIG_FORMAT_INSPECTOR:
      return "an mcp.json file";
    case v1::CONFIG_FORMAT_MCP_SERVERS:
      return "a Claude Desktop / Cursor file";
    case v1::CONFIG_FORMAT_VSCODE:
      return "a VS Code file";
    default:
      return "a configuration file";
  }
}

absl::Status WrongShape(std::string_view key, std::string_view expected,
                        v1::ConfigFormat format, const Json* found) {
  std::string got = found == nullptr
                        ? std::string("it is missing")
                        : absl::StrCat("it is ", Described(*found));
  return Error(
      v1::INVALID_REQUEST,
      absl::StrCat("\"", AbslView(key), "\": ", AbslView(FormatName(format)),
                   " needs ", AbslView(expected), ", but ", got),
      {{"field", std::string(key)}});
}

absl::StatusOr<v1::ConfigFormat> DetectFormat(const Json& root) {
  auto servers = root.find("servers");
  auto mcp = root.find("mcpServers");
  if (servers != root.end() && servers->is_array()) {
    return v1::CONFIG_FORMAT_INSPECTOR;
  }
  if (mcp != root.end() && mcp->is_object()) {
    return v1::CONFIG_FORMAT_MCP_SERVERS;
  }
  if (servers != root.end() && servers->is_object()) {
    return v1::CONFIG_FORMAT_VSCODE;
  }
  std::vector<std::string> keys;
  for (const auto& [key, value] : root.items()) {
    if (keys.size() == 10) {
      keys.push_back("...");
      break;
    }
    keys.push_back(absl::StrCat("\"", key, "\""));
  }
  return Error(
      v1::INVALID_REQUEST,
      absl::StrCat("cannot tell the file's format: expected a "
                   "\"servers\" array (mcp.json), an \"mcpServers\" "
                   "object (Claude Desktop, Cursor) or a \"servers\" "
                   "object (VS Code); the top level has ",
                   keys.empty() ? "no keys" : absl::StrJoin(keys, ", ")));
}

}  // namespace

absl::StatusOr<ParsedConfigFile> ParseConfigFile(std::string_view content,
                                                 v1::ConfigFormat format) {
  ASSIGN_OR_RETURN(Json root, ParseJson(content));
  if (!root.is_object()) {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("the top level must be a JSON object (got ",
                              Described(root), ")"));
  }
  ParsedConfigFile result;
  if (format == v1::CONFIG_FORMAT_AUTO) {
    ASSIGN_OR_RETURN(format, DetectFormat(root));
  }
  result.format = format;

  std::string servers_key;
  switch (format) {
    case v1::CONFIG_FORMAT_INSPECTOR: {
      servers_key = "servers";
      auto it = root.find(servers_key);
      if (it == root.end() || !it->is_array()) {
        return WrongShape(servers_key, "a \"servers\" array", format,
                          it == root.end() ? nullptr : &*it);
      }
      auto version = root.find("version");
      if (version != root.end() && !version->is_null()) {
        if (!version->is_string() ||
            !(version->get<std::string>() == "2" ||
              absl::StartsWith(version->get<std::string>(), "2."))) {
          return Error(v1::INVALID_REQUEST,
                       absl::StrCat("\"version\": this inspector reads "
                                    "mcp.json version 2.x, the file says ",
                                    version->dump()),
                       {{"field", "version"}});
        }
      }
      for (size_t i = 0; i < it->size(); ++i) {
        const Json& entry = (*it)[i];
        ServerContext ctx{absl::StrCat("servers[", i, "]"), ""};
        if (!entry.is_object()) {
          return EntryError(ctx, ctx.prefix,
                            absl::StrCat("each entry of \"servers\" must be "
                                         "an object (got ",
                                         Described(entry), ")"));
        }
        auto name = entry.find("name");
        if (name != entry.end() && name->is_string()) {
          std::string trimmed(
              absl::StripAsciiWhitespace(name->get<std::string>()));
          if (!trimmed.empty()) ctx = ContextFor(trimmed);
        }
        v1::ServerConfig server;
        RETURN_IF_ERROR(ReadInspectorServer(ctx, entry, &server));
        result.servers.push_back(std::move(server));
      }
      break;
    }
    case v1::CONFIG_FORMAT_MCP_SERVERS:
    case v1::CONFIG_FORMAT_VSCODE: {
      servers_key =
          format == v1::CONFIG_FORMAT_VSCODE ? "servers" : "mcpServers";
      auto it = root.find(servers_key);
      if (it == root.end() || !it->is_object()) {
        return WrongShape(servers_key,
                          absl::StrCat("a \"", servers_key,
                                       "\" object mapping names to servers"),
                          format, it == root.end() ? nullptr : &*it);
      }
      for (const auto& [name, entry] : it->items()) {
        std::string trimmed(absl::StripAsciiWhitespace(name));
        if (trimmed.empty()) {
          return Error(v1::INVALID_CONFIG,
                       absl::StrCat("\"", servers_key,
                                    "\" has a server with an empty name; "
                                    "give every server a name"),
                       {{"field", "name"}, {"serverName", name}});
        }
        ServerContext ctx = ContextFor(trimmed);
        v1::ServerConfig server;
        server.set_name(name);
        RETURN_IF_ERROR(ReadMapServer(ctx, entry, format, &server));
        result.servers.push_back(std::move(server));
      }
      break;
    }
    default:
      return Error(
          v1::INVALID_REQUEST,
          absl::StrCat("unknown config format ", static_cast<int>(format)),
          {{"field", "format"}});
  }

  std::set<std::string> names;
  for (size_t i = 0; i < result.servers.size(); ++i) {
    v1::ServerConfig& server = result.servers[i];
    ServerContext ctx =
        server.has_name() && !absl::StripAsciiWhitespace(server.name()).empty()
            ? ContextFor(std::string(absl::StripAsciiWhitespace(server.name())))
            : ServerContext{absl::StrCat(servers_key, "[", i, "]"), ""};
    absl::Status status = NormalizeAndValidate(&server);
    if (!status.ok()) return InServer(ctx, status);
    if (!names.insert(server.name()).second) {
      return ServerError(ctx, "name",
                         "appears more than once in the file; server names "
                         "must be unique");
    }
  }

  auto* file_extra = result.file_extra.mutable_fields();
  for (const auto& [key, value] : root.items()) {
    if (key == servers_key) continue;
    if (format == v1::CONFIG_FORMAT_INSPECTOR && key == "version") continue;
    (*file_extra)[key] = ToValue(value);
  }
  return result;
}

}  // namespace inspector::config
