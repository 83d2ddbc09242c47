// Small helpers shared by the files of UpstreamSession and its parts
// (upstream_send.cc, upstream_cancel.cc, upstream_inbound.cc,
// upstream_listen.cc): reading a message's params, durations and times as
// history wants them. Pure functions; any thread. Not for use outside the
// engine.
#ifndef INSPECTOR_SERVER_ENGINE_UPSTREAM_SESSION_INTERNAL_H_
#define INSPECTOR_SERVER_ENGINE_UPSTREAM_SESSION_INTERNAL_H_

#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"

namespace inspector::engine::session_internal {

using nlohmann::json;

// The params object of the message `raw`; an empty object if it has none
// (or is not JSON).
inline json ParamsOf(const std::string& raw) {
  json parsed = json::parse(raw, nullptr, false);
  if (!parsed.is_object()) return json::object();
  auto it = parsed.find("params");
  if (it == parsed.end() || !it->is_object()) return json::object();
  return std::move(*it);
}

// params.reason of a notifications/cancelled, or `fallback`.
inline std::string CancelReason(const std::string& raw, std::string fallback) {
  json params = ParamsOf(raw);
  auto it = params.find("reason");
  return it != params.end() && it->is_string() ? it->get<std::string>()
                                               : std::move(fallback);
}

inline bool ParseUpstreamId(const std::string& id_json, int64_t* id) {
  return absl::SimpleAtoi(AbslView(id_json), id);
}

inline absl::Duration Or(absl::Duration value, absl::Duration fallback) {
  return value > absl::ZeroDuration() ? value : fallback;
}

inline double Millis(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

inline double UnixMillis(absl::Time t) {
  return absl::ToDoubleMilliseconds(t - absl::UnixEpoch());
}

// MCP logging levels onto the four of the logs table.
inline std::string LogLevelFor(const std::string& mcp_level) {
  if (mcp_level == "debug") return "debug";
  if (mcp_level == "info" || mcp_level == "notice") return "info";
  if (mcp_level == "warning") return "warn";
  if (mcp_level.empty()) return "info";
  return "error";  // error, critical, alert, emergency
}

}  // namespace inspector::engine::session_internal

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_SESSION_INTERNAL_H_
