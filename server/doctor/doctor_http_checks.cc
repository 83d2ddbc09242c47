// The doctor's HTTP checks: the probes over the HTTP transports' libcurl
// loop, the status and content type, and the transport spoken (doctor_run.h).

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/errors.h"
#include "common/net/listen_address.h"
#include "common/sse_parser.h"
#include "common/transports.h"
#include "nlohmann/json.hpp"
#include "server/config/validation.h"
#include "server/engine/engine.h"
#include "server/engine/handshake.h"
#include "server/transport/http_client.h"
#include "server/doctor/doctor_run.h"

namespace inspector::doctor {
namespace {

// Content-Type without parameters, lower case ("" if none).
std::string MediaType(const HttpResponseHead& head) {
  const std::string* type = head.Find("content-type");
  if (type == nullptr) return "";
  return absl::AsciiStrToLower(
      absl::StripAsciiWhitespace(type->substr(0, type->find(';'))));
}

std::string DescribeHead(const HttpResponseHead& head) {
  std::string type;
  if (const std::string* t = head.Find("content-type")) type = *t;
  return absl::StrCat("HTTP ", head.status,
                      type.empty() ? ", no Content-Type" : ", " + type);
}

}  // namespace

HttpRequest DoctorRun::Impl::BaseRequest(const std::string& method,
                                         const std::string& url) {
  HttpRequest request;
  request.method = method;
  request.url = url;
  for (const auto& [header, value] : config_.headers()) {
    request.headers.emplace_back(header, value);
  }
  absl::Duration limit = std::min(kProbeTimeout, Left());
  request.connect_timeout = std::max(limit, absl::Milliseconds(1));
  request.timeout = request.connect_timeout;
  return request;
}

DoctorRun::Impl::Probe DoctorRun::Impl::Fetch(
    HttpRequest request, std::function<bool(const Probe&)> enough) {
  Probe probe;
  if (loop_ == nullptr) {
    auto loop = CurlLoop::Create(clock_);
    if (!loop.ok()) {
      probe.status = loop.status();
      return probe;
    }
    loop_ = *std::move(loop);
  }
  // The transfer's state, shared with the loop thread (guarded by mu_).
  struct Shared {
    Probe probe;
    SseParser parser{kMaxProbeBody};
    bool done = false;
    bool stopped_by_us = false;
    uint64_t id = 0;
  };
  auto shared = std::make_shared<Shared>();
  absl::Time began = clock_->Now();
  absl::Time until = began + request.timeout;
  HttpHandlers handlers;
  handlers.on_head = [this, shared, enough](const HttpResponseHead& head) {
    absl::MutexLock lock(&mu_);
    shared->probe.got_head = true;
    shared->probe.head = head;
    if (enough && enough(shared->probe)) {
      shared->stopped_by_us = true;
      return false;
    }
    return true;
  };
  handlers.on_body = [this, shared, enough](std::string_view chunk) {
    absl::MutexLock lock(&mu_);
    Probe& p = shared->probe;
    if (p.head.IsEventStream()) {
      std::vector<SseEvent> events;
      if (!shared->parser.Feed(chunk, &events).ok()) return false;
      for (SseEvent& e : events) p.events.push_back(std::move(e));
    }
    size_t room = kMaxProbeBody - std::min(kMaxProbeBody, p.body.size());
    p.body.append(chunk.substr(0, room));
    if ((enough && enough(p)) || p.body.size() >= kMaxProbeBody) {
      shared->stopped_by_us = true;
      return false;
    }
    return true;
  };
  handlers.on_done = [this, shared](absl::Status status) {
    absl::MutexLock lock(&mu_);
    shared->probe.status = shared->stopped_by_us ? absl::OkStatus() : status;
    shared->done = true;
  };
  CurlLoop* loop = loop_.get();
  loop->Post([this, loop, shared, request = std::move(request),
              handlers = std::move(handlers)]() mutable {
    uint64_t id = loop->StartTransfer(std::move(request), std::move(handlers));
    absl::MutexLock lock(&mu_);
    shared->id = id;
  });
  bool done = WaitFor(
      [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return shared->done; }, until);
  absl::MutexLock lock(&mu_);
  if (!done) {
    uint64_t id = shared->id;
    loop->Post([loop, id] {
      if (id != 0) loop->CancelTransfer(id);
    });
    shared->probe.status =
        cancelled_ ? absl::CancelledError("cancelled")
                   : Error(v1::CONNECTION_TIMEOUT,
                           absl::StrCat("no complete answer within ",
                                        FormatMs(until - began)));
  }
  shared->probe.elapsed = clock_->Now() - began;
  return shared->probe;
}

DoctorRun::Impl::Probe DoctorRun::Impl::PostInitialize() {
  Json initialize = {{"jsonrpc", "2.0"},
                     {"id", "inspector-doctor-probe"},
                     {"method", "initialize"},
                     {"params", engine::InitializeParams({})}};
  HttpRequest request = BaseRequest("POST", config_.url());
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("Accept", "application/json, text/event-stream");
  request.body = initialize.dump();
  Probe probe = Fetch(std::move(request), [](const Probe& p) {
    // An SSE answer: its first message is enough.
    return p.head.IsEventStream() && !p.events.empty();
  });
  if (const std::string* session = probe.head.Find("mcp-session-id");
      session != nullptr && probe.head.status / 100 == 2) {
    DeleteSession(*session);
  }
  return probe;
}

void DoctorRun::Impl::DeleteSession(const std::string& session_id) {
  HttpRequest request = BaseRequest("DELETE", config_.url());
  request.headers.emplace_back("Mcp-Session-Id", session_id);
  request.timeout = std::min(request.timeout, absl::Seconds(2));
  request.connect_timeout = request.timeout;
  Fetch(std::move(request));
}

DoctorRun::Impl::Probe DoctorRun::Impl::GetEventStream() {
  HttpRequest request = BaseRequest("GET", config_.url());
  request.headers.emplace_back("Accept", "text/event-stream");
  return Fetch(std::move(request), [](const Probe& p) {
    if (!p.got_head || p.head.status / 100 != 2 || !p.head.IsEventStream()) {
      return p.got_head;
    }
    for (const SseEvent& e : p.events) {
      if (e.event == "endpoint") return true;
    }
    return false;
  });
}

void DoctorRun::Impl::CheckHttp() {
  v1::DoctorCheck* check = Next("http", "HTTP status and content type");
  if (check == nullptr) return;
  const bool sse = config_.transport() == kTransportSse;
  Probe probe = sse ? GetEventStream() : PostInitialize();
  (sse ? sse_probe_ : post_probe_) = probe;
  const std::string what = sse ? "GET (event stream)" : "POST initialize";
  if (!probe.got_head) {
    if (FailIfOver(check)) {
      Stop("not run: the HTTP request did not finish");
      return;
    }
    Fail(check, absl::StrCat(what, ": ", probe.status.message()),
         "check that an HTTP server answers at this URL",
         ErrorReason(probe.status));
    Stop("not run: no HTTP answer");
    return;
  }
  const HttpResponseHead& head = probe.head;
  std::string found = absl::StrCat(what, ": ", DescribeHead(head));
  if (const std::string* auth = head.Find("www-authenticate")) {
    www_authenticate_ = *auth;
  }
  const int status = head.status;
  if (status == 401) {
    Fail(check,
         absl::StrCat(found, "; WWW-Authenticate: ",
                      www_authenticate_.empty() ? "(none)" : www_authenticate_),
         HasHeader("Authorization")
             ? "the configured Authorization header was refused: renew the "
               "token (see the oauth check)"
             : "the server wants credentials: see the oauth check",
         "SESSION_INVALID");
    return;
  }
  if (status / 100 == 3) {
    const std::string* location = head.Find("location");
    Fail(check,
         absl::StrCat(found, "; redirects to ",
                      location != nullptr ? *location : "(no Location)"),
         absl::StrCat("inspectord does not follow redirects: use the final "
                      "URL (",
                      UpdateHint("--url URL"), ")"),
         "TRANSPORT_ERROR");
    return;
  }
  if (status / 100 != 2) {
    // 404 and 405 may mean the other transport: the next check tells.
    if (status == 404 || status == 405 || status == 400) {
      Fail(check, found,
           "check the URL's path (often /mcp for Streamable HTTP, /sse for "
           "legacy SSE) and the transport check below",
           "TRANSPORT_ERROR");
    } else {
      Fail(check,
           absl::StrCat(found, ": ",
                        Cut(absl::StripAsciiWhitespace(probe.body), 200)),
           "the server failed the request: look at its logs",
           "TRANSPORT_ERROR");
    }
    return;
  }
  const std::string type = MediaType(head);
  if (sse) {
    if (type != "text/event-stream") {
      Fail(check, found + "; expected text/event-stream",
           "check that the URL is the server's SSE endpoint (often /sse)",
           "TRANSPORT_ERROR");
      return;
    }
    Pass(check, found);
    return;
  }
  if (type != "application/json" && type != "text/event-stream") {
    Fail(check, found + "; expected application/json or text/event-stream",
         "check that the URL is the server's MCP endpoint (often /mcp)",
         "TRANSPORT_ERROR");
    return;
  }
  if (head.Find("mcp-session-id") != nullptr) {
    absl::StrAppend(&found, "; Mcp-Session-Id assigned");
  }
  Pass(check, found);
}

void DoctorRun::Impl::CheckTransport() {
  v1::DoctorCheck* check = Next("transport", "Transport spoken");
  if (check == nullptr) return;
  auto streamable = [](const Probe& p) {
    std::string type = MediaType(p.head);
    return p.got_head && p.head.status / 100 == 2 &&
           (type == "application/json" || type == "text/event-stream");
  };
  auto endpoint = [](const Probe& p) -> const SseEvent* {
    if (!p.got_head || p.head.status / 100 != 2) return nullptr;
    for (const SseEvent& e : p.events) {
      if (e.event == "endpoint") return &e;
    }
    return nullptr;
  };
  if (!post_probe_.has_value() && !sse_probe_.has_value()) return;
  const Probe& first = post_probe_.has_value() ? *post_probe_ : *sse_probe_;
  if (first.head.status == 401) {
    Skip(check, "unknown: the server wants credentials first");
    mcp_stop_ = "not run: the server wants credentials";
    return;
  }
  if (config_.transport() == kTransportStreamableHttp) {
    if (streamable(*post_probe_)) {
      speaks_streamable_ = true;
      Pass(check, "Streamable HTTP, as configured");
      return;
    }
    sse_probe_ = GetEventStream();
    if (const SseEvent* e = endpoint(*sse_probe_)) {
      speaks_sse_ = true;
      Fail(check,
           absl::StrCat("legacy SSE (HTTP+SSE): GET answered an endpoint "
                        "event (",
                        Cut(e->data, 100),
                        "), but the server is configured as streamableHttp"),
           absl::StrCat("set the transport: ", UpdateHint("--transport sse")),
           "TRANSPORT_ERROR");
      mcp_stop_ = "not run: the configured transport is not the one spoken";
      return;
    }
    if (FailIfOver(check)) return;
    Fail(check,
         "neither Streamable HTTP (POST answered " +
             DescribeHead(post_probe_->head) +
             ") nor legacy SSE (GET gave no endpoint event)",
         "check the URL: it must be the server's MCP endpoint",
         "TRANSPORT_ERROR");
    mcp_stop_ = "not run: no MCP transport answered";
    return;
  }
  if (const SseEvent* e = endpoint(*sse_probe_)) {
    speaks_sse_ = true;
    Pass(check, absl::StrCat("legacy SSE, as configured (endpoint ",
                             Cut(e->data, 100), ")"));
    return;
  }
  post_probe_ = PostInitialize();
  if (streamable(*post_probe_)) {
    speaks_streamable_ = true;
    Fail(check,
         "Streamable HTTP: POST initialize was answered, but the server is "
         "configured as sse",
         absl::StrCat("set the transport: ",
                      UpdateHint("--transport streamableHttp")),
         "TRANSPORT_ERROR");
    mcp_stop_ = "not run: the configured transport is not the one spoken";
    return;
  }
  if (FailIfOver(check)) return;
  Fail(check,
       "no endpoint event on the event stream, and POST initialize answered " +
           DescribeHead(post_probe_->head),
       "check the URL: it must be the server's SSE endpoint (often /sse)",
       "TRANSPORT_ERROR");
  mcp_stop_ = "not run: no MCP transport answered";
}

}  // namespace inspector::doctor
