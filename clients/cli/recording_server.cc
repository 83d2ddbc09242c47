#include "clients/cli/recording_server.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace inspector::cli {
namespace {

using json = nlohmann::json;

// The recorded id of a message as text ("412"), for correlation: the
// file writes ids as strings, older files as numbers.
std::string IdText(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return value.dump();
  return "";
}

// A request's params as the rules compare them: inside the message, so
// that rule pointers start with /params.
json AsRequest(const json& params) { return json{{"params", params}}; }

json Error(const json& id, int code, std::string message, json data) {
  json error = {{"code", code}, {"message", std::move(message)}};
  if (!data.is_null()) error["data"] = std::move(data);
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

}  // namespace

absl::StatusOr<RecordingServer> RecordingServer::FromSessionFile(
    const json& session, sessions::CompareRules rules) {
  if (!session.is_object() || !session.contains("messages") ||
      !session["messages"].is_array()) {
    return absl::InvalidArgumentError(
        "not a session file: it has no \"messages\" array (write one with "
        "`inspectorctl sessions export ID --out FILE`)");
  }
  RecordingServer server;
  server.rules_ = std::move(rules);
  std::map<std::string, size_t> by_message_id;  // recorded row id -> index
  std::map<std::string, size_t> open_by_rpc_id;  // unanswered, by JSON-RPC id
  std::vector<size_t> pending;                   // unanswered, in order
  for (const json& message : session["messages"]) {
    if (!message.is_object()) continue;
    const json raw = message.value("raw", json());
    if (!raw.is_object()) continue;  // stored cut or not JSON
    const bool to_server =
        message.value("direction", "") == "client_to_server";
    if (to_server) {
      if (!raw.contains("method") || !raw["method"].is_string() ||
          !raw.contains("id") || raw["id"].is_null()) {
        continue;  // a notification or an answer to the server
      }
      Exchange exchange;
      exchange.method = raw["method"].get<std::string>();
      exchange.params = raw.value("params", json::object());
      const size_t index = server.exchanges_.size();
      server.exchanges_.push_back(std::move(exchange));
      by_message_id[IdText(message.value("id", json()))] = index;
      open_by_rpc_id[raw["id"].dump()] = index;
      pending.push_back(index);
      continue;
    }
    if (raw.contains("method")) {
      // The server's notification (or request) while a call was open:
      // notifications go out before that call's answer.
      if (!raw.contains("id") && !pending.empty()) {
        server.exchanges_[pending.back()].notifications.push_back(raw);
      }
      continue;
    }
    // An answer: by the recording's correlation, else by its id.
    size_t index = SIZE_MAX;
    auto by_id = by_message_id.find(IdText(message.value("correlated_id",
                                                         json())));
    if (by_id != by_message_id.end()) {
      index = by_id->second;
    } else if (raw.contains("id")) {
      auto open = open_by_rpc_id.find(raw["id"].dump());
      if (open != open_by_rpc_id.end()) index = open->second;
    }
    if (index == SIZE_MAX || !server.exchanges_[index].answer.is_null()) {
      continue;
    }
    server.exchanges_[index].answer = raw;
    pending.erase(std::remove(pending.begin(), pending.end(), index),
                  pending.end());
  }
  server.exchanges_.erase(
      std::remove_if(server.exchanges_.begin(), server.exchanges_.end(),
                     [](const Exchange& e) { return e.answer.is_null(); }),
      server.exchanges_.end());
  if (server.exchanges_.empty()) {
    return absl::InvalidArgumentError(
        "the session records no answered request to serve");
  }
  return server;
}

std::vector<std::string> RecordingServer::Handle(std::string_view line) {
  const json message = json::parse(line, nullptr, false);
  if (message.is_discarded() || !message.is_object()) {
    return {Error(nullptr, -32700, "Parse error: not a JSON object", nullptr)
                .dump()};
  }
  if (!message.contains("method") || !message["method"].is_string()) {
    return {};  // the client's answer to a request of ours: none are sent
  }
  if (!message.contains("id") || message["id"].is_null()) return {};
  return Answer(message);
}

std::vector<std::string> RecordingServer::Answer(const json& request) {
  const std::string method = request["method"].get<std::string>();
  const json params = request.value("params", json::object());
  const json& id = request["id"];
  std::vector<size_t> same_method;
  std::vector<size_t> exact;
  for (size_t i = 0; i < exchanges_.size(); ++i) {
    if (exchanges_[i].method != method) continue;
    same_method.push_back(i);
    if (method == "initialize" ||
        rules_.Same(AsRequest(exchanges_[i].params), AsRequest(params))) {
      exact.push_back(i);
    }
  }
  if (exact.empty()) {
    // Acknowledgements whose answer is always empty: clients send them
    // after connecting, recorded or not.
    if (method == "ping" || method == "logging/setLevel") {
      return {json{{"jsonrpc", "2.0"}, {"id", id}, {"result", json::object()}}
                  .dump()};
    }
    if (same_method.empty()) {
      std::set<std::string> methods;
      for (const Exchange& e : exchanges_) methods.insert(e.method);
      return {Error(id, -32601,
                    absl::StrCat("Method not found: the recording has no ",
                                 method, " request (it has ",
                                 absl::StrJoin(methods, ", "), ")"),
                    json{{"recordedMethods", methods}})
                  .dump()};
    }
    size_t best = same_method.front();
    size_t best_distance = SIZE_MAX;
    std::string best_first;
    for (size_t i : same_method) {
      const std::vector<v1::DiffChange> changes =
          rules_.Compare(AsRequest(exchanges_[i].params), AsRequest(params));
      if (changes.size() < best_distance) {
        best = i;
        best_distance = changes.size();
        // Where they differ, inside params.
        best_first = changes.empty() ? "/" : changes.front().path().substr(
                                                 std::string("/params").size());
        if (best_first.empty()) best_first = "/";
      }
    }
    return {Error(id, -32602,
                  absl::StrCat("no recorded ", method,
                               " with these params; the closest recorded one "
                               "differs at ",
                               best_first),
                  json{{"closest", exchanges_[best].params},
                       {"differsAt", best_first}})
                .dump()};
  }
  size_t chosen = exact.back();
  for (size_t i : exact) {
    if (!exchanges_[i].used) {
      chosen = i;
      break;
    }
  }
  Exchange& exchange = exchanges_[chosen];
  exchange.used = true;
  std::vector<std::string> out;
  for (const json& notification : exchange.notifications) {
    out.push_back(notification.dump());
  }
  json answer = exchange.answer;
  answer["id"] = id;
  out.push_back(answer.dump());
  return out;
}

}  // namespace inspector::cli
