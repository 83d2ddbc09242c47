// Whether the calling thread may wait briefly for the answer to the request
// it forwards, reading it from the server's transport itself.
//
// A gRPC handler thread may: its caller waits for that answer anyway, and
// taking it on the same thread saves two thread wake-ups per request (the
// transport's reader thread, then a gRPC thread to finish the call). An
// event loop serving many connections (the front doors) must not, so the
// permission is opt-in: a handler opens an InlineWaitScope around the call
// that forwards, and the first Engine::Forward inside it takes the
// permission (TakeInlineWait), so nothing the answer's callbacks run on this
// thread waits again.
#ifndef INSPECTOR_SERVER_ENGINE_INLINE_WAIT_H_
#define INSPECTOR_SERVER_ENGINE_INLINE_WAIT_H_

namespace inspector::engine {

class InlineWaitScope {
 public:
  InlineWaitScope();
  ~InlineWaitScope();
  InlineWaitScope(const InlineWaitScope&) = delete;
  InlineWaitScope& operator=(const InlineWaitScope&) = delete;

 private:
  bool previous_;
};

// True once per scope: the permission is used up by the caller that takes
// it.
bool TakeInlineWait();

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_INLINE_WAIT_H_
