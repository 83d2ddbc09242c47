// MessageHttpScope and ReceivedHttp (message_http.h).
#include "server/engine/message_http.h"

#include <utility>

#include "server/engine/pipeline.h"

namespace inspector::engine {
namespace {

thread_local MessageHttpScope* current_http_scope = nullptr;

}  // namespace

ReceivedHttp::ReceivedHttp(HttpExchangeRecord request)
    : request_(std::make_shared<const HttpExchangeRecord>(std::move(request))) {}

void ReceivedHttp::Recorded(Recorder record, int64_t message_id) {
  std::shared_ptr<const HttpExchangeRecord> answered;
  {
    absl::MutexLock lock(&mu_);
    if (message_id <= 0) return;
    record_ = record;
    message_ids_.push_back(message_id);
    answered = answered_;
  }
  if (answered != nullptr) record(message_id, answered);
}

void ReceivedHttp::Complete(std::shared_ptr<const HttpExchangeRecord> whole) {
  Recorder record;
  std::vector<int64_t> message_ids;
  {
    absl::MutexLock lock(&mu_);
    if (answered_ != nullptr) return;
    answered_ = whole;
    record = record_;
    message_ids = message_ids_;
  }
  if (!record) return;
  for (int64_t message_id : message_ids) record(message_id, whole);
}

MessageHttpScope::MessageHttpScope(
    std::shared_ptr<const HttpExchangeRecord> http, bool client_to_server)
    : http_(std::move(http)),
      client_to_server_(client_to_server),
      previous_(current_http_scope) {
  current_http_scope = this;
}

MessageHttpScope::MessageHttpScope(std::shared_ptr<ReceivedHttp> received,
                                   bool client_to_server)
    : received_(std::move(received)),
      client_to_server_(client_to_server),
      previous_(current_http_scope) {
  if (received_ != nullptr) http_ = received_->request();
  current_http_scope = this;
}

MessageHttpScope::~MessageHttpScope() { current_http_scope = previous_; }

std::shared_ptr<const HttpExchangeRecord> MessageHttpScope::Pending(
    bool client_to_server) {
  MessageHttpScope* scope = current_http_scope;
  if (scope == nullptr || scope->used_ ||
      scope->client_to_server_ != client_to_server) {
    return nullptr;
  }
  return scope->http_;
}

void MessageHttpScope::Apply(Envelope* envelope) {
  MessageHttpScope* scope = current_http_scope;
  if (scope == nullptr || scope->used_ || scope->http_ == nullptr ||
      scope->client_to_server_ != envelope->client_to_server) {
    return;
  }
  scope->used_ = true;  // only the message's own row
  envelope->http = scope->http_;
  envelope->received_http = scope->received_;
}

}  // namespace inspector::engine
