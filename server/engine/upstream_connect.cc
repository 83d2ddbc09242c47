// UpstreamSession connecting (upstream_session.h): starting the transport,
// the era probe (server/discover) and its fallback, the initialize
// handshake, relayed initialize, and pings.
#include "server/engine/upstream_session.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/strings.h"
#include "common/untrusted_input.h"
#include "nlohmann/json.hpp"
#include "server/engine/intercept_glue.h"
#include "server/engine/pending_requests.h"
#include "server/engine/upstream_session_internal.h"

namespace inspector::engine {

using nlohmann::json;

void UpstreamSession::Connect() {
  SetState(v1::CONNECTING, absl::OkStatus());
  auto self = shared_from_this();
  {
    absl::MutexLock lock(&mu_);
    connect_timer_ = clock_->After(limits_.connection_timeout, [self] {
      self->FailConnection(Error(
          v1::CONNECTION_TIMEOUT,
          absl::StrCat("Connection to server timed out after ",
                       absl::FormatDuration(self->limits_.connection_timeout)),
          {{"serverId", self->identity_.server_id},
           {"serverName", self->identity_.server_name},
           {"elapsed", absl::StrCat(absl::ToInt64Milliseconds(
                           self->limits_.connection_timeout))}}));
    });
  }
  work_->Post([self] { self->DoConnect(); });
}

void UpstreamSession::DoConnect() {
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  transport::TransportCallbacks callbacks;
  callbacks.on_message = [weak](std::string message) {
    if (auto self = weak.lock()) self->OnMessage(std::move(message));
  };
  callbacks.on_send_failed = [weak](const std::string& message,
                                    absl::Status status) {
    if (auto self = weak.lock()) self->OnSendFailed(message, std::move(status));
  };
  callbacks.on_log = [weak](std::string line) {
    if (auto self = weak.lock()) {
      self->pipeline_->Log("info", "stderr", self->identity_.server_id,
                           self->identity_.session_id, line);
    }
  };
  callbacks.on_closed = [weak](absl::Status status) {
    if (auto self = weak.lock()) self->OnClosed(std::move(status));
  };
  absl::Status started = transport_->Start(std::move(callbacks));
  if (!started.ok()) {
    FailConnection(started);
    return;
  }
  storage::SessionRecord record;
  record.id = identity_.session_id;
  record.server_id = identity_.server_id;
  record.kind = identity_.kind;
  record.transport = identity_.transport;
  pipeline_->SessionStarted(std::move(record));
  if (relay()) {
    // The client does its own handshake through Send().
    MarkConnected();
    return;
  }
  ProtocolMode mode = features_.protocol;
  if (mode != ProtocolMode::kLegacy && identity_.transport == "sse") {
    // The HTTP+SSE transport predates the stateless revision.
    absl::MutexLock lock(&mu_);
    protocol_note_ =
        "the legacy SSE transport speaks only the handshake era";
    mode = ProtocolMode::kLegacy;
  }
  if (mode == ProtocolMode::kLegacy) {
    {
      absl::MutexLock lock(&mu_);
      era_ = Era::kLegacy;
    }
    era_name_.store("legacy");
    StartInitialize();
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    era_ = Era::kProbing;
  }
  // The probe is a request of the stateless era.
  era_name_.store("modern");
  transport_->SetStateless(true);
  transport_->SetProtocolVersion(kModernProtocolVersion);
  SendDiscover(0);
}

void UpstreamSession::SendDiscover(int attempt) {
  json params = {
      {"_meta", ModernRequestMeta(features_, kModernProtocolVersion, "")}};
  // auto: a handshake-era server may stay silent on a method it does not
  // know, so the probe leaves time for initialize after it.
  absl::Duration timeout = features_.protocol == ProtocolMode::kAuto
                               ? limits_.connection_timeout / 3
                               : limits_.connection_timeout;
  auto self = shared_from_this();
  SendInternalRequest("server/discover", params.dump(), timeout,
                      [self, attempt](absl::StatusOr<std::string> response) {
                        self->OnDiscoverResult(std::move(response), attempt);
                      });
}

void UpstreamSession::OnDiscoverResult(absl::StatusOr<std::string> response,
                                       int attempt) {
  const bool auto_mode = features_.protocol == ProtocolMode::kAuto;
  if (ended()) return;
  if (!response.ok()) {
    const std::string reason = ErrorReason(response.status());
    // Failures of the connection itself are not answers about the era.
    const bool connection_failed =
        reason == "PROCESS_CRASHED" || reason == "SPAWN_FAILED" ||
        reason == "CONNECTION_REFUSED" || reason == "CONNECTION_TIMEOUT" ||
        reason == "AUTHENTICATION_FAILED" || reason == "CANCELLED";
    if (auto_mode && !connection_failed) {
      FallBackToLegacy(absl::StrCat("server/discover failed: ",
                                    response.status().message()));
      return;
    }
    FailConnection(response.status());
    return;
  }
  DiscoverOutcome outcome = ParseDiscoverResponse(*response);
  auto speaks_legacy = [&outcome] {
    for (const std::string& v : outcome.supported) {
      for (const char* ours : kProtocolVersions) {
        if (v == ours) return true;
      }
    }
    return false;
  };
  switch (outcome.kind) {
    case DiscoverOutcome::Kind::kModern: {
      {
        absl::MutexLock lock(&mu_);
        if (state_ != v1::CONNECTING) return;  // timed out or closed
        era_ = Era::kModern;
        era_name_.store("modern");
        protocol_version_ = kModernProtocolVersion;
        initialize_result_ = InitializeResultFromDiscover(outcome.result_json);
        handshake_ = std::move(outcome.status);
        if (protocol_note_.empty()) {
          protocol_note_ = absl::StrCat("server/discover: the server speaks ",
                                        kModernProtocolVersion);
        }
      }
      pipeline_->Log("info", "daemon", identity_.server_id,
                     identity_.session_id,
                     absl::StrCat(identity_.server_name, " speaks MCP ",
                                  kModernProtocolVersion,
                                  " (server/discover); no handshake"));
      MarkConnected();
      return;
    }
    case DiscoverOutcome::Kind::kUnsupportedVersion: {
      bool ours = false;
      for (const std::string& v : outcome.supported) {
        if (v == kModernProtocolVersion) ours = true;
      }
      if (ours && attempt == 0) {
        // It names our version among those it supports: select it again.
        SendDiscover(attempt + 1);
        return;
      }
      [[fallthrough]];
    }
    case DiscoverOutcome::Kind::kModernIncompatible:
      if (auto_mode && speaks_legacy()) {
        FallBackToLegacy(outcome.reason);
        return;
      }
      FailConnection(Error(v1::PROTOCOL_VERSION_MISMATCH, outcome.reason,
                           {{"serverId", identity_.server_id},
                            {"serverName", identity_.server_name},
                            {"supportedVersions",
                             absl::StrJoin(outcome.supported, ", ")}}));
      return;
    case DiscoverOutcome::Kind::kNotModern:
      if (auto_mode) {
        FallBackToLegacy(outcome.reason);
        return;
      }
      FailConnection(Error(
          v1::PROTOCOL_ERROR,
          absl::StrCat(identity_.server_name, " is not an MCP ",
                       kModernProtocolVersion,
                       " server (protocol is set to modern): ", outcome.reason),
          {{"serverId", identity_.server_id},
           {"serverName", identity_.server_name}}));
      return;
  }
}

void UpstreamSession::FallBackToLegacy(const std::string& why) {
  const std::string note = absl::StrCat(
      "server/discover found no MCP ", kModernProtocolVersion,
      " server (", why, "); fell back to the initialize handshake");
  {
    absl::MutexLock lock(&mu_);
    if (state_ != v1::CONNECTING || ended_) return;
    era_ = Era::kLegacy;
    era_name_.store("legacy");
    protocol_note_ = note;
  }
  pipeline_->Log("info", "daemon", identity_.server_id, identity_.session_id,
                 absl::StrCat(identity_.server_name, ": ", note));
  transport_->SetStateless(false);
  transport_->SetProtocolVersion("");
  StartInitialize();
}

void UpstreamSession::StartInitialize() {
  json params = InitializeParams(features_);
  auto self = shared_from_this();
  SendInternalRequest("initialize", params.dump(), limits_.connection_timeout,
                      [self](absl::StatusOr<std::string> response) {
                        self->OnInitializeResult(std::move(response));
                      });
}

void UpstreamSession::OnInitializeResult(absl::StatusOr<std::string> response) {
  if (!response.ok()) {
    FailConnection(response.status());
    return;
  }
  absl::StatusOr<InitializeOutcome> outcome = ParseInitializeResponse(
      *response, identity_.server_id, identity_.server_name);
  if (!outcome.ok()) {
    FailConnection(outcome.status());
    return;
  }
  transport_->SetProtocolVersion(outcome->protocol_version);
  {
    absl::MutexLock lock(&mu_);
    if (state_ != v1::CONNECTING) return;  // timed out or closed meanwhile
    protocol_version_ = outcome->protocol_version;
    initialize_result_ = std::move(outcome->result_json);
    handshake_ = std::move(outcome->status);
  }
  SendInternalNotification("notifications/initialized", "");
  MarkConnected();
  SchedulePing();
}

void UpstreamSession::MarkConnected() {
  Clock::TimerId connect_timer;
  // CONNECTED and taking the queue happen together, so a Send() racing
  // with this either queued before (and is flushed here) or sends itself.
  std::vector<Queued> queued;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != v1::CONNECTING) return;  // timed out or closed meanwhile
    state_ = v1::CONNECTED;
    queued.swap(queued_);
    connect_timer = connect_timer_;
    connect_timer_ = 0;
  }
  // Never cancel timers under mu_: a running timer callback may need it.
  clock_->Cancel(connect_timer);
  hooks_.on_state(v1::CONNECTING, v1::CONNECTED, absl::OkStatus());
  // The modern era's change notifications come on a listen stream.
  if (!relay() && modern()) OpenListen();
  for (Queued& q : queued) Dispatch(std::move(q));
}

