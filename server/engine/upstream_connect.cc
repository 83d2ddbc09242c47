// UpstreamConnector (upstream_connect.h): starting the transport, the era
// probe (server/discover) and its fallback, the initialize handshake,
// relayed initialize, and pings.
#include "server/engine/upstream_connect.h"

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
#include "server/engine/upstream_catalog_sync.h"
#include "server/engine/upstream_inbound.h"
#include "server/engine/upstream_listen.h"
#include "server/engine/upstream_send.h"

namespace inspector::engine {

using nlohmann::json;

void UpstreamConnector::Connect() {
  core_->session->SetState(v1::CONNECTING, absl::OkStatus());
  std::shared_ptr<UpstreamSession> self = core_->self.lock();
  {
    absl::MutexLock lock(&core_->mu);
    connect_timer_ = core_->clock->After(
        core_->limits.connection_timeout, [self, core = core_] {
          self->FailConnection(
              Error(v1::CONNECTION_TIMEOUT,
                    absl::StrCat(
                        "Connection to server timed out after ",
                        absl::FormatDuration(core->limits.connection_timeout)),
                    {{"serverId", core->identity.server_id},
                     {"serverName", core->identity.server_name},
                     {"elapsed", absl::StrCat(absl::ToInt64Milliseconds(
                                     core->limits.connection_timeout))}}));
        });
  }
  core_->work->Post([self, this] { DoConnect(); });
}

void UpstreamConnector::DoConnect() {
  std::weak_ptr<UpstreamSession> weak = core_->self;
  UpstreamCore* const core = core_;
  transport::TransportCallbacks callbacks;
  callbacks.on_message = [weak, core](std::string message) {
    if (auto self = weak.lock()) core->inbound->OnMessage(std::move(message));
  };
  callbacks.on_http_message =
      [weak, core](std::string message,
                   std::shared_ptr<const HttpExchangeRecord> http) {
        if (auto self = weak.lock()) {
          core->inbound->OnMessage(std::move(message), std::move(http));
        }
      };
  callbacks.on_send_failed = [weak, core](const std::string& message,
                                          absl::Status status) {
    if (auto self = weak.lock()) {
      core->send->OnSendFailed(message, std::move(status));
    }
  };
  callbacks.on_log = [weak, core](std::string line) {
    if (auto self = weak.lock()) {
      core->pipeline->Log("info", "stderr", core->identity.server_id,
                          core->identity.session_id, line);
    }
  };
  callbacks.on_closed = [weak](absl::Status status) {
    if (auto self = weak.lock()) self->OnClosed(std::move(status));
  };
  absl::Status started = core_->transport->Start(std::move(callbacks));
  if (!started.ok()) {
    core_->session->FailConnection(started);
    return;
  }
  storage::SessionRecord record;
  record.id = core_->identity.session_id;
  record.server_id = core_->identity.server_id;
  record.kind = core_->identity.kind;
  record.transport = core_->identity.transport;
  record.caller = core_->identity.caller;
  core_->pipeline->SessionStarted(std::move(record));
  if (core_->relay()) {
    // The client does its own handshake through Send().
    MarkConnected();
    return;
  }
  ProtocolMode mode = core_->features.protocol;
  if (mode != ProtocolMode::kLegacy && core_->identity.transport == "sse") {
    // The HTTP+SSE transport predates the stateless revision.
    absl::MutexLock lock(&core_->mu);
    protocol_note_ =
        "the legacy SSE transport speaks only the handshake era";
    mode = ProtocolMode::kLegacy;
  }
  if (mode == ProtocolMode::kLegacy) {
    {
      absl::MutexLock lock(&core_->mu);
      core_->era = SessionEra::kLegacy;
    }
    core_->era_name.store("legacy");
    StartInitialize();
    return;
  }
  {
    absl::MutexLock lock(&core_->mu);
    core_->era = SessionEra::kProbing;
  }
  // The probe is a request of the stateless era.
  core_->era_name.store("modern");
  core_->transport->SetStateless(true);
  core_->transport->SetProtocolVersion(kModernProtocolVersion);
  SendDiscover(0);
}

void UpstreamConnector::SendDiscover(int attempt) {
  // The probe goes before any caller could set a log level.
  json params = {{"_meta", ModernRequestMeta(core_->features,
                                             kModernProtocolVersion, "")}};
  // auto: a handshake-era server may stay silent on a method it does not
  // know, so the probe leaves time for initialize after it.
  absl::Duration timeout = core_->features.protocol == ProtocolMode::kAuto
                               ? core_->limits.connection_timeout / 3
                               : core_->limits.connection_timeout;
  core_->send->SendInternalRequest(
      "server/discover", params.dump(), timeout,
      [self = core_->self.lock(), this,
       attempt](absl::StatusOr<std::string> response) {
        OnDiscoverResult(std::move(response), attempt);
      });
}

void UpstreamConnector::OnDiscoverResult(absl::StatusOr<std::string> response,
                                         int attempt) {
  const bool auto_mode = core_->features.protocol == ProtocolMode::kAuto;
  if (core_->session->ended()) return;
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
    core_->session->FailConnection(response.status());
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
        absl::MutexLock lock(&core_->mu);
        if (core_->state != v1::CONNECTING) return;  // timed out or closed
        core_->era = SessionEra::kModern;
        core_->era_name.store("modern");
        protocol_version_ = kModernProtocolVersion;
        initialize_result_ = InitializeResultFromDiscover(outcome.result_json);
        handshake_ = std::move(outcome.status);
        if (protocol_note_.empty()) {
          protocol_note_ = absl::StrCat("server/discover: the server speaks ",
                                        kModernProtocolVersion);
        }
      }
      core_->pipeline->Log("info", "daemon", core_->identity.server_id,
                           core_->identity.session_id,
                           absl::StrCat(core_->identity.server_name,
                                        " speaks MCP ", kModernProtocolVersion,
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
      core_->session->FailConnection(Error(
          v1::PROTOCOL_VERSION_MISMATCH, outcome.reason,
          {{"serverId", core_->identity.server_id},
           {"serverName", core_->identity.server_name},
           {"supportedVersions", absl::StrJoin(outcome.supported, ", ")}}));
      return;
    case DiscoverOutcome::Kind::kNotModern:
      if (auto_mode) {
        FallBackToLegacy(outcome.reason);
        return;
      }
      core_->session->FailConnection(Error(
          v1::PROTOCOL_ERROR,
          absl::StrCat(core_->identity.server_name, " is not an MCP ",
                       kModernProtocolVersion,
                       " server (protocol is set to modern): ", outcome.reason),
          {{"serverId", core_->identity.server_id},
           {"serverName", core_->identity.server_name}}));
      return;
  }
}

void UpstreamConnector::FallBackToLegacy(const std::string& why) {
  const std::string note = absl::StrCat(
      "server/discover found no MCP ", kModernProtocolVersion,
      " server (", why, "); fell back to the initialize handshake");
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->state != v1::CONNECTING || core_->ended) return;
    core_->era = SessionEra::kLegacy;
    core_->era_name.store("legacy");
    protocol_note_ = note;
  }
  core_->pipeline->Log("info", "daemon", core_->identity.server_id,
                       core_->identity.session_id,
                       absl::StrCat(core_->identity.server_name, ": ", note));
  core_->transport->SetStateless(false);
  core_->transport->SetProtocolVersion("");
  StartInitialize();
}

