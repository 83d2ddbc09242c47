// The input requests of MCP 2026-07-28 as pending items: one home for what
// a multi round-trip request (InputRounds, upstream_input_rounds.h) and a
// task (TaskFollower, tasks_session.h) do alike with the inputRequests a
// server sends. Whether the client passes one on (InputRefusal), opening
// each as a server request the owner answers under an id of its own,
// taking one back when it is answered, withdrawing the rest, and reading
// a refusal's message.
//
// InputItems belongs to the call or task that asked; the ServerRequests it
// opens items in is the session's (upstream_core.h). Not thread-safe: the
// caller holds the session's lock around every InputItems call.
#ifndef INSPECTOR_SERVER_ENGINE_UPSTREAM_INPUT_ITEMS_H_
#define INSPECTOR_SERVER_ENGINE_UPSTREAM_INPUT_ITEMS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/engine/handshake.h"
#include "server/engine/mrtr.h"
#include "server/engine/server_requests.h"
#include "server/engine/upstream_session.h"

namespace inspector::engine {

// Why an input request is not passed on to whoever answers it: "" when it
// is; otherwise the end of a sentence, "which this client did not
// declare" (its capability is not in `features`, or `owner_answers` is
// false) or the URL-mode elicitation's refused url (CheckElicitationUrl).
std::string InputRefusal(const InputRequest& request,
                         const ClientFeatures& features, bool owner_answers);

// Whether an input request with this method waits for a person (all but
// roots/list); such items stop the caller requests' clocks.
bool InputWaitsForPerson(const std::string& method);

// The message of a refusal: the "message" of the error object
// `value_json`, or the text itself.
std::string RefusalMessage(const std::string& value_json);

class InputItems {
 public:
  // An answered item, as Take() found it.
  struct Taken {
    std::string key;     // the input request's key
    std::string method;  // "" if the registry had closed it already
    bool waits_for_person = false;
  };

  // Opens `request` in `registry` as the item `"<kind>-<number>-<key>"` (a
  // JSON string, unique in the session) and fills `ask`, moving the
  // request's params into it. False if an item with that id waits already
  // (nothing changes).
  bool Open(ServerRequests& registry, const char* kind, uint64_t number,
            InputRequest& request, absl::Time now, ServerRequest* ask);
  // Whether `id` is one of these items; if so takes it out (closing it in
  // `registry`) and says what it was.
  bool Take(ServerRequests& registry, const std::string& id, Taken* taken);
  // Closes every item still waiting in `registry`; returns their ids and
  // adds those that waited for a person to `*persons` (when not null).
  std::vector<std::string> CloseAll(ServerRequests& registry,
                                    size_t* persons = nullptr);
  bool empty() const { return pending_.empty(); }

 private:
  std::map<std::string, std::string> pending_;  // item id -> key
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_INPUT_ITEMS_H_
