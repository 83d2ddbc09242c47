// inspector.v1.EventsService: the live stream of messages, state changes,
// logs and other events.
//
// Each Watch call gets its own bounded buffer on the event bus (a slow
// reader never slows the daemon; it sees a Dropped event instead) and an
// optional backlog of recent messages from history. Writes are driven
// from OnWriteDone; no thread waits. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_EVENTS_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_EVENTS_SERVICE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "inspector/v1/events.grpc.pb.h"
#include "server/engine/event_bus.h"
#include "server/services/service_deps.h"

namespace inspector::services {

class EventsService final : public v1::EventsService::CallbackService {
 public:
  // Resolves a server name or id to the id; NOT_FOUND if none.
  using ServerResolver =
      std::function<absl::StatusOr<std::string>(const std::string&)>;
  // The last `n` recorded messages, oldest first.
  using Backlog =
      std::function<absl::StatusOr<std::vector<v1::McpMessage>>(int n)>;

  // Events buffered per watcher before the oldest are dropped.
  static constexpr size_t kBufferEvents = 4096;

  // `bus` must outlive the service. `backlog` may be empty (no history).
  EventsService(engine::EventBus* bus, ServerResolver resolver,
                Backlog backlog, ServiceDeps deps)
      : bus_(bus), resolver_(std::move(resolver)),
        backlog_(std::move(backlog)), deps_(deps) {}

  grpc::ServerWriteReactor<v1::Event>* Watch(
      grpc::CallbackServerContext* context,
      const v1::WatchRequest* request) override;

  // Whether `event` passes the filters of `request` (server already
  // resolved to its id).
  static bool Matches(const v1::WatchRequest& request,
                      const std::string& server_id, const v1::Event& event);

 private:
  engine::EventBus* const bus_;
  const ServerResolver resolver_;
  const Backlog backlog_;
  const ServiceDeps deps_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_EVENTS_SERVICE_H_
