// The HTTP exchange recorded with a message that crossed HTTP (the
// message_http table; common/http_exchange_record.h holds the record):
//
//  - MessageHttpScope hands the exchange that carried a message to the row
//    the message makes, without passing it through every function between
//    the transport (or front door) and Pipeline::Observe: like
//    InterceptNoteScope (intercept_glue.h), it applies to the next
//    envelope of its direction made on this thread while it lives
//    (UpstreamCore::MakeEnvelope calls Apply), so only the message's own
//    row carries it.
//  - ReceivedHttp is the exchange of a message a front door received: its
//    request is known when the message is recorded, its answer only once
//    the front door gives it (after the server answered). The row is
//    written with the request, then completed with the answer.
//
// Threads: a scope belongs to the thread that made it. ReceivedHttp is
// thread-safe (the engine records on its threads, the front door answers
// on its own); it is shared by the front door's call and the message.
#ifndef INSPECTOR_SERVER_ENGINE_MESSAGE_HTTP_H_
#define INSPECTOR_SERVER_ENGINE_MESSAGE_HTTP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/http_exchange_record.h"

namespace inspector::engine {

class Pipeline;
struct Envelope;

class ReceivedHttp {
 public:
  // `request`: method, path and masked request headers (status 0).
  explicit ReceivedHttp(HttpExchangeRecord request);

  // The request as recorded with the message.
  std::shared_ptr<const HttpExchangeRecord> request() const {
    return request_;
  }

  // Writes a message's completed exchange (the pipeline's RecordHttp).
  using Recorder = std::function<void(
      int64_t message_id, std::shared_ptr<const HttpExchangeRecord> whole)>;

  // A message it carried was recorded as row `message_id`; `record`
  // completes the row (it must outlive this). Each row it is given is
  // completed (one HTTP request may make several messages: a front door's
  // initialize is a server/discover probe, then the initialize). If the
  // answer is already known, it is recorded now.
  void Recorded(Recorder record, int64_t message_id) ABSL_LOCKS_EXCLUDED(mu_);

  // The front door answered with `status` and `headers` (as given to the
  // client, before masking): the row is completed, now if it was
  // recorded, else when it is. Once; later calls are ignored.
  template <typename Pairs>
  void Answered(int status, const Pairs& headers) ABSL_LOCKS_EXCLUDED(mu_) {
    auto whole = std::make_shared<HttpExchangeRecord>(*request_);
    whole->status = status;
    whole->response_headers = MaskedHeaders(headers);
    Complete(std::move(whole));
  }

 private:
  void Complete(std::shared_ptr<const HttpExchangeRecord> whole)
      ABSL_LOCKS_EXCLUDED(mu_);

  const std::shared_ptr<const HttpExchangeRecord> request_;
  absl::Mutex mu_;
  Recorder record_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> message_ids_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const HttpExchangeRecord> answered_ ABSL_GUARDED_BY(mu_);
};

class MessageHttpScope {
 public:
  // The exchange of the next envelope of direction `client_to_server`
  // made on this thread: `http` (may be null: none), or for a message a
  // front door received `received`'s request (may be null).
  MessageHttpScope(std::shared_ptr<const HttpExchangeRecord> http,
                   bool client_to_server);
  MessageHttpScope(std::shared_ptr<ReceivedHttp> received,
                   bool client_to_server);
  ~MessageHttpScope();
  MessageHttpScope(const MessageHttpScope&) = delete;
  MessageHttpScope& operator=(const MessageHttpScope&) = delete;

  // Gives `envelope` the scope's exchange if it is of the scope's
  // direction and the first such envelope.
  static void Apply(Envelope* envelope);

  // The exchange Apply would give the next envelope of direction
  // `client_to_server` made on this thread (null: none), for work that
  // records the message later, elsewhere (a message the intercept stage
  // holds): it makes a scope of its own then.
  static std::shared_ptr<const HttpExchangeRecord> Pending(
      bool client_to_server);

 private:
  std::shared_ptr<const HttpExchangeRecord> http_;
  std::shared_ptr<ReceivedHttp> received_;
  bool client_to_server_;
  bool used_ = false;
  MessageHttpScope* previous_;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_MESSAGE_HTTP_H_
