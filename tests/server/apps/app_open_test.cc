// The MCP Apps policies (server/apps/app_open.h) and the sandbox listener
// (gateway/app_sandbox.h): what an App's `_meta.ui` may open up, and that
// the listener serves a published document once and nothing else.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_cat.h"
#include "gateway/app_sandbox.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/apps/app_open.h"

namespace inspector::apps {
namespace app_open_test {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

struct SandboxAnswer {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-cased names
  std::string body;
};

// One HTTP/1.1 request to 127.0.0.1:`port` on a fresh connection, read
// until the server closes it.
SandboxAnswer Fetch(int port, const std::string& method,
                    const std::string& path,
                    const std::string& host = "127.0.0.1",
                    const std::string& extra_headers = "") {
  SandboxAnswer answer;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&address),
                        sizeof(address)) != 0) {
    ADD_FAILURE() << "cannot connect to port " << port;
    if (fd >= 0) close(fd);
    return answer;
  }
  const std::string request =
      absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: ", host,
                   "\r\nConnection: close\r\n", extra_headers, "\r\n");
  EXPECT_EQ(write(fd, request.data(), request.size()),
            static_cast<ssize_t>(request.size()));
  std::string raw;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) {
    raw.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return answer;
  answer.body = raw.substr(end + 4);
  std::vector<std::string> lines =
      absl::StrSplit(raw.substr(0, end), "\r\n");
  if (lines.empty() || lines[0].size() < 12 ||
      !absl::SimpleAtoi(lines[0].substr(9, 3), &answer.status)) {
    return answer;
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    answer.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  return answer;
}

AppPolicyContext Context() {
  AppPolicyContext context;
  context.frame_ancestors = {"http://127.0.0.1:4000"};
  context.daemon_ports = {4000, 4001};
  return context;
}

TEST(AppPoliciesTest, NothingListedMeansNothingReachable) {
  AppPolicies policies = MakeAppPolicies(json(), Context());
  const std::string& csp = policies.content_security_policy;
  EXPECT_THAT(csp, HasSubstr("default-src 'none'"));
  EXPECT_THAT(csp, HasSubstr("connect-src 'none'"));
  EXPECT_THAT(csp, HasSubstr("frame-src 'none'"));
  EXPECT_THAT(csp, HasSubstr("script-src 'unsafe-inline';"));
  EXPECT_THAT(csp, HasSubstr("frame-ancestors http://127.0.0.1:4000"));
  EXPECT_THAT(csp, HasSubstr("sandbox allow-scripts allow-forms"));
  EXPECT_THAT(csp, Not(HasSubstr("allow-same-origin")));
  EXPECT_EQ(policies.permissions_policy,
            "camera=(), microphone=(), geolocation=(), clipboard-write=()");
  EXPECT_EQ(policies.iframe_allow, "");
  EXPECT_TRUE(policies.refused.empty());
}

TEST(AppPoliciesTest, ListedDomainsGoToTheirDirectives) {
  json ui = {{"csp",
              {{"connectDomains", {"https://api.example.com", "wss://rt.example.com:8443"}},
               {"resourceDomains", {"https://*.cdn.example"}},
               {"frameDomains", {"https://www.youtube.com"}}}},
             {"permissions", {{"camera", json::object()}, {"clipboardWrite", json::object()}}}};
  AppPolicies policies = MakeAppPolicies(ui, Context());
  const std::string& csp = policies.content_security_policy;
  EXPECT_THAT(csp, HasSubstr(
      "connect-src https://api.example.com wss://rt.example.com:8443;"));
  EXPECT_THAT(csp, HasSubstr("script-src 'unsafe-inline' https://*.cdn.example;"));
  EXPECT_THAT(csp, HasSubstr("img-src data: blob: https://*.cdn.example;"));
  EXPECT_THAT(csp, HasSubstr("frame-src https://www.youtube.com;"));
  EXPECT_EQ(policies.permissions_policy,
            "camera=*, microphone=(), geolocation=(), clipboard-write=*");
  EXPECT_EQ(policies.iframe_allow, "camera; clipboard-write");
  EXPECT_EQ(policies.granted,
            json({{"csp",
                   {{"connectDomains",
                     {"https://api.example.com", "wss://rt.example.com:8443"}},
                    {"resourceDomains", {"https://*.cdn.example"}},
                    {"frameDomains", {"https://www.youtube.com"}}}},
                  {"permissions",
                   {{"camera", json::object()},
                    {"clipboardWrite", json::object()}}}}));
}

TEST(AppPoliciesTest, RefusesWhatIsNotAPlainOriginOrIsTheDaemon) {
  json ui = {{"csp",
              {{"connectDomains",
                {"*", "http:", "'unsafe-eval'", "https://a.example; script-src *",
                 "https://a.example/path", "http://127.0.0.1:*",
                 "http://127.0.0.1:4000", "http://localhost:4001", "http://[::1]:4000",
                 "http://127.0.0.1:5000", 7}}}}};
  AppPolicies policies = MakeAppPolicies(ui, Context());
  EXPECT_THAT(policies.content_security_policy,
              HasSubstr("connect-src http://127.0.0.1:5000;"));
  EXPECT_EQ(policies.refused.size(), 10u);
  for (const std::string& refused : policies.refused) {
    EXPECT_TRUE(absl::StartsWith(refused, "connectDomains: ")) << refused;
  }
}

TEST(AppSandboxTest, ServesADocumentOnceAndNothingElse) {
  auto sandbox = gateway::AppSandbox::Start("127.0.0.1:0");
  ASSERT_TRUE(sandbox.ok()) << sandbox.status();
  const int port = (*sandbox)->port();
  const std::string path = (*sandbox)->Publish(
      {"<p>hello</p>", "default-src 'none'", "camera=()"});
  EXPECT_TRUE(absl::StartsWith(path, "/app/")) << path;
  EXPECT_GE(path.size(), std::string("/app/").size() + 32);

  SandboxAnswer first = Fetch(port, "GET", path);
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, "<p>hello</p>");
  EXPECT_EQ(first.headers["content-security-policy"], "default-src 'none'");
  EXPECT_EQ(first.headers["permissions-policy"], "camera=()");
  EXPECT_EQ(first.headers["cache-control"], "no-store");
  EXPECT_EQ(Fetch(port, "GET", path).status, 404);

  const std::string other = (*sandbox)->Publish({"x", "", ""});
  EXPECT_EQ(Fetch(port, "POST", other).status, 405);
  EXPECT_EQ(Fetch(port, "GET", other, "evil.example").status, 403);
  for (const char* elsewhere :
       {"/", "/api/servers", "/ui/index.html", "/app/", "/apps/open"}) {
    EXPECT_EQ(Fetch(port, "GET", elsewhere, "127.0.0.1",
                    "X-Session-Token: t\r\nCookie: inspector_session_1=x\r\n")
                  .status,
              404)
        << elsewhere;
  }
  // Refusals did not spend the document.
  EXPECT_EQ(Fetch(port, "GET", other).body, "x");
}

