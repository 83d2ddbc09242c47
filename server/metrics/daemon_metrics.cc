#include "server/metrics/daemon_metrics.h"

#include <sys/stat.h>

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace inspector::metrics {
namespace {

// Every server's status, for one render.
std::vector<v1::ServerStatus> ServerStatusesForMetrics(const DaemonMetricsSources& sources) {
  std::vector<v1::ServerStatus> out;
  auto configs = sources.configs->List();
  if (!configs.ok()) return out;
  for (const v1::ServerConfig& config : *configs) {
    auto status = sources.engine->GetStatus(config.id());
    if (status.ok()) out.push_back(*std::move(status));
  }
  return out;
}

double FileBytesForMetrics(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 ? static_cast<double>(info.st_size)
                                          : 0;
}

}  // namespace

void AddDaemonMetrics(MetricsRegistry* registry,
                      DaemonMetricsSources given) {
  auto sources = std::make_shared<const DaemonMetricsSources>(std::move(given));
  registry->AddCallback(
      "inspector_upstream_state",
      "The state of each server's connection: 1 for its current state "
      "(disconnected, connecting, connected, disconnecting, error).",
      MetricsRegistry::Type::kGauge, {"inspector_server_id", "inspector_server_name", "state"},
      [sources] {
        std::vector<MetricsRegistry::Sample> samples;
        for (const v1::ServerStatus& status : ServerStatusesForMetrics(*sources)) {
          std::string state =
              status.state() == v1::CONNECTION_STATE_UNSPECIFIED
                  ? "disconnected"
                  : absl::AsciiStrToLower(
                        v1::ConnectionState_Name(status.state()));
          samples.push_back(
              {{status.server_id(), status.server_name(), state}, 1});
        }
        return samples;
      });
  registry->AddCallback(
      "inspector_upstream_sessions",
      "Live upstream sessions per server (the daemon's own and one per "
      "front-door, conversion or proxy client).",
      MetricsRegistry::Type::kGauge, {"inspector_server_id"}, [sources] {
        std::vector<MetricsRegistry::Sample> samples;
        for (const v1::ServerStatus& status : ServerStatusesForMetrics(*sources)) {
          samples.push_back(
              {{status.server_id()}, static_cast<double>(status.sessions())});
        }
        return samples;
      });
  registry->AddCallback(
      "inspector_request_queue_depth",
      "Callers' requests per server waiting to be sent (pending) or sent "
      "and unanswered (in_progress).",
      MetricsRegistry::Type::kGauge, {"inspector_server_id", "queue"}, [sources] {
        std::vector<MetricsRegistry::Sample> samples;
        for (const v1::ServerStatus& status : ServerStatusesForMetrics(*sources)) {
          samples.push_back({{status.server_id(), "pending"},
                             static_cast<double>(status.queue().pending())});
          samples.push_back(
              {{status.server_id(), "in_progress"},
               static_cast<double>(status.queue().in_progress())});
        }
        return samples;
      });
  registry->AddCallback(
      "inspector_client_sessions",
      "MCP client sessions open on the daemon, by kind (front_door: "
      "/servers/NAME/mcp and /sse; conversion: running conversions).",
      MetricsRegistry::Type::kGauge, {"kind"}, [sources] {
        std::vector<MetricsRegistry::Sample> samples;
        if (sources->front_door_sessions) {
          samples.push_back(
              {{"front_door"},
               static_cast<double>(sources->front_door_sessions())});
        }
        if (sources->conversions) {
          samples.push_back(
              {{"conversion"}, static_cast<double>(sources->conversions())});
        }
        return samples;
      });
  registry->AddCallback(
      "inspector_intercept_held_messages",
      "Messages the intercept stage holds now.", MetricsRegistry::Type::kGauge, {}, [sources] {
        return std::vector<MetricsRegistry::Sample>{
            {{},
             static_cast<double>(sources->intercept->ListHeld("").size())}};
      });
  registry->AddCallback(
      "inspector_database_bytes",
      "Bytes on disk of the SQLite database (file=main) and its "
      "write-ahead log (file=wal).",
      MetricsRegistry::Type::kGauge, {"file"}, [sources] {
        return std::vector<MetricsRegistry::Sample>{
            {{"main"}, FileBytesForMetrics(sources->database_path)},
            {{"wal"}, FileBytesForMetrics(sources->database_path + "-wal")}};
      });
  if (sources->history == nullptr) return;
  registry->AddCallback(
      "inspector_history_rows_written_total",
      "History rows committed by the writer, by table (messages, logs).",
      MetricsRegistry::Type::kCounter, {"table"}, [sources] {
        storage::HistoryWriter::Stats stats = sources->history->stats();
        return std::vector<MetricsRegistry::Sample>{
            {{"messages"}, static_cast<double>(stats.written_messages)},
            {{"logs"}, static_cast<double>(stats.written_logs)}};
      });
  registry->AddCallback(
      "inspector_history_batches_total",
      "Transactions the history writer committed; rows written over "
      "batches is the mean batch size.",
      MetricsRegistry::Type::kCounter, {}, [sources] {
        return std::vector<MetricsRegistry::Sample>{
            {{}, static_cast<double>(sources->history->stats().batches)}};
      });
  registry->AddCallback(
      "inspector_history_dropped_total",
      "History records dropped because the writer's queue was full.",
      MetricsRegistry::Type::kCounter, {}, [sources] {
        return std::vector<MetricsRegistry::Sample>{
            {{}, static_cast<double>(sources->history->stats().dropped)}};
      });
  registry->AddCallback(
      "inspector_history_failed_total",
      "History records that could not be written.", MetricsRegistry::Type::kCounter, {},
      [sources] {
        return std::vector<MetricsRegistry::Sample>{
            {{}, static_cast<double>(sources->history->stats().failed)}};
      });
}

}  // namespace inspector::metrics
