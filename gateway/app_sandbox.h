// The MCP Apps sandbox: a second loopback HTTP listener whose only job is
// to serve the HTML documents of MCP Apps (the `ui://` resources the web UI
// renders in an iframe), so that an App never runs on the web UI's origin.
// A different port is a different origin: the App cannot read the UI's
// pages, storage or API answers, and every document is served with a
// Content-Security-Policy whose `sandbox` directive gives it an opaque
// origin of its own as well.
//
// It serves nothing else: no REST API, no UI assets, no sign-in. It reads
// no cookie and no token; a document is reached only through the one-time
// path Publish() returned (128 random bits), and is forgotten once served.
// Requests for a non-loopback host name are refused (DNS rebinding).
//
// An App that asks for a dedicated origin (`_meta.ui.domain`) is published
// for a host name of its own under `localhost` ("app-<hash>.localhost",
// which browsers resolve to loopback themselves): its document is served
// only when asked for by that name, so the origin the App runs in is the
// one the daemon announced, and no other App shares it.
//
// The daemon owns it (started with the web UI's listener). Publish, origin
// and Shutdown may be called from any thread; requests are answered on the
// listener's loop thread.
#ifndef INSPECTOR_GATEWAY_APP_SANDBOX_H_
#define INSPECTOR_GATEWAY_APP_SANDBOX_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/http/http_server.h"

namespace inspector::gateway {

// The path under which the sandbox serves published documents.
inline constexpr char kAppSandboxPath[] = "/app/";

// One App document and the policy headers it is served with.
struct AppDocument {
  std::string html;
  // The Content-Security-Policy header (built by the caller from the
  // resource's `_meta.ui.csp`).
  std::string content_security_policy;
  // The Permissions-Policy header (from `_meta.ui.permissions`).
  std::string permissions_policy;
  // The dedicated host name the document must be asked for (see
  // IsAppDomainHost), or "" for the listener's own loopback names.
  std::string host;
};

// Whether `host` (lower case, no port) is a dedicated App host name: one
// DNS label of letters, digits and '-' followed by ".localhost".
bool IsAppDomainHost(absl::string_view host);

class AppSandbox {
 public:
  // Listens on `listen` ("127.0.0.1:0": a free port). At most
  // `max_documents` published documents wait to be served; publishing one
  // more forgets the oldest.
  static absl::StatusOr<std::unique_ptr<AppSandbox>> Start(
      const std::string& listen, size_t max_documents = 32);
  ~AppSandbox();
  AppSandbox(const AppSandbox&) = delete;
  AppSandbox& operator=(const AppSandbox&) = delete;

  int port() const;

  // Keeps `document` until it is fetched once; answers its path
  // ("/app/<token>"), to be joined to this listener's origin.
  std::string Publish(AppDocument document);

  // Stops listening. Idempotent; not from the loop thread.
  void Shutdown();

 private:
  AppSandbox() = default;
  void Handle(std::shared_ptr<http::HttpExchange> exchange);

  size_t max_documents_ = 32;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, AppDocument> documents_
      ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<http::HttpServer> server_;
};

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_APP_SANDBOX_H_
