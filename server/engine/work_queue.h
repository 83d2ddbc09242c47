// A few threads for work that may block (spawning or stopping a process,
// waiting for an SSE endpoint), so that gRPC threads and transport threads
// never wait on it. Thread-safe. The destructor runs what is queued, then
// joins.
#ifndef INSPECTOR_SERVER_ENGINE_WORK_QUEUE_H_
#define INSPECTOR_SERVER_ENGINE_WORK_QUEUE_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace inspector::engine {

class WorkQueue {
 public:
  explicit WorkQueue(int threads);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Post(std::function<void()> work) ABSL_LOCKS_EXCLUDED(mu_);

  // Returns once the queue is empty and no work runs (on another thread
  // than the caller's): what was posted before, and what that posted in
  // turn, has run. The owner of what the work reaches calls it before
  // taking that apart; the queue keeps serving Post() afterwards.
  void Drain() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run();

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Work items running now, and on which threads.
  std::vector<std::thread::id> running_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_WORK_QUEUE_H_