void UpstreamSession::OnRelayedInitializeResult(const std::string& raw) {
  absl::StatusOr<InitializeOutcome> outcome =
      ParseInitializeResponse(raw, identity_.server_id, identity_.server_name);
  if (!outcome.ok()) return;  // the client sees the server's answer as is
  transport_->SetProtocolVersion(outcome->protocol_version);
  absl::MutexLock lock(&mu_);
  protocol_version_ = outcome->protocol_version;
  handshake_ = std::move(outcome->status);
}

void UpstreamSession::SchedulePing() {
  if (limits_.ping_interval <= absl::ZeroDuration()) return;
  // The stateless era has no ping: every request stands on its own.
  if (modern()) return;
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  absl::MutexLock lock(&mu_);
  if (state_ != v1::CONNECTED) return;
  ping_timer_ = clock_->After(limits_.ping_interval, [weak] {
    auto self = weak.lock();
    if (!self || self->state() != v1::CONNECTED) return;
    self->SendInternalRequest(
        "ping", "", self->limits_.request_timeout,
        [weak](absl::StatusOr<std::string> response) {
          auto self = weak.lock();
          if (!self) return;
          if (!response.ok() &&
              ErrorReason(response.status()) == "REQUEST_TIMEOUT") {
            self->FailConnection(Error(
                v1::TRANSPORT_ERROR, "the server stopped answering pings",
                {{"serverId", self->identity_.server_id},
                 {"serverName", self->identity_.server_name}}));
            return;
          }
          self->SchedulePing();
        });
  });
}

}  // namespace inspector::engine
