// The requests an MCP server sent its client that the session's owner is
// to answer (sampling, elicitation, roots), by id, and the ids of those
// answered or withdrawn lately, so that no request is answered twice.
//
// Ids compare as JSON values re-serialized (7 and 7.0 aside, spacing and
// escapes do not matter); each request keeps its id's text as received,
// for the answer.
//
// Not thread-safe: UpstreamSession guards it with its lock.
#ifndef INSPECTOR_SERVER_ENGINE_SERVER_REQUESTS_H_
#define INSPECTOR_SERVER_ENGINE_SERVER_REQUESTS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>

#include "absl/time/time.h"

namespace inspector::engine {

class ServerRequests {
 public:
  struct Request {
    std::string id;  // JSON text as received
    std::string method;
    int64_t message_id = 0;  // history row of the request
    absl::Time received;
    bool waits_for_person = false;  // sampling, elicitation
  };

  // Ids answered or withdrawn that are remembered (the newest ones).
  static constexpr size_t kClosedIdsKept = 4096;

  // Registers `request` as waiting for an answer. False (and nothing
  // changes) if a request with the same id waits already.
  bool Open(Request request);

  // Takes the waiting request with this id out (answered or withdrawn) and
  // remembers the id as closed. False if none waits.
  bool Close(const std::string& id_json, Request* out);

  // Remembers an id the session answered itself (ping, a refusal).
  void MarkClosed(const std::string& id_json);

  // The waiting request with this id, or null.
  const Request* Find(const std::string& id_json) const;
  // Whether a request with this id was answered or withdrawn lately.
  bool WasClosed(const std::string& id_json) const;

  // The session ended: nothing waits any more (nothing is answered).
  void Clear();

  // Waiting requests that wait for a person.
  size_t waiting_for_person() const { return for_person_; }

 private:
  std::map<std::string, Request> waiting_;  // by canonical id
  size_t for_person_ = 0;
  std::set<std::string> closed_;
  std::deque<std::string> closed_order_;  // oldest first
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_SERVER_REQUESTS_H_
