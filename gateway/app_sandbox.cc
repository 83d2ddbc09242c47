#include "gateway/app_sandbox.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/ids.h"
#include "common/strings.h"
#include "gateway/request_policy.h"

namespace inspector::gateway {

namespace {

// A plain-text refusal; the sandbox never answers with anything an App's
// page or another site could use.
void RefuseSandboxRequest(http::HttpExchange& exchange, int status,
                          std::string message) {
  exchange.Respond(status,
                   {{"Content-Type", "text/plain; charset=utf-8"},
                    {"Cache-Control", "no-store"},
                    {"X-Content-Type-Options", "nosniff"}},
                   std::move(message));
}

// 128 random bits, hex.
std::string NewDocumentToken() {
  std::string token;
  for (char c : absl::StrCat(NewUuid(), NewUuid())) {
    if (c != '-') token.push_back(c);
  }
  return token;
}

}  // namespace

bool IsAppDomainHost(absl::string_view host) {
  constexpr absl::string_view kSuffix = ".localhost";
  if (!absl::EndsWith(host, kSuffix)) return false;
  absl::string_view label = host.substr(0, host.size() - kSuffix.size());
  if (label.empty() || label.size() > 63 || label.front() == '-' ||
      label.back() == '-') {
    return false;
  }
  for (char c : label) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::unique_ptr<AppSandbox>> AppSandbox::Start(
    const std::string& listen, size_t max_documents) {
  std::unique_ptr<AppSandbox> sandbox(new AppSandbox());
  sandbox->max_documents_ = max_documents > 0 ? max_documents : 1;
  http::HttpServerOptions options;
  options.listen = listen;
  options.max_body_bytes = 1024;
  options.max_connections = 64;
  AppSandbox* raw = sandbox.get();
  auto server = http::HttpServer::Start(
      std::move(options), [raw](std::shared_ptr<http::HttpExchange> exchange) {
        raw->Handle(std::move(exchange));
      });
  if (!server.ok()) {
    return absl::Status(
        server.status().code(),
        absl::StrCat("MCP Apps sandbox: ", server.status().message()));
  }
  sandbox->server_ = *std::move(server);
  return sandbox;
}

AppSandbox::~AppSandbox() { Shutdown(); }

int AppSandbox::port() const { return server_->port(); }

void AppSandbox::Shutdown() {
  if (server_ != nullptr) server_->Shutdown();
}

std::string AppSandbox::Publish(AppDocument document) {
  std::string token = NewDocumentToken();
  absl::MutexLock lock(&mu_);
  while (order_.size() >= max_documents_) {
    documents_.erase(order_.front());
    order_.pop_front();
  }
  documents_.emplace(token, std::move(document));
  order_.push_back(token);
  return absl::StrCat(kAppSandboxPath, token);
}

void AppSandbox::Handle(std::shared_ptr<http::HttpExchange> exchange) {
  const http::Request& request = exchange->request();
  // Loopback host names only; no listed origins: nothing here answers a
  // cross-origin call.
  static const RequestPolicy* const kPolicy =
      new RequestPolicy({}, {}, /*port=*/0);
  const std::string host_name = RequestPolicy::HostName(
      request.Header("host") != nullptr ? *request.Header("host") : "");
  const bool dedicated = IsAppDomainHost(host_name) &&
                         absl::StartsWith(request.target, "/");
  if (!dedicated &&
      !kPolicy->RequestHostAllowed(request.target, request.Header("host"))) {
    RefuseSandboxRequest(*exchange, 403,
                         "the MCP Apps sandbox answers for a loopback host "
                         "name only");
    return;
  }
  if (request.method != "GET" && request.method != "HEAD") {
    RefuseSandboxRequest(*exchange, 405, "the MCP Apps sandbox is read only");
    return;
  }
  absl::string_view path = AbslView(request.path());
  if (!absl::StartsWith(path, kAppSandboxPath)) {
    RefuseSandboxRequest(*exchange, 404, "not found");
    return;
  }
  std::string token(path.substr(absl::string_view(kAppSandboxPath).size()));
  AppDocument document;
  {
    absl::MutexLock lock(&mu_);
    auto it = documents_.find(token);
    // A document with a dedicated origin is served at that origin only,
    // and one without at none.
    if (it == documents_.end() ||
        it->second.host != (dedicated ? host_name : std::string())) {
      RefuseSandboxRequest(*exchange, 404,
                           "no such App document (each is served once)");
      return;
    }
    document = std::move(it->second);
    documents_.erase(it);
    for (auto o = order_.begin(); o != order_.end(); ++o) {
      if (*o == token) {
        order_.erase(o);
        break;
      }
    }
  }
  exchange->Respond(
      200,
      {{"Content-Type", "text/html; charset=utf-8"},
       {"Content-Security-Policy", std::move(document.content_security_policy)},
       {"Permissions-Policy", std::move(document.permissions_policy)},
       {"Cache-Control", "no-store"},
       {"X-Content-Type-Options", "nosniff"},
       {"Referrer-Policy", "no-referrer"},
       {"Cross-Origin-Opener-Policy", "same-origin"}},
      std::move(document.html));
}

}  // namespace inspector::gateway
