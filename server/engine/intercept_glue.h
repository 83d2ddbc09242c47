// Where UpstreamSession meets the intercept stage (intercept.h): every
// caller message enters the stage in Send(), every server message in
// OnMessage(), before either is recorded; the continuations carry on with
// the session's own handling, and the session's end drops what is held.
// Kept apart from the session's parts so that their hooks stay one line
// each.
#ifndef INSPECTOR_SERVER_ENGINE_INTERCEPT_GLUE_H_
#define INSPECTOR_SERVER_ENGINE_INTERCEPT_GLUE_H_

#include <memory>
#include <string>

#include "server/engine/intercept.h"
#include "server/engine/pipeline.h"
#include "server/engine/upstream_core.h"
#include "server/engine/upstream_session.h"

namespace inspector::engine {

// What the stage did with a message it held, for its history row.
struct InterceptNote {
  std::string action;        // "forward", "modify" or "drop"
  std::string original_raw;  // with "modify": the message as received
  bool client_to_server = true;
};

// Makes `note` (may be null) the note of the next envelope of its
// direction made on this thread while the scope lives (MakeEnvelope calls
// Apply()), so that the first row a message makes carries it.
class InterceptNoteScope {
 public:
  explicit InterceptNoteScope(const InterceptNote* note);
  ~InterceptNoteScope();
  InterceptNoteScope(const InterceptNoteScope&) = delete;
  InterceptNoteScope& operator=(const InterceptNoteScope&) = delete;
  static void Apply(Envelope* envelope);

 private:
  const InterceptNote* previous_;
};

class InterceptGlue {
 public:
  // One pointer and one atomic load: whether messages must enter the
  // stage at all.
  static bool Active(const UpstreamSession& session) {
    const InterceptStage* stage = session.core_->pipeline->intercept();
    return stage != nullptr && stage->active();
  }
  static void SubmitClientMessage(std::shared_ptr<UpstreamSession> session,
                                  std::string raw, MessageInfo info,
                                  CallLimits limits,
                                  UpstreamSession::ResponseCallback done);
  static void SubmitServerMessage(std::shared_ptr<UpstreamSession> session,
                                  std::string raw, MessageInfo info);
  static void SessionEnded(UpstreamSession& session);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_INTERCEPT_GLUE_H_
