// When a Forward call may read its own answer on the thread that started it
// (see engine/inline_wait.h): only while it is the one call unanswered, and
// not while calls queue up behind such reads.
//
// One thread serves every Forward call. A call that reads its answer inline
// holds that thread until the answer comes, so a call arriving meanwhile
// waits in gRPC's queue, where it cannot be seen: it is still "alone" when
// its turn comes, and would read inline too, one call at a time. So after an
// inline read the caller tells the pacer whether the next call had already
// arrived (it waited); if so, the next calls leave their answers to the
// transport's reader: 4 calls at first, doubling up to 256 for as long as
// calls keep waiting, back to 4 once an inline read finds nothing waiting.
// (A single caller's next request sometimes arrives just as the answer
// leaves and looks as if it waited; concurrent callers' always do.)
//
// Not thread-safe: the thread that starts the calls owns it.
#ifndef INSPECTOR_SERVER_SERVICES_INLINE_READ_PACER_H_
#define INSPECTOR_SERVER_SERVICES_INLINE_READ_PACER_H_

#include <algorithm>

namespace inspector::services {

class InlineReadPacer {
 public:
  static constexpr int kMinPause = 4;
  static constexpr int kMaxPause = 256;

  // For each call about to start, in order: `waiting`, whether it was
  // already queued when the thread came back for it; `alone`, whether it is
  // the one call unanswered. Returns whether it may read its answer inline.
  bool Next(bool waiting, bool alone) {
    if (last_read_inline_) {
      if (waiting) {
        skip_ = pause_;
        pause_ = std::min(2 * pause_, kMaxPause);
      } else {
        pause_ = kMinPause;
      }
    }
    last_read_inline_ = alone && skip_ == 0;
    if (skip_ > 0) --skip_;
    return last_read_inline_;
  }

  // Whether the last call started may read inline: then the thread checks
  // its queue without blocking first, to learn whether the next call waited.
  bool last_read_inline() const { return last_read_inline_; }

 private:
  bool last_read_inline_ = false;
  int skip_ = 0;  // calls still to start without an inline read
  int pause_ = kMinPause;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_INLINE_READ_PACER_H_
