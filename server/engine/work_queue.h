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

 private:
  void Run();

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_WORK_QUEUE_H_