void UpstreamConnector::StartInitialize() {
  json params = InitializeParams(core_->features);
  core_->send->SendInternalRequest(
      "initialize", params.dump(), core_->limits.connection_timeout,
      [self = core_->self.lock(), this](absl::StatusOr<std::string> response) {
        OnInitializeResult(std::move(response));
      });
}

void UpstreamConnector::OnInitializeResult(
    absl::StatusOr<std::string> response) {
  if (!response.ok()) {
    core_->session->FailConnection(response.status());
    return;
  }
  absl::StatusOr<InitializeOutcome> outcome = ParseInitializeResponse(
      *response, core_->identity.server_id, core_->identity.server_name);
  if (!outcome.ok()) {
    core_->session->FailConnection(outcome.status());
    return;
  }
  core_->transport->SetProtocolVersion(outcome->protocol_version);
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->state != v1::CONNECTING)
      return;  // timed out or closed meanwhile
    protocol_version_ = outcome->protocol_version;
    initialize_result_ = std::move(outcome->result_json);
    handshake_ = std::move(outcome->status);
  }
  core_->send->SendInternalNotification("notifications/initialized", "");
  MarkConnected();
  SchedulePing();
}

void UpstreamConnector::MarkConnected() {
  Clock::TimerId connect_timer;
  // CONNECTED and taking the queue happen together, so a Send() racing
  // with this either queued before (and is flushed here) or sends itself.
  std::vector<QueuedMessage> queued;
  // A pinned server's catalog is listed before what waited goes
  // (upstream_catalog_sync.h); a relay's lists wait for its client.
  bool sync = !core_->relay() && core_->catalog_sync->Wanted();
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->state != v1::CONNECTING)
      return;  // timed out or closed meanwhile
    core_->state = v1::CONNECTED;
    if (sync) sync = core_->catalog_sync->BeginLocked();
    if (!sync) queued = core_->send->TakeAllLocked();
    connect_timer = connect_timer_;
    connect_timer_ = 0;
  }
  // Never cancel timers under core_->mu: a running timer callback may need it.
  core_->clock->Cancel(connect_timer);
  core_->hooks.on_state(v1::CONNECTING, v1::CONNECTED, absl::OkStatus());
  // The modern era's change notifications come on a listen stream.
  if (!core_->relay() && core_->modern()) core_->listen->Open();
  if (sync) core_->catalog_sync->Start(nullptr);
  for (QueuedMessage& q : queued) core_->send->Dispatch(std::move(q));
}

