#include "server/engine/inflight_requests.h"

#include <algorithm>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace inspector::engine {

InflightRequests::InflightRequests(Clock* clock, TimeoutHandler on_timeout)
    : clock_(clock), on_timeout_(std::move(on_timeout)) {}

InflightRequests::~InflightRequests() { TakeAll(); }

int64_t InflightRequests::NextId() {
  absl::MutexLock lock(&mu_);
  return next_id_++;
}

void InflightRequests::Arm(int64_t id, Entry& entry) {
  entry.running = true;
  if (entry.request_deadline != absl::InfiniteFuture()) {
    Track(entry.request_deadline, id, false);
  }
  if (entry.total_deadline != absl::InfiniteFuture()) {
    Track(entry.total_deadline, id, true);
  }
}

void InflightRequests::Track(absl::Time due, int64_t id, bool total) {
  // Stale deadlines pile up behind a long-lived one at the top; past a
  // bound the heap is rebuilt from the live ones.
  if (deadlines_.size() >= 4 * entries_.size() + 64) {
    std::vector<Deadline> live;
    for (const Deadline& deadline : deadlines_) {
      if (Live(deadline)) live.push_back(deadline);
    }
    deadlines_.swap(live);
    std::make_heap(deadlines_.begin(), deadlines_.end(), std::greater<>());
  }
  deadlines_.push_back({due, next_order_++, id, total});
  std::push_heap(deadlines_.begin(), deadlines_.end(), std::greater<>());
  ArmSweep(due);
}

void InflightRequests::ArmSweep(absl::Time due) {
  if (!sweeps_.empty() && sweeps_.begin()->first <= due) return;
  const uint64_t number = next_order_++;
  sweeps_.emplace(
      due, std::make_pair(clock_->Schedule(
                              due, [this, due, number] { Sweep(due, number); }),
                          number));
}

bool InflightRequests::Live(const Deadline& deadline) const {
  auto it = entries_.find(deadline.id);
  if (it == entries_.end()) return false;
  const Entry& entry = it->second;
  return entry.running &&
         (deadline.total ? entry.total_deadline : entry.request_deadline) ==
             deadline.due;
}

void InflightRequests::DropStaleTop() {
  while (!deadlines_.empty() && !Live(deadlines_.front())) {
    std::pop_heap(deadlines_.begin(), deadlines_.end(), std::greater<>());
    deadlines_.pop_back();
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
  }
  auto [it, added] = entries_.insert_or_assign(id, std::move(entry));
  if (!(it->second.request.pausable && paused())) Arm(id, it->second);
}

bool InflightRequests::Take(int64_t id, Request* out) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  *out = std::move(it->second.request);
  entries_.erase(it);
  // Its deadlines stay behind, stale; those on top go now, which keeps
  // the heap small when requests end in the order they started.
  DropStaleTop();
  return true;
}

std::vector<InflightRequests::Request> InflightRequests::TakeAll() {
  std::map<int64_t, Entry> entries;
  std::map<absl::Time, std::pair<Clock::TimerId, uint64_t>> sweeps;
  {
    absl::MutexLock lock(&mu_);
    entries.swap(entries_);
    sweeps.swap(sweeps_);
    deadlines_.clear();
  }
  // Outside mu_: a sweep that is running takes it.
  for (const auto& [due, armed] : sweeps) clock_->Cancel(armed.first);
  std::vector<Request> requests;
  requests.reserve(entries.size());
  for (auto& [id, entry] : entries)
    requests.push_back(std::move(entry.request));
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
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  for (auto& [id, entry] : entries_) {
    if (entry.request.progress_token != token) continue;
    // Paused requests have no clock running; they get a full one when
    // they resume.
    if (!entry.running) continue;
    if (entry.request_timeout == absl::InfiniteDuration()) continue;
    // The old deadline turns stale.
    entry.request_deadline = now + entry.request_timeout;
    Track(entry.request_deadline, id, false);
  }
}

void InflightRequests::Pause() {
  absl::MutexLock lock(&mu_);
  if (++pauses_ != 1) return;
  const absl::Time now = clock_->Now();
  for (auto& [id, entry] : entries_) {
    if (!entry.request.pausable || !entry.running) continue;
    entry.total_left =
        entry.total_deadline == absl::InfiniteFuture()
            ? absl::InfiniteDuration()
            : std::max(absl::ZeroDuration(), entry.total_deadline - now);
    // Its deadlines turn stale; a sweep that runs meanwhile skips them.
    entry.request_deadline = absl::InfiniteFuture();
    entry.total_deadline = absl::InfiniteFuture();
    entry.running = false;
  }
}

void InflightRequests::Resume() {
  absl::MutexLock lock(&mu_);
  if (--pauses_ != 0) return;
  const absl::Time now = clock_->Now();
  for (auto& [id, entry] : entries_) {
    if (!entry.request.pausable || entry.running) continue;
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

int64_t InflightRequests::MessageId(int64_t id) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? 0 : it->second.request.message_id;
}

void InflightRequests::Sweep(absl::Time armed, uint64_t number) {
  struct Expired {
    int64_t id;
    Request request;
    bool total;
  };
  std::vector<Expired> expired;
  // Once the requests are out, the table may be destroyed by another
  // thread (TakeAll finds this sweep gone from sweeps_ and does not wait),
  // so the handler is copied first and nothing of the table is touched
  // after the lock.
  TimeoutHandler handler;
  {
    absl::MutexLock lock(&mu_);
    // Unless TakeAll took it (a later sweep may have the same time).
    if (auto it = sweeps_.find(armed);
        it != sweeps_.end() && it->second.second == number) {
      sweeps_.erase(it);
    }
    const absl::Time now = clock_->Now();
    while (!deadlines_.empty() && deadlines_.front().due <= now) {
      const Deadline deadline = deadlines_.front();
      std::pop_heap(deadlines_.begin(), deadlines_.end(), std::greater<>());
      deadlines_.pop_back();
      if (!Live(deadline)) continue;
      auto it = entries_.find(deadline.id);
      expired.push_back(
          {deadline.id, std::move(it->second.request), deadline.total});
      entries_.erase(it);
    }
    DropStaleTop();
    if (!deadlines_.empty()) ArmSweep(deadlines_.front().due);
    if (!expired.empty()) handler = on_timeout_;
  }
  for (Expired& e : expired) handler(e.id, std::move(e.request), e.total);
}

}  // namespace inspector::engine
