#include "server/engine/inflight_requests.h"

#include <algorithm>
#include <utility>

namespace inspector::engine {

InflightRequests::InflightRequests(Clock* clock, TimeoutHandler on_timeout)
    : clock_(clock), on_timeout_(std::move(on_timeout)) {}

InflightRequests::~InflightRequests() { TakeAll(); }

int64_t InflightRequests::NextId() {
  absl::MutexLock lock(&mu_);
  return next_id_++;
}

void InflightRequests::Arm(int64_t id, Entry& entry) {
  if (entry.request_deadline != absl::InfiniteFuture()) {
    entry.request_timer = clock_->Schedule(
        entry.request_deadline, [this, id] { OnTimer(id, false); });
  }
  if (entry.total_deadline != absl::InfiniteFuture()) {
    entry.total_timer = clock_->Schedule(entry.total_deadline,
                                         [this, id] { OnTimer(id, true); });
  }
}

void InflightRequests::Add(int64_t id, Request request,
                           absl::Duration request_timeout,
                           absl::Duration max_total) {
  Entry entry;
  entry.request = std::move(request);
  entry.request.started = clock_->Now();
  entry.request_timeout = request_timeout;
  absl::MutexLock lock(&mu_);
  if (entry.request.pausable && paused()) {
    // The server waits for a person: the clocks start on Resume().
    entry.total_left = max_total;
  } else {
    if (request_timeout != absl::InfiniteDuration()) {
      entry.request_deadline = entry.request.started + request_timeout;
    }
    if (max_total != absl::InfiniteDuration()) {
      entry.total_deadline = entry.request.started + max_total;
    }
    Arm(id, entry);
  }
  entries_.insert_or_assign(id, std::move(entry));
}

bool InflightRequests::Take(int64_t id, Request* out) {
  Clock::TimerId request_timer, total_timer;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return false;
    *out = std::move(it->second.request);
    request_timer = it->second.request_timer;
    total_timer = it->second.total_timer;
    entries_.erase(it);
  }
  // Outside mu_: a timer that is firing takes it.
  clock_->Cancel(request_timer);
  clock_->Cancel(total_timer);
  return true;
}

std::vector<InflightRequests::Request> InflightRequests::TakeAll() {
  std::map<int64_t, Entry> entries;
  {
    absl::MutexLock lock(&mu_);
    entries.swap(entries_);
  }
  std::vector<Request> requests;
  requests.reserve(entries.size());
  for (auto& [id, entry] : entries) {
    clock_->Cancel(entry.request_timer);
    clock_->Cancel(entry.total_timer);
    requests.push_back(std::move(entry.request));
  }
  return requests;
}

int64_t InflightRequests::Newest(const std::string& caller_id) const {
  absl::MutexLock lock(&mu_);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->second.request.entry != 0 &&
        it->second.request.caller_id == caller_id) {
      return it->first;
    }
  }
  return 0;
}

void InflightRequests::Progress(const std::string& token) {
  std::vector<Clock::TimerId> replaced;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_->Now();
    for (auto& [id, entry] : entries_) {
      if (entry.request.progress_token != token) continue;
      // Paused requests have no clock running; they get a full one when
      // they resume.
      if (entry.request.pausable && paused()) continue;
      if (entry.request_timeout == absl::InfiniteDuration()) continue;
      replaced.push_back(entry.request_timer);
      entry.request_deadline = now + entry.request_timeout;
      const int64_t entry_id = id;
      entry.request_timer = clock_->Schedule(
          entry.request_deadline, [this, entry_id] { OnTimer(entry_id, false); });
    }
  }
  for (Clock::TimerId timer : replaced) clock_->Cancel(timer);
}

void InflightRequests::Pause() {
  std::vector<Clock::TimerId> stopped;
  {
    absl::MutexLock lock(&mu_);
    if (++pauses_ != 1) return;
    const absl::Time now = clock_->Now();
    for (auto& [id, entry] : entries_) {
      if (!entry.request.pausable) continue;
      if (entry.request_timer == 0 && entry.total_timer == 0) continue;
      entry.total_left =
          entry.total_deadline == absl::InfiniteFuture()
              ? absl::InfiniteDuration()
              : std::max(absl::ZeroDuration(), entry.total_deadline - now);
      entry.request_deadline = absl::InfiniteFuture();
      entry.total_deadline = absl::InfiniteFuture();
      stopped.push_back(entry.request_timer);
      stopped.push_back(entry.total_timer);
      entry.request_timer = 0;
      entry.total_timer = 0;
    }
  }
  // Outside mu_ (a firing timer takes it). One that fires meanwhile finds
  // the table paused and does nothing.
  for (Clock::TimerId timer : stopped) clock_->Cancel(timer);
}

void InflightRequests::Resume() {
  absl::MutexLock lock(&mu_);
  if (--pauses_ != 0) return;
  const absl::Time now = clock_->Now();
  for (auto& [id, entry] : entries_) {
    if (!entry.request.pausable || entry.request_timer != 0 ||
        entry.total_timer != 0) {
      continue;
    }
    entry.request_deadline = entry.request_timeout == absl::InfiniteDuration()
                                 ? absl::InfiniteFuture()
                                 : now + entry.request_timeout;
    entry.total_deadline = entry.total_left == absl::InfiniteDuration()
                               ? absl::InfiniteFuture()
                               : now + entry.total_left;
    Arm(id, entry);
  }
}

size_t InflightRequests::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

void InflightRequests::ForEach(
    const std::function<void(int64_t id, const Request& request)>& visit)
    const {
  absl::MutexLock lock(&mu_);
  for (const auto& [id, entry] : entries_) visit(id, entry.request);
}

int64_t InflightRequests::FindEntry(uint64_t entry) const {
  if (entry == 0) return 0;
  absl::MutexLock lock(&mu_);
  for (const auto& [id, e] : entries_) {
    if (e.request.entry == entry) return id;
  }
  return 0;
}

std::string InflightRequests::CallerId(int64_t id) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? std::string() : it->second.request.caller_id;
}

void InflightRequests::OnTimer(int64_t id, bool total) {
  Request request;
  Clock::TimerId request_timer, total_timer;
  // Once the entry is out, the table may be destroyed by another thread
  // (its destructor finds nothing to wait for), so what is needed after
  // that is copied first.
  Clock* clock;
  TimeoutHandler handler;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    Entry& entry = it->second;
    // Paused for a person, or a timer replaced by a later deadline.
    if (entry.request.pausable && paused()) return;
    if (clock_->Now() <
        (total ? entry.total_deadline : entry.request_deadline)) {
      return;
    }
    request = std::move(entry.request);
    request_timer = entry.request_timer;
    total_timer = entry.total_timer;
    entries_.erase(it);
    clock = clock_;
    handler = on_timeout_;
  }
  // Cancelling the timer that is running, from its own callback, is a
  // no-op; the other one is stopped (it cannot be running: a clock runs
  // one callback at a time).
  clock->Cancel(request_timer);
  clock->Cancel(total_timer);
  handler(id, std::move(request), total);
}

}  // namespace inspector::engine
