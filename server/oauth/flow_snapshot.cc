// OAuthFlow's persistence: the snapshot stored in the oauth_flows table,
// and a flow rebuilt from one after a restart.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "server/oauth/json_fields.h"
#include "server/oauth/oauth_flow.h"
#include "server/oauth/redaction.h"
#include "server/oauth/urls.h"
#include <memory>
#include <type_traits>

#include "google/protobuf/util/json_util.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

}  // namespace

namespace {

Json ProtoJson(const google::protobuf::Message& message) {
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(message, &text).ok()) {
    return Json::object();
  }
  return Json::parse(text, nullptr, false);
}

std::vector<std::string> StringVector(const Json& j, const char* key) {
  return StringList(j, key);
}

}  // namespace

FlowSnapshot OAuthFlow::Snapshot() const {
  FlowSnapshot out;
  out.state = state_;
  out.latest_error = latest_error_;
  out.oauth_state = oauth_state_;
  out.code_verifier = code_verifier_;
  if (!oauth_state_.empty()) out.state_expires_at = state_expires_;
  Json settings = Json::object();
  settings["serverUrl"] = settings_.server_url;
  settings["protocolVersion"] = settings_.protocol_version;
  settings["registrationStrategy"] = settings_.registration_strategy;
  settings["scopes"] = settings_.scopes;
  settings["clientId"] = settings_.client_id;
  settings["tokenEndpointAuthMethod"] = settings_.token_endpoint_auth_method;
  settings["clientMetadataUrl"] = settings_.client_metadata_url;
  settings["authorizationUrl"] = settings_.authorization_url;
  settings["tokenUrl"] = settings_.token_url;
  settings["redirectUri"] = settings_.redirect_uri;
  settings["wwwAuthenticate"] = settings_.www_authenticate;
  settings["authorizationServer"] = settings_.authorization_server;
  settings["startedFrom"] = settings_.started_from;
  settings["previousScopes"] = settings_.previous_scopes;
  Json d = Json::object();
  d["settings"] = std::move(settings);
  d["protocolVersion"] = protocol_version_;
  d["wwwAuthenticate"] = www_authenticate_;
  d["resourceMetadata"] = resource_metadata_;
  d["authorizationServerMetadata"] = as_metadata_;
  d["resource"] = resource_;
  d["issuer"] = issuer_;
  d["requestedScopes"] = requested_scopes_;
  if (client_) {
    Json c = Json::object();
    c["issuer"] = client_->issuer;
    c["clientId"] = client_->client_id;
    c["authMethod"] = client_->auth_method;
    c["strategy"] = client_->strategy;
    c["redirectUri"] = client_->redirect_uri;
    c["registrationJson"] = client_->registration_json;  // masked
    d["client"] = std::move(c);
    out.client_secret = client_->client_secret;
  }
  d["codeChallenge"] = code_challenge_;
  d["stateUsed"] = state_used_;
  d["authorizationUrl"] = authorization_url_;
  d["statusMessage"] = status_message_;
  d["hint"] = hint_;
  Json log = Json::array();
  for (const auto& step : log_) log.push_back(ProtoJson(step));
  d["log"] = std::move(log);
  Json exchanges = Json::array();
  for (const auto& ex : exchanges_) exchanges.push_back(ProtoJson(ex));
  d["exchanges"] = std::move(exchanges);
  out.data = std::move(d);
  return out;
}

