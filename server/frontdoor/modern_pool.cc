// ModernFront's era probe and relay pool (modern_front_impl.h): which era
// the server speaks (server/discover, once), the relays lent to requests,
// kept idle or closed, the spare kept ready, and the initialize handshake
// a handshake-era server's relays go through.

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/version.h"
#include "server/engine/engine.h"
#include "server/frontdoor/modern_front_impl.h"
#include "server/protocol/era.h"

namespace inspector::frontdoor {

void ModernFront::Impl::WithEra(std::function<void(absl::Status)> then) {
  bool probe = false;
  {
    absl::MutexLock lock(&mu_);
    if (era_ == Era::kModern || era_ == Era::kLegacy) {
      // Known: run it below.
    } else {
      era_waiters_.push_back(std::move(then));
      if (era_ == Era::kUnknown) {
        era_ = Era::kProbing;
        probe = true;
      }
      then = nullptr;
    }
  }
  if (then) return then(absl::OkStatus());
  if (probe) Probe();
}

void ModernFront::Impl::EraKnown(absl::Status status) {
  std::vector<std::function<void(absl::Status)>> waiters;
  std::shared_ptr<Pooled> spare;
  Era era;
  {
    absl::MutexLock lock(&mu_);
    waiters.swap(era_waiters_);
    spare.swap(prestarted_);
    era = era_;
  }
  for (auto& waiter : waiters) waiter(status);
  // The spare opened beside the probe gets ready the way the era asks
  // (after the waiters, which take the probe's relay first).
  if (spare != nullptr) {
    if (era == Era::kLegacy) {
      std::weak_ptr<Impl> weak_self = weak_from_this();
      Handshake(spare, [weak_self, spare](absl::Status status) {
        if (auto self = weak_self.lock()) self->SpareReady(spare, status);
      });
    } else {
      SpareReady(spare, era == Era::kModern
                            ? absl::OkStatus()
                            : absl::UnavailableError("era unknown"));
    }
  }
}

void ModernFront::Impl::SpareReady(const std::shared_ptr<Pooled>& pooled,
                                   absl::Status status) {
  {
    absl::MutexLock lock(&mu_);
    warming_ = false;
  }
  if (status.ok()) {
    ReturnRelay(pooled);
  } else {
    Discard(pooled);
  }
}

std::shared_ptr<Pooled> ModernFront::Impl::OpenPooled(absl::Status* status) {
  auto pooled = std::make_shared<Pooled>();
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      *status = absl::UnavailableError("the front door is closing");
      return nullptr;
    }
    if (open_relays_.size() >= options_.max_relays) {
      *status = absl::ResourceExhaustedError(
          "too many requests in progress; try again later");
      return nullptr;
    }
    pooled->no = next_relay_++;
    open_relays_[pooled->no] = pooled;
  }
  std::weak_ptr<Impl> weak_self = weak_from_this();
  std::weak_ptr<Pooled> weak_pooled = pooled;
  engine::RelayOptions relay_options;
  relay_options.kind = options_.kind;
  relay_options.to_client = [weak_self, weak_pooled](std::string raw) {
    auto self = weak_self.lock();
    auto pooled = weak_pooled.lock();
    if (self != nullptr && pooled != nullptr) {
      self->FromServer(pooled, std::move(raw));
    }
  };
  relay_options.on_end = [weak_self, weak_pooled](absl::Status) {
    auto self = weak_self.lock();
    auto pooled = weak_pooled.lock();
    if (self != nullptr && pooled != nullptr) self->RelayEnded(pooled);
  };
  auto relay = open_(std::move(relay_options));
  if (!relay.ok()) {
    *status = relay.status();
    absl::MutexLock lock(&mu_);
    open_relays_.erase(pooled->no);
    return nullptr;
  }
  pooled->relay = *std::move(relay);
  return pooled;
}

void ModernFront::Impl::RelayEnded(const std::shared_ptr<Pooled>& pooled) {
  absl::MutexLock lock(&mu_);
  pooled->dead = true;
  open_relays_.erase(pooled->no);
  idle_.erase(std::remove(idle_.begin(), idle_.end(), pooled), idle_.end());
}

