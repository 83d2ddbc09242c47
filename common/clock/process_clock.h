// The process's real clock, for a component built without an injected one
// (EventBus, Pipeline and the HTTP transports take an optional Clock*; a
// tool or a test of another part may not pass one). It is a TimerQueue made
// at the first call, whose thread starts then, and never destroyed, so that
// it outlives every user, also at exit. The daemon passes its own clock and
// tests pass a simulated one instead.
//
// Thread-safe.
#ifndef INSPECTOR_COMMON_CLOCK_PROCESS_CLOCK_H_
#define INSPECTOR_COMMON_CLOCK_PROCESS_CLOCK_H_

#include "common/clock/clock.h"
#include "common/clock/timer_queue.h"

namespace inspector {

inline Clock* ProcessClock() {
  static TimerQueue* const clock = new TimerQueue();
  return clock;
}

// `clock`, or the process's real clock when it is null.
inline Clock* ClockOrProcess(Clock* clock) {
  return clock != nullptr ? clock : ProcessClock();
}

}  // namespace inspector

#endif  // INSPECTOR_COMMON_CLOCK_PROCESS_CLOCK_H_