std::unique_ptr<OAuthFlow> OAuthFlow::Restore(
    FlowSettings settings, HttpFetcher* http, const FlowSnapshot& snapshot,
    Clock* clock) {
  const Json& d = snapshot.data.is_object() ? snapshot.data : Json::object();
  auto field = [&d](const char* key) -> const Json& {
    static const Json kEmpty = Json::object();
    auto it = d.find(key);
    return it != d.end() && it->is_object() ? *it : kEmpty;
  };
  const Json& stored = field("settings");
  settings.server_url = StringField(stored, "serverUrl");
  settings.protocol_version = StringField(stored, "protocolVersion");
  settings.registration_strategy = StringField(stored, "registrationStrategy");
  settings.scopes = StringVector(stored, "scopes");
  settings.client_id = StringField(stored, "clientId");
  settings.token_endpoint_auth_method =
      StringField(stored, "tokenEndpointAuthMethod");
  settings.client_metadata_url = StringField(stored, "clientMetadataUrl");
  settings.authorization_url = StringField(stored, "authorizationUrl");
  settings.token_url = StringField(stored, "tokenUrl");
  settings.redirect_uri = StringField(stored, "redirectUri");
  settings.www_authenticate = StringField(stored, "wwwAuthenticate");
  settings.authorization_server = StringField(stored, "authorizationServer");
  settings.started_from = StringField(stored, "startedFrom");
  settings.previous_scopes = StringVector(stored, "previousScopes");

  auto flow = std::make_unique<OAuthFlow>(std::move(settings), http, clock);
  flow->state_ = snapshot.state;
  flow->protocol_version_ = StringField(d, "protocolVersion");
  flow->www_authenticate_ = StringField(d, "wwwAuthenticate");
  flow->resource_metadata_ = field("resourceMetadata");
  flow->as_metadata_ = field("authorizationServerMetadata");
  flow->resource_ = StringField(d, "resource");
  flow->issuer_ = StringField(d, "issuer");
  flow->requested_scopes_ = StringVector(d, "requestedScopes");
  if (d.contains("client") && d["client"].is_object()) {
    const Json& c = d["client"];
    ClientRegistration client;
    client.issuer = StringField(c, "issuer");
    client.client_id = StringField(c, "clientId");
    client.client_secret = snapshot.client_secret;
    client.auth_method = StringField(c, "authMethod");
    client.strategy = StringField(c, "strategy");
    client.redirect_uri = StringField(c, "redirectUri");
    client.registration_json = StringField(c, "registrationJson");
    flow->client_ = std::move(client);
  }
  flow->code_verifier_ = snapshot.code_verifier;
  flow->code_challenge_ = StringField(d, "codeChallenge");
  flow->oauth_state_ = snapshot.oauth_state;
  flow->state_used_ = BoolField(d, "stateUsed");
  if (snapshot.state_expires_at) flow->state_expires_ = *snapshot.state_expires_at;
  flow->authorization_url_ = StringField(d, "authorizationUrl");
  flow->latest_error_ = snapshot.latest_error;
  flow->status_message_ = StringField(d, "statusMessage");
  flow->hint_ = StringField(d, "hint");
  auto restore_list = [&d](const char* key, auto* out) {
    auto it = d.find(key);
    if (it == d.end() || !it->is_array()) return;
    for (const Json& item : *it) {
      typename std::remove_pointer_t<decltype(out)>::value_type message;
      if (google::protobuf::util::JsonStringToMessage(item.dump(), &message).ok()) {
        out->push_back(std::move(message));
      }
    }
  };
  restore_list("log", &flow->log_);
  restore_list("exchanges", &flow->exchanges_);
  // Each step needs what the ones before it gathered: a flow missing it
  // (a state the snapshot cannot carry on from) starts that part again.
  if (flow->state_ >= v1::CLIENT_REGISTRATION && flow->issuer_.empty()) {
    flow->state_ = v1::METADATA_DISCOVERY;
  }
  if (flow->state_ >= v1::AUTHORIZATION_REDIRECT && !flow->client_) {
    flow->state_ = v1::CLIENT_REGISTRATION;
  }
  if (flow->state_ == v1::AUTHORIZATION_CODE &&
      (flow->code_verifier_.empty() || flow->oauth_state_.empty())) {
    flow->state_ = v1::AUTHORIZATION_REDIRECT;
  }
  if (flow->state_ == v1::TOKEN_REQUEST) {
    // The code is not kept: it is single use, and the restart lost it.
    flow->state_ = v1::AUTHORIZATION_REDIRECT;
    flow->Log("the daemon restarted before the code was redeemed: a new "
              "authorization URL is needed");
  }
  if (flow->state_ == v1::COMPLETE || flow->state_ < v1::METADATA_DISCOVERY) {
    flow->state_ = v1::METADATA_DISCOVERY;
  }
  return flow;
}

}  // namespace inspector::oauth