void UpstreamConnector::OnRelayedInitializeResult(const std::string& raw) {
  absl::StatusOr<InitializeOutcome> outcome = ParseInitializeResponse(
      raw, core_->identity.server_id, core_->identity.server_name);
  if (!outcome.ok()) return;  // the client sees the server's answer as is
  core_->transport->SetProtocolVersion(outcome->protocol_version);
  absl::MutexLock lock(&core_->mu);
  protocol_version_ = outcome->protocol_version;
  initialize_result_ = std::move(outcome->result_json);
  handshake_ = std::move(outcome->status);
}

void UpstreamConnector::OnRelayedDiscoverResult(const std::string& raw) {
  DiscoverOutcome outcome = ParseDiscoverResponse(raw);
  if (outcome.kind != DiscoverOutcome::Kind::kModern) return;
  absl::MutexLock lock(&core_->mu);
  initialize_result_ = InitializeResultFromDiscover(outcome.result_json);
  handshake_ = std::move(outcome.status);
}

void UpstreamConnector::SchedulePing() {
  if (core_->limits.ping_interval <= absl::ZeroDuration()) return;
  // The stateless era has no ping: every request stands on its own.
  if (core_->modern()) return;
  std::weak_ptr<UpstreamSession> weak = core_->self;
  absl::MutexLock lock(&core_->mu);
  if (core_->state != v1::CONNECTED) return;
  ping_timer_ = core_->clock->After(core_->limits.ping_interval, [weak, this] {
    auto self = weak.lock();
    if (!self || self->state() != v1::CONNECTED) return;
    core_->send->SendInternalRequest(
        "ping", "", core_->limits.request_timeout,
        [weak, this](absl::StatusOr<std::string> response) {
          auto self = weak.lock();
          if (!self) return;
          if (!response.ok() &&
              ErrorReason(response.status()) == "REQUEST_TIMEOUT") {
            self->FailConnection(Error(v1::TRANSPORT_ERROR,
                                       "the server stopped answering pings",
                                       core_->ServerDetails()));
            return;
          }
          SchedulePing();
        });
  });
}

std::string UpstreamConnector::initialize_result() const {
  absl::MutexLock lock(&core_->mu);
  return initialize_result_;
}

std::string UpstreamConnector::protocol_version() const {
  absl::MutexLock lock(&core_->mu);
  return protocol_version_;
}

void UpstreamConnector::FillStatus(v1::ServerStatus* status) const {
  absl::MutexLock lock(&core_->mu);
  status->set_protocol_version(protocol_version_);
  if (handshake_.has_server_info()) {
    *status->mutable_server_info() = handshake_.server_info();
  }
  if (handshake_.has_capabilities()) {
    *status->mutable_capabilities() = handshake_.capabilities();
  }
  status->set_instructions(handshake_.instructions());
  status->set_pid(core_->transport->pid());
  switch (core_->era) {
    case SessionEra::kModern:
      status->set_protocol_era("modern");
      break;
    case SessionEra::kLegacy:
      status->set_protocol_era("legacy");
      break;
    default:
      break;
  }
  status->set_protocol_note(protocol_note_);
}

std::vector<Clock::TimerId> UpstreamConnector::TakeTimersLocked() {
  std::vector<Clock::TimerId> timers = {connect_timer_, ping_timer_};
  connect_timer_ = 0;
  ping_timer_ = 0;
  return timers;
}

}  // namespace inspector::engine