Json ModernFront::Impl::ClientMeta() const {
  return {{kVersionKey, std::string(kModernVersions[0])},
          {kCapabilitiesKey, Json::object()},
          {"io.modelcontextprotocol/clientInfo",
           {{"name", "inspectord"}, {"version", Version()}}}};
}

void ModernFront::Impl::Probe() {
  absl::Status status;
  std::shared_ptr<Pooled> pooled = OpenPooled(&status);
  if (pooled == nullptr) {
    {
      absl::MutexLock lock(&mu_);
      era_ = Era::kUnknown;
    }
    return EraKnown(status);
  }
  // A spare starts beside the probe (a stdio server's process takes
  // most of a relay's start), so that the first request to hold its
  // relay (an input round, a long call) does not leave the next one
  // waiting for a process to start. EraKnown() finishes it.
  bool spare = false;
  {
    absl::MutexLock lock(&mu_);
    if (!warming_ && options_.max_idle_relays > 1) spare = warming_ = true;
  }
  if (spare) {
    absl::Status ignored;
    std::shared_ptr<Pooled> opened = OpenPooled(&ignored);
    absl::MutexLock lock(&mu_);
    if (opened == nullptr) {
      warming_ = false;
    } else {
      prestarted_ = std::move(opened);
    }
  }
  Json discover = {{"jsonrpc", "2.0"},
                   {"id", "inspector-discover"},
                   {"method", "server/discover"},
                   {"params", {{"_meta", ClientMeta()}}}};
  std::weak_ptr<Impl> weak_self = weak_from_this();
  pooled->relay->Send(
      Dump(discover), [weak_self, pooled](absl::StatusOr<std::string> answer) {
        auto self = weak_self.lock();
        if (self == nullptr) return;
        const bool modern =
            answer.ok() && protocol::ParseDiscoverResponse(*answer).kind ==
                               protocol::DiscoverOutcome::Kind::kModern;
        if (modern) {
          {
            absl::MutexLock lock(&self->mu_);
            self->era_ = Era::kModern;
          }
          self->ReturnRelay(pooled);
          return self->EraKnown(absl::OkStatus());
        }
        if (!answer.ok() && pooled->dead) {
          // The server went away: nothing was learned.
          {
            absl::MutexLock lock(&self->mu_);
            self->era_ = Era::kUnknown;
            self->open_relays_.erase(pooled->no);
          }
          return self->EraKnown(answer.status());
        }
        self->Handshake(pooled, [weak_self, pooled](absl::Status status) {
          auto self = weak_self.lock();
          if (self == nullptr) return;
          {
            absl::MutexLock lock(&self->mu_);
            self->era_ = status.ok() ? Era::kLegacy : Era::kUnknown;
          }
          if (status.ok()) {
            self->ReturnRelay(pooled);
          } else {
            self->Discard(pooled);
          }
          self->EraKnown(status);
        });
      });
}

void ModernFront::Impl::Handshake(const std::shared_ptr<Pooled>& pooled,
                                  std::function<void(absl::Status)> done) {
  Json initialize = {
      {"jsonrpc", "2.0"},
      {"id", "inspector-initialize"},
      {"method", "initialize"},
      {"params",
       {{"protocolVersion", kLegacyUpstreamVersion},
        {"capabilities",
         {{"elicitation", Json::object()},
          {"sampling", Json::object()},
          {"roots", Json::object()}}},
        {"clientInfo", {{"name", "inspectord"}, {"version", Version()}}}}}};
  std::weak_ptr<Impl> weak_self = weak_from_this();
  pooled->relay->Send(
      Dump(initialize), [weak_self, pooled, done = std::move(done)](
                            absl::StatusOr<std::string> answer) {
        auto self = weak_self.lock();
        if (self == nullptr) return;
        if (!answer.ok()) return done(answer.status());
        Json message = Json::parse(*answer, nullptr, false);
        if (!message.is_object() || !message.contains("result") ||
            !message["result"].is_object()) {
          std::string what = message.is_object() && message.contains("error")
                                 ? Dump(message["error"])
                                 : *answer;
          return done(absl::UnavailableError(
              absl::StrCat("the server refused initialize: ", what)));
        }
        {
          absl::MutexLock lock(&self->mu_);
          if (!self->initialize_.is_object()) {
            self->initialize_ = message["result"];
          }
        }
        pooled->relay->Send(
            R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
            [done](absl::StatusOr<std::string> sent) {
              done(sent.ok() ? absl::OkStatus() : sent.status());
            });
      });
}