TEST(AppPoliciesTest, ADedicatedOriginKeepsItsOrigin) {
  AppPolicyContext context = Context();
  context.dedicated_origin = true;
  AppPolicies policies = MakeAppPolicies(json(), context);
  EXPECT_EQ(policies.sandbox, "allow-scripts allow-forms allow-same-origin");
  EXPECT_THAT(policies.content_security_policy,
              HasSubstr("sandbox allow-scripts allow-forms allow-same-origin"));
  EXPECT_EQ(MakeAppPolicies(json(), Context()).sandbox,
            "allow-scripts allow-forms");
}

TEST(AppDomainTest, OneStableHostPerServerAndDomain) {
  absl::StatusOr<std::string> host = AppDomainHost("s1", "widgets.example.com");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_TRUE(absl::StartsWith(*host, "app-")) << *host;
  EXPECT_TRUE(absl::EndsWith(*host, ".localhost")) << *host;
  EXPECT_EQ(host->size(), std::string("app-.localhost").size() + 16);
  EXPECT_TRUE(gateway::IsAppDomainHost(*host));
  EXPECT_EQ(*AppDomainHost("s1", "widgets.example.com"), *host);
  EXPECT_EQ(*AppDomainHost("s1", "Widgets.Example.com"), *host);
  EXPECT_NE(*AppDomainHost("s2", "widgets.example.com"), *host);
  EXPECT_NE(*AppDomainHost("s1", "other.example.com"), *host);
  EXPECT_TRUE(AppDomainHost("s1", "https://widgets.example.com").ok());
  EXPECT_TRUE(AppDomainHost("s1", "a904794854a047f6.claudemcpcontent.com").ok());
  for (const json& bad :
       {json(7), json(""), json("a b"), json("x.example; script-src *"),
        json("*.example.com"), json("ftp://example.com"), json("wss://x.test"),
        json("https://x.test/path"), json("-x.test")}) {
    absl::StatusOr<std::string> refused = AppDomainHost("s1", bad);
    EXPECT_FALSE(refused.ok()) << bad.dump();
    EXPECT_TRUE(absl::StartsWith(refused.status().message(), "domain: "))
        << refused.status();
  }
  EXPECT_FALSE(gateway::IsAppDomainHost("localhost"));
  EXPECT_FALSE(gateway::IsAppDomainHost(".localhost"));
  EXPECT_FALSE(gateway::IsAppDomainHost("a.b.localhost"));
  EXPECT_FALSE(gateway::IsAppDomainHost("app-1.localhost.evil.example"));
}

TEST(AppSandboxTest, ADedicatedDocumentIsServedAtItsOwnHostOnly) {
  auto sandbox = gateway::AppSandbox::Start("127.0.0.1:0");
  ASSERT_TRUE(sandbox.ok()) << sandbox.status();
  const int port = (*sandbox)->port();
  const std::string own = absl::StrCat("app-1234.localhost:", port);
  const std::string dedicated =
      (*sandbox)->Publish({"mine", "", "", "app-1234.localhost"});
  const std::string plain = (*sandbox)->Publish({"plain", "", ""});
  EXPECT_EQ(Fetch(port, "GET", dedicated).status, 404);
  EXPECT_EQ(Fetch(port, "GET", dedicated, "app-9999.localhost").status, 404);
  EXPECT_EQ(Fetch(port, "GET", plain, own).status, 404);
  EXPECT_EQ(Fetch(port, "GET", dedicated, "app-1234.localhost.evil").status,
            403);
  EXPECT_EQ(Fetch(port, "GET", dedicated, own).body, "mine");
  EXPECT_EQ(Fetch(port, "GET", plain).body, "plain");
}

TEST(AppSandboxTest, KeepsOnlyTheNewestDocuments) {
  auto sandbox = gateway::AppSandbox::Start("127.0.0.1:0", 2);
  ASSERT_TRUE(sandbox.ok()) << sandbox.status();
  const int port = (*sandbox)->port();
  const std::string oldest = (*sandbox)->Publish({"1", "", ""});
  const std::string middle = (*sandbox)->Publish({"2", "", ""});
  const std::string newest = (*sandbox)->Publish({"3", "", ""});
  EXPECT_EQ(Fetch(port, "GET", oldest).status, 404);
  EXPECT_EQ(Fetch(port, "GET", middle).body, "2");
  EXPECT_EQ(Fetch(port, "GET", newest).body, "3");
}

}  // namespace app_open_test
}  // namespace inspector::apps
