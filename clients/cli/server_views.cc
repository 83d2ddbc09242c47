#include "clients/cli/server_views.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/json_values.h"
#include "clients/cli/server_edit.h"
#include "clients/cli/text.h"
#include "common/json_proto.h"
#include "common/secrets.h"
#include "common/sorted.h"
#include "google/protobuf/util/time_util.h"

namespace inspector::cli {
namespace {

std::string Timestamp(const google::protobuf::Timestamp& time) {
  return google::protobuf::util::TimeUtil::ToString(time);
}

std::vector<std::string> TimeoutLines(const v1::Timeouts& timeouts) {
  std::vector<std::string> lines;
  auto add = [&](const char* what, uint32_t ms) {
    if (ms > 0) lines.push_back(absl::StrCat(what, " ", ms, " ms"));
  };
  add("connection", timeouts.connection());
  add("request", timeouts.request());
  add("max total", timeouts.max_total());
  add("ping interval", timeouts.ping_interval());
  add("idle", timeouts.idle());
  if (timeouts.has_progress_resets_timeout()) {
    lines.push_back(
        absl::StrCat("progress resets timeout: ",
                     timeouts.progress_resets_timeout() ? "yes" : "no"));
  }
  if (lines.empty()) lines.push_back("defaults");
  return lines;
}

std::vector<std::string> OAuthLines(const v1::OAuthConfig& oauth) {
  std::vector<std::string> lines;
  auto add = [&](const char* what, const std::string& value) {
    if (!value.empty()) lines.push_back(absl::StrCat(what, ": ", value));
  };
  add("client id", oauth.client_id());
  add("client secret", oauth.client_secret());
  add("authorization url", oauth.authorization_url());
  add("token url", oauth.token_url());
  if (!oauth.scopes().empty()) {
    lines.push_back(
        absl::StrCat("scopes: ", absl::StrJoin(oauth.scopes(), " ")));
  }
  add("redirect uri", oauth.redirect_uri());
  add("protocol version", oauth.protocol_version());
  add("registration", oauth.registration_strategy());
  add("token endpoint auth", oauth.token_endpoint_auth_method());
  add("grant", oauth.grant_type());
  add("private key", oauth.private_key());
  add("private key file", oauth.private_key_file());
  add("signing algorithm", oauth.signing_algorithm());
  add("key id", oauth.key_id());
  add("idp token url", oauth.idp_token_url());
  add("idp client id", oauth.idp_client_id());
  add("idp client secret", oauth.idp_client_secret());
  add("id token", oauth.id_token());
  add("id token file", oauth.id_token_file());
  return lines;
}

}  // namespace

absl::StatusOr<std::string> ProtoToJson(
    const google::protobuf::Message& message) {
  absl::StatusOr<std::string> printed =
      ProtoToJsonText(message, /*add_whitespace=*/true);
  if (!printed.ok()) return printed.status();
  std::string json = *std::move(printed);
  if (json.empty() || json.back() != '\n') json += '\n';
  return json;
}

Table ServersTable(const v1::ListServersResponse& servers) {
  Table table({"NAME", "TRANSPORT", "TARGET", "MODE", "ID"});
  for (const auto& server : servers.servers()) {
    table.AddRow({server.name(), EffectiveTransport(server),
                  ServerTarget(server, /*show_secrets=*/false),
                  EffectiveMode(server), ShortId(server.id())});
  }
  return table;
}

std::string ServerDetails(const v1::ServerConfig& original, bool show_secrets) {
  const v1::ServerConfig server =
      show_secrets ? original : MaskSecrets(original);
  const std::string transport = EffectiveTransport(server);
  KeyValueBlock block;
  block.Add("Name", server.name());
  block.Add("ID", server.id());
  block.Add("Transport", transport);
  if (transport == kTransportStdio) {
    block.Add("Command", ServerTarget(server, /*show_secrets=*/true));
    block.Add("Working dir",
              server.cwd().empty() ? "(the daemon's)" : server.cwd());
    std::vector<std::string> env;
    for (const auto& [key, value] : SortedEntries(server.env())) {
      env.push_back(absl::StrCat(key, "=", value));
    }
    block.AddLines("Environment", env);
  } else {
    block.Add("URL", server.url());
    std::vector<std::string> headers;
    for (const auto& [key, value] : SortedEntries(server.headers())) {
      headers.push_back(absl::StrCat(key, ": ", value));
    }
    block.AddLines("Headers", headers);
  }
  block.Add("Mode", server.connection_mode().empty()
                        ? EffectiveMode(server) + " (auto)"
                        : server.connection_mode());
  block.AddLines("Timeouts", TimeoutLines(server.timeouts()));
  if (server.has_oauth()) block.AddLines("OAuth", OAuthLines(server.oauth()));
  if (server.has_extra() && server.extra().fields_size() > 0) {
    absl::StatusOr<std::string> extra = MessageToJsonText(server.extra());
    if (extra.ok()) block.Add("Extra", *extra);
  }
  if (server.has_created_at()) {
    block.Add("Created", Timestamp(server.created_at()));
  }
  if (server.has_updated_at()) {
    block.Add("Updated", Timestamp(server.updated_at()));
  }
  return block.Render();
}

}  // namespace inspector::cli