void ModernFront::Impl::Borrow(const std::shared_ptr<Flow>& flow,
                               std::function<void(absl::Status)> then) {
  std::shared_ptr<Pooled> pooled;
  bool legacy;
  {
    absl::MutexLock lock(&mu_);
    legacy = era_ == Era::kLegacy;
    if (!idle_.empty()) {
      pooled = idle_.back();
      idle_.pop_back();
      lent_[pooled->no] = flow;
    }
  }
  if (pooled != nullptr) {
    flow->relay = pooled;
    then(absl::OkStatus());
    return WarmSpare();
  }
  absl::Status status;
  pooled = OpenPooled(&status);
  if (pooled == nullptr) return then(status);
  if (!legacy) {
    {
      absl::MutexLock lock(&mu_);
      lent_[pooled->no] = flow;
    }
    flow->relay = pooled;
    then(absl::OkStatus());
    return WarmSpare();
  }
  // A legacy server's relay is ready after its handshake (a stdio
  // server's process starts first). The flow takes whichever relay is
  // ready first: this one, the spare that was warming, or one another
  // flow gives back. Each relay opened for a waiting flow, once ready
  // or failed, settles the oldest waiting flow, so none is left behind.
  {
    absl::MutexLock lock(&mu_);
    waiting_.push_back({flow, std::move(then)});
  }
  std::weak_ptr<Impl> weak_self = weak_from_this();
  Handshake(pooled, [weak_self, pooled](absl::Status status) {
    auto self = weak_self.lock();
    if (self == nullptr) return;
    if (status.ok()) return self->ReturnRelay(pooled);
    self->Discard(pooled);
    self->FailOldestWaiting(status);
  });
  WarmSpare();
}

void ModernFront::Impl::FailOldestWaiting(const absl::Status& status) {
  Waiting waiting;
  {
    absl::MutexLock lock(&mu_);
    if (waiting_.empty()) return;
    waiting = std::move(waiting_.front());
    waiting_.pop_front();
  }
  waiting.then(status);
}

void ModernFront::Impl::WarmSpare() {
  bool legacy;
  {
    absl::MutexLock lock(&mu_);
    if (warming_ || closed_ || !idle_.empty() ||
        open_relays_.size() >= options_.max_relays ||
        (era_ != Era::kModern && era_ != Era::kLegacy)) {
      return;
    }
    warming_ = true;
    legacy = era_ == Era::kLegacy;
  }
  absl::Status status;
  std::shared_ptr<Pooled> pooled = OpenPooled(&status);
  if (pooled == nullptr) {
    absl::MutexLock lock(&mu_);
    warming_ = false;
    return;
  }
  std::weak_ptr<Impl> weak_self = weak_from_this();
  auto ready = [weak_self, pooled](absl::Status status) {
    if (auto self = weak_self.lock()) self->SpareReady(pooled, status);
  };
  if (legacy) return Handshake(pooled, std::move(ready));
  ready(absl::OkStatus());
}

void ModernFront::Impl::ReturnRelay(const std::shared_ptr<Pooled>& pooled) {
  bool close = false;
  Waiting waiting;
  {
    absl::MutexLock lock(&mu_);
    lent_.erase(pooled->no);
    if (pooled->dead || closed_) {
      open_relays_.erase(pooled->no);
    } else if (!waiting_.empty()) {
      waiting = std::move(waiting_.front());
      waiting_.pop_front();
      lent_[pooled->no] = waiting.flow;
    } else if (idle_.size() >= options_.max_idle_relays) {
      open_relays_.erase(pooled->no);
      close = true;
    } else {
      pooled->idle_since = options_.clock->Now();
      idle_.push_back(pooled);
    }
  }
  if (close) pooled->relay->Close();
  if (waiting.flow != nullptr) {
    waiting.flow->relay = pooled;
    waiting.then(absl::OkStatus());
  }
}

void ModernFront::Impl::Discard(const std::shared_ptr<Pooled>& pooled) {
  {
    absl::MutexLock lock(&mu_);
    lent_.erase(pooled->no);
    open_relays_.erase(pooled->no);
  }
  pooled->relay->Close();
}

}  // namespace inspector::frontdoor
