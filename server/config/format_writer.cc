// Writing configuration files (SerializeConfigFile in formats.h): the
// INSPECTOR format's server objects and the map formats' (MCP_SERVERS,
// VSCODE) entries, with unknown keys kept from `extra`.
#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/sorted.h"
#include "common/transports.h"
#include "google/protobuf/util/time_util.h"
#include "server/config/format_common.h"
#include "server/config/formats.h"

namespace inspector::config {
namespace {

using format_internal::ContextFor;
using format_internal::DefaultType;
using format_internal::FromStruct;
using format_internal::FromValue;
using format_internal::Json;
using format_internal::ServerContext;
using format_internal::ServerError;
using format_internal::TransportForType;
using google::protobuf::Struct;
using google::protobuf::Value;
using google::protobuf::util::TimeUtil;

Json StringMapJson(const google::protobuf::Map<std::string, std::string>& map) {
  Json out = Json::object();
  for (auto& [key, value] : SortedEntries(map)) out[key] = value;
  return out;
}

Json StringListJson(
    const google::protobuf::RepeatedPtrField<std::string>& list) {
  Json out = Json::array();
  for (const std::string& item : list) out.push_back(item);
  return out;
}

// Appends the keys of `extra` not in `taken`, sorted.
void AppendExtra(const Struct& extra, const std::set<std::string_view>& taken,
                 Json* out) {
  Json sorted = FromStruct(extra);
  for (auto& [key, value] : sorted.items()) {
    if (taken.count(key) == 0 && !out->contains(key)) (*out)[key] = value;
  }
}

const std::set<std::string_view>& InspectorKeys() {
  static const auto* keys =
      new std::set<std::string_view>{"id",           "name",
                                     "transport",    "command",
                                     "args",         "env",
                                     "cwd",          "url",
                                     "headers",      "connectionMode",
                                     "timeouts",     "oauth",
                                     "createdAt",    "updatedAt",
                                     "extra",        "clientCapabilities",
                                     "roots",        "maxRetries",
                                     "retryBackoff", "retryableErrors",
                                     "protocol"};
  return *keys;
}

const std::set<std::string_view>& MapFormatKeys() {
  static const auto* keys = new std::set<std::string_view>{
      "type", "command", "args", "env", "cwd", "url", "headers"};
  return *keys;
}

Json InspectorServerJson(const v1::ServerConfig& s) {
  Json out = Json::object();
  if (!s.id().empty()) out["id"] = s.id();
  out["name"] = s.name();
  out["transport"] = s.transport();
  if (s.has_command()) out["command"] = s.command();
  if (s.args_size() > 0) out["args"] = StringListJson(s.args());
  if (s.env_size() > 0) out["env"] = StringMapJson(s.env());
  if (s.has_cwd()) out["cwd"] = s.cwd();
  if (s.has_url()) out["url"] = s.url();
  if (s.headers_size() > 0) out["headers"] = StringMapJson(s.headers());
  if (s.has_connection_mode()) out["connectionMode"] = s.connection_mode();
  if (s.has_timeouts()) {
    const v1::Timeouts& t = s.timeouts();
    Json timeouts = Json::object();
    if (t.connection() != 0) timeouts["connection"] = t.connection();
    if (t.request() != 0) timeouts["request"] = t.request();
    if (t.max_total() != 0) timeouts["maxTotal"] = t.max_total();
    if (t.ping_interval() != 0) timeouts["pingInterval"] = t.ping_interval();
    if (t.idle() != 0) timeouts["idle"] = t.idle();
    if (t.client_request() != 0) timeouts["clientRequest"] = t.client_request();
    if (t.has_progress_resets_timeout()) {
      timeouts["progressResetsTimeout"] = t.progress_resets_timeout();
    }
    if (!timeouts.empty()) out["timeouts"] = std::move(timeouts);
  }
  if (s.has_protocol()) out["protocol"] = s.protocol();
  if (s.has_max_retries()) out["maxRetries"] = s.max_retries();
  if (s.retry_backoff_size() > 0) {
    Json backoff = Json::array();
    for (uint32_t ms : s.retry_backoff()) backoff.push_back(ms);
    out["retryBackoff"] = std::move(backoff);
  }
  if (s.retryable_errors_size() > 0) {
    out["retryableErrors"] = StringListJson(s.retryable_errors());
  }
  if (s.has_oauth()) {
    const v1::OAuthConfig& o = s.oauth();
    Json oauth = Json::object();
    auto put = [&oauth](const char* key, const std::string& value) {
      if (!value.empty()) oauth[key] = value;
    };
    put("clientId", o.client_id());
    put("clientSecret", o.client_secret());
    put("authorizationUrl", o.authorization_url());
    put("tokenUrl", o.token_url());
    if (o.scopes_size() > 0) oauth["scopes"] = StringListJson(o.scopes());
    put("redirectUri", o.redirect_uri());
    put("protocolVersion", o.protocol_version());
    put("registrationStrategy", o.registration_strategy());
    put("tokenEndpointAuthMethod", o.token_endpoint_auth_method());
    put("clientMetadataUrl", o.client_metadata_url());
    put("grantType", o.grant_type());
    // An inline private key is never written out: configurations that
    // are exported name a key file instead.
    put("privateKeyFile", o.private_key_file());
    put("signingAlgorithm", o.signing_algorithm());
    put("keyId", o.key_id());
    put("idpTokenUrl", o.idp_token_url());
    put("idpClientId", o.idp_client_id());
    put("idpClientSecret", o.idp_client_secret());
    put("idToken", o.id_token());
    put("idTokenFile", o.id_token_file());
    if (!oauth.empty()) out["oauth"] = std::move(oauth);
  }
  if (s.has_client_capabilities()) {
    const v1::ClientCapabilities& c = s.client_capabilities();
    Json capabilities = Json::object();
    if (c.has_sampling()) capabilities["sampling"] = c.sampling();
    if (c.has_elicitation()) capabilities["elicitation"] = c.elicitation();
    if (c.has_elicitation_url()) {
      capabilities["elicitationUrl"] = c.elicitation_url();
    }
    if (c.has_roots()) capabilities["roots"] = c.roots();
    if (c.has_apps()) capabilities["apps"] = c.apps();
    if (!capabilities.empty()) {
      out["clientCapabilities"] = std::move(capabilities);
    }
  }
  if (s.roots_size() > 0) {
    Json roots = Json::array();
    for (const v1::Root& root : s.roots()) {
      Json item = {{"uri", root.uri()}};
      if (!root.name().empty()) item["name"] = root.name();
      roots.push_back(std::move(item));
    }
    out["roots"] = std::move(roots);
  }
  if (s.has_created_at()) out["createdAt"] = TimeUtil::ToString(s.created_at());
  if (s.has_updated_at()) out["updatedAt"] = TimeUtil::ToString(s.updated_at());
  AppendExtra(s.extra(), InspectorKeys(), &out);
  return out;
}

Json MapServerJson(const v1::ServerConfig& s, v1::ConfigFormat format) {
  Json out = Json::object();
  std::string type(DefaultType(s.transport(), format));
  auto original = s.extra().fields().find("type");
  if (original != s.extra().fields().end() &&
      original->second.kind_case() == Value::kStringValue) {
    auto transport = TransportForType(original->second.string_value());
    if (transport.has_value() && *transport == s.transport()) {
      type = original->second.string_value();
    }
  }
  if (!type.empty()) out["type"] = type;
  if (s.transport() == kTransportStdio) {
    if (s.has_command()) out["command"] = s.command();
    if (s.args_size() > 0) out["args"] = StringListJson(s.args());
    if (s.env_size() > 0) out["env"] = StringMapJson(s.env());
    if (s.has_cwd()) out["cwd"] = s.cwd();
  } else {
    if (s.has_url()) out["url"] = s.url();
    if (s.headers_size() > 0) out["headers"] = StringMapJson(s.headers());
  }
  AppendExtra(s.extra(), MapFormatKeys(), &out);
  return out;
}

}  // namespace

absl::StatusOr<std::string> SerializeConfigFile(
    const std::vector<v1::ServerConfig>& servers, v1::ConfigFormat format,
    const google::protobuf::Struct& file_extra) {
  if (format == v1::CONFIG_FORMAT_AUTO) format = v1::CONFIG_FORMAT_INSPECTOR;
  if (format != v1::CONFIG_FORMAT_INSPECTOR &&
      format != v1::CONFIG_FORMAT_MCP_SERVERS &&
      format != v1::CONFIG_FORMAT_VSCODE) {
    return Error(
        v1::INVALID_REQUEST,
        absl::StrCat("unknown config format ", static_cast<int>(format)),
        {{"field", "format"}});
  }
  std::set<std::string> names;
  for (size_t i = 0; i < servers.size(); ++i) {
    const v1::ServerConfig& s = servers[i];
    if (s.name().empty()) {
      return Error(v1::INVALID_CONFIG,
                   absl::StrCat("servers[", i, "]: name: required for export"),
                   {{"field", "name"}});
    }
    ServerContext ctx = ContextFor(s.name());
    if (!IsKnownTransport(s.transport())) {
      return ServerError(ctx, "transport",
                         absl::StrCat("\"", s.transport(),
                                      "\" is not a transport; use \"stdio\", "
                                      "\"streamableHttp\" or \"sse\""));
    }
    if (!names.insert(s.name()).second) {
      return Error(v1::INVALID_REQUEST,
                   absl::StrCat("server \"", s.name(),
                                "\" appears more than once; names must be "
                                "unique in a file"),
                   {{"field", "name"}, {"serverName", s.name()}});
    }
  }

  try {
    Json root = Json::object();
    if (format == v1::CONFIG_FORMAT_INSPECTOR) {
      auto schema = file_extra.fields().find("$schema");
      root["$schema"] = schema != file_extra.fields().end()
                            ? FromValue(schema->second)
                            : Json(std::string(kInspectorSchemaUrl));
      root["version"] = std::string(kInspectorFileVersion);
      Json list = Json::array();
      for (const auto& s : servers) list.push_back(InspectorServerJson(s));
      root["servers"] = std::move(list);
    } else {
      Json map = Json::object();
      for (const auto& s : servers) map[s.name()] = MapServerJson(s, format);
      root[format == v1::CONFIG_FORMAT_VSCODE ? "servers" : "mcpServers"] =
          std::move(map);
    }
    AppendExtra(file_extra, {}, &root);
    return root.dump(2) + "\n";
  } catch (const Json::type_error& e) {
    return Error(v1::INVALID_CONFIG,
                 absl::StrCat("a value is not valid UTF-8 and cannot be "
                              "written as JSON: ",
                              e.what()));
  } catch (const std::exception& e) {
    return Error(v1::INTERNAL_ERROR,
                 absl::StrCat("writing the file failed: ", e.what()));
  }
}

}  // namespace inspector::config
