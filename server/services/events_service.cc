#include "server/services/events_service.h"

#include <algorithm>
#include <deque>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "common/errors.h"

namespace inspector::services {
namespace {

v1::EventKind KindOf(const v1::Event& event) {
  switch (event.payload_case()) {
    case v1::Event::kMessage:
      return v1::EVENT_KIND_MESSAGE;
    case v1::Event::kState:
      return v1::EVENT_KIND_STATE;
    case v1::Event::kLog:
      return v1::EVENT_KIND_LOG;
    case v1::Event::kPending:
      return v1::EVENT_KIND_PENDING;
    case v1::Event::kHeld:
      return v1::EVENT_KIND_HELD;
    case v1::Event::kListChanged:
      return v1::EVENT_KIND_LIST_CHANGED;
    case v1::Event::kConfig:
      return v1::EVENT_KIND_CONFIG;
    case v1::Event::kResourceUpdated:
      return v1::EVENT_KIND_RESOURCE_UPDATED;
    case v1::Event::kProgress:
      return v1::EVENT_KIND_PROGRESS;
    case v1::Event::kOauth:
      return v1::EVENT_KIND_OAUTH;
    case v1::Event::kTask:
      return v1::EVENT_KIND_TASK;
    case v1::Event::kCatalogChanged:
      return v1::EVENT_KIND_CATALOG_CHANGED;
    case v1::Event::kSessionStarted:
      return v1::EVENT_KIND_SESSION;
    default:
      return v1::EVENT_KIND_UNSPECIFIED;
  }
}

const std::string* ServerOf(const v1::Event& event) {
  switch (event.payload_case()) {
    case v1::Event::kMessage:
      return &event.message().server_id();
    case v1::Event::kState:
      return &event.state().server_id();
    case v1::Event::kLog:
      return &event.log().server_id();
    case v1::Event::kPending:
      return &event.pending().server_id();
    case v1::Event::kHeld:
      return &event.held().message().server_id();
    case v1::Event::kListChanged:
      return &event.list_changed().server_id();
    case v1::Event::kConfig:
      return &event.config().server_id();
    case v1::Event::kResourceUpdated:
      return &event.resource_updated().server_id();
    case v1::Event::kProgress:
      return &event.progress().server_id();
    case v1::Event::kOauth:
      return &event.oauth().server_id();
    case v1::Event::kTask:
      return &event.task().server_id();
    case v1::Event::kCatalogChanged:
      return &event.catalog_changed().server_id();
    case v1::Event::kSessionStarted:
      return &event.session_started().server_id();
    default:
      return nullptr;
  }
}

// Writes events from a subscription: one write in flight at a time, the
// next one started from OnWriteDone or when the bus says events arrived.
class WatchReactor final : public grpc::ServerWriteReactor<v1::Event> {
 public:
  WatchReactor(CallTracker* calls) : calls_(calls) { calls_->Begin(); }

  void Start(std::unique_ptr<engine::Subscription> subscription,
             std::vector<v1::Event> backlog) {
    {
      absl::MutexLock lock(&mu_);
      backlog_.assign(backlog.begin(), backlog.end());
      subscription_ = std::move(subscription);
    }
    subscription_->SetOnReady([this] { MaybeWrite(); });
    // Headers go out at once, so a client knows the stream is open (and
    // events published from now on reach it) before the first event.
    StartSendInitialMetadata();
    MaybeWrite();
  }

  void FinishWith(const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    finished_ = true;
    Finish(ToGrpcStatus(status));
  }

  void OnWriteDone(bool ok) override {
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) {
        // The client went away; OnCancel/OnDone follow.
        if (!finished_) {
          finished_ = true;
          Finish(grpc::Status::CANCELLED);
        }
        return;
      }
    }
    MaybeWrite();
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    if (!finished_ && !writing_) {
      finished_ = true;
      Finish(grpc::Status::CANCELLED);
    }
    cancelled_ = true;
  }

  void OnDone() override {
    // Unsubscribe before the reactor goes away, so the bus stops calling.
    std::unique_ptr<engine::Subscription> subscription;
    {
      absl::MutexLock lock(&mu_);
      subscription = std::move(subscription_);
    }
    subscription.reset();
    calls_->End();
    delete this;
  }

 private:
  void MaybeWrite() {
    absl::MutexLock lock(&mu_);
    if (writing_ || finished_) return;
    if (cancelled_) {
      finished_ = true;
      Finish(grpc::Status::CANCELLED);
      return;
    }
    if (!backlog_.empty()) {
      current_ = std::move(backlog_.front());
      backlog_.pop_front();
    } else if (subscription_ != nullptr) {
      auto next = subscription_->Pop();
      if (!next) return;
      current_ = *std::move(next);
    } else {
      return;
    }
    writing_ = true;
    StartWrite(&current_);
  }

  CallTracker* const calls_;
  absl::Mutex mu_;
  std::unique_ptr<engine::Subscription> subscription_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::Event> backlog_ ABSL_GUARDED_BY(mu_);
  v1::Event current_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

bool EventsService::Matches(const v1::WatchRequest& request,
                            const std::string& server_id,
                            const v1::Event& event) {
  if (event.payload_case() == v1::Event::kDropped) return true;
  if (!request.kinds().empty() &&
      std::find(request.kinds().begin(), request.kinds().end(),
                KindOf(event)) == request.kinds().end()) {
    return false;
  }
  if (!server_id.empty()) {
    const std::string* server = ServerOf(event);
    if (server != nullptr && !server->empty() && *server != server_id) {
      return false;
    }
  }
  if (event.payload_case() == v1::Event::kMessage) {
    const v1::McpMessage& message = event.message();
    if (request.direction() != v1::DIRECTION_UNSPECIFIED &&
        message.direction() != request.direction()) {
      return false;
    }
    if (!request.methods().empty() &&
        std::find(request.methods().begin(), request.methods().end(),
                  message.method()) == request.methods().end()) {
      return false;
    }
  }
  return true;
}

grpc::ServerWriteReactor<v1::Event>* EventsService::Watch(
    grpc::CallbackServerContext* context, const v1::WatchRequest* request) {
  auto* reactor = new WatchReactor(deps_.calls);
  absl::Status status = deps_.authenticator->Check(context->client_metadata());
  std::string server_id;
  if (status.ok() && !request->server_id().empty()) {
    auto resolved = resolver_(request->server_id());
    if (resolved.ok()) {
      server_id = *resolved;
    } else {
      status = resolved.status();
    }
  }
  std::vector<v1::Event> backlog;
  if (status.ok() && request->backlog() > 0 && backlog_) {
    auto messages = backlog_(static_cast<int>(std::min(request->backlog(), 10000u)));
    if (messages.ok()) {
      for (v1::McpMessage& message : *messages) {
        v1::Event event;
        event.set_timestamp(message.timestamp());
        *event.mutable_message() = std::move(message);
        if (Matches(*request, server_id, event)) {
          backlog.push_back(std::move(event));
        }
      }
    }
  }
  if (!status.ok()) {
    reactor->FinishWith(status);
    return reactor;
  }
  v1::WatchRequest filter = *request;
  auto subscription = bus_->Subscribe(
      kBufferEvents, [filter, server_id](const v1::Event& event) {
        return Matches(filter, server_id, event);
      });
  // Tells a REST gateway that the stream is really open: a call refused at
  // once also ends its (empty) initial metadata, and must become an HTTP
  // error rather than an empty 200 stream.
  context->AddInitialMetadata("x-stream-open", "1");
  reactor->Start(std::move(subscription), std::move(backlog));
  return reactor;
}

}  // namespace inspector::services
