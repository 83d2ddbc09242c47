#include "server/config/validation.h"

#include <functional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/param_name.h"

namespace inspector::config {
namespace {

using google::protobuf::FieldMask;
using google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

v1::ServerConfig FromJson(const std::string& json) {
  v1::ServerConfig config;
  auto status = google::protobuf::util::JsonStringToMessage(json, &config);
  EXPECT_TRUE(status.ok()) << status.ToString() << " in " << json;
  return config;
}

v1::ServerConfig ValidStdio() {
  return FromJson(R"({
    "id": "3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f",
    "name": "everything",
    "transport": "stdio",
    "command": "npx",
    "args": ["-y", "@modelcontextprotocol/server-everything"],
    "env": {"DEBUG": "mcp:*"},
    "createdAt": "2024-01-15T10:00:00Z",
    "updatedAt": "2024-01-15T10:00:00Z"
  })");
}

v1::ServerConfig ValidHttp() {
  return FromJson(R"({
    "name": "remote",
    "transport": "streamableHttp",
    "url": "http://localhost:8080/mcp",
    "headers": {"Authorization": "Bearer token"}
  })");
}

// ---- NormalizeAndValidate: accepted configurations --------------------------

TEST(NormalizeAndValidateTest, AcceptsSeedExamplesAndFillsConnectionMode) {
  v1::ServerConfig stdio = ValidStdio();
  ASSERT_TRUE(NormalizeAndValidate(&stdio).ok());
  EXPECT_EQ(stdio.connection_mode(), "proxy");

  v1::ServerConfig http = ValidHttp();
  ASSERT_TRUE(NormalizeAndValidate(&http).ok());
  EXPECT_EQ(http.connection_mode(), "direct");

  v1::ServerConfig sse = FromJson(
      R"({"name": "legacy", "transport": "sse",
          "url": "http://localhost:8080/sse", "connectionMode": "proxy"})");
  ASSERT_TRUE(NormalizeAndValidate(&sse).ok());
  EXPECT_EQ(sse.connection_mode(), "proxy");
}

TEST(NormalizeAndValidateTest, TrimsNameAndClearsEmptyOptionalStrings) {
  v1::ServerConfig config = ValidStdio();
  config.set_name("  \tspaced name \n");
  config.set_cwd("");
  config.set_url("");
  config.set_connection_mode("");
  ASSERT_TRUE(NormalizeAndValidate(&config).ok());
  EXPECT_EQ(config.name(), "spaced name");
  EXPECT_FALSE(config.has_cwd());
  EXPECT_FALSE(config.has_url());
  EXPECT_EQ(config.connection_mode(), "proxy");
}

TEST(NormalizeAndValidateTest, DoesNotTouchIdOrTimestamps) {
  v1::ServerConfig config = ValidStdio();
  v1::ServerConfig before = config;
  ASSERT_TRUE(NormalizeAndValidate(&config).ok());
  EXPECT_EQ(config.id(), before.id());
  EXPECT_TRUE(
      MessageDifferencer::Equals(config.created_at(), before.created_at()));
  EXPECT_TRUE(
      MessageDifferencer::Equals(config.updated_at(), before.updated_at()));
}

TEST(NormalizeAndValidateTest, AcceptsNamesOfTheDocumentedSet) {
  for (const char* name :
       {"everything", "My Server (staging)", "brave-search", "a.b_c+d@e",
        "7", "caf\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC"}) {
    v1::ServerConfig config = ValidStdio();
    config.set_name(name);
    absl::Status status = NormalizeAndValidate(&config);
    EXPECT_TRUE(status.ok()) << name << ": " << status;
  }
}

TEST(NormalizeAndValidateTest, AcceptsUnicodeNamesAtTheLimit) {
  v1::ServerConfig config = ValidStdio();
  std::string name;
  for (int i = 0; i < 200; ++i) name += "\xC3\xA9";  // 200 x U+00E9
  config.set_name(name);
  EXPECT_TRUE(NormalizeAndValidate(&config).ok());
}

TEST(NormalizeAndValidateTest, AcceptsUrlVariants) {
  for (const char* url :
       {"https://example.com", "http://127.0.0.1:3000/mcp",
        "HTTPS://Example.COM:443/a/b?x=1&y=%20#frag", "http://[::1]:8080/mcp",
        "http://[2001:db8::1]/", "http://my_host.internal:65535/sse/"}) {
    v1::ServerConfig config = ValidHttp();
    config.set_url(url);
    absl::Status status = NormalizeAndValidate(&config);
    EXPECT_TRUE(status.ok()) << url << ": " << status;
  }
}

TEST(NormalizeAndValidateTest, AcceptsFullOAuthAndTimeouts) {
  v1::ServerConfig config = FromJson(R"({
    "name": "oauth", "transport": "streamableHttp",
    "url": "https://mcp.example.com/mcp",
    "timeouts": {"connection": 30000, "request": 60000, "maxTotal": 86400000,
                 "pingInterval": 30000, "idle": 300000,
                 "progressResetsTimeout": false},
    "oauth": {"clientId": "my-client", "clientSecret": "secret",
              "authorizationUrl": "https://auth.example.com/authorize",
              "tokenUrl": "https://auth.example.com/token",
              "scopes": ["read", "write", "mcp:tools"],
              "redirectUri": "http://127.0.0.1:6274/oauth/callback",
              "protocolVersion": "2025-06-18",
              "registrationStrategy": "preregistered"}
  })");
  absl::Status status = NormalizeAndValidate(&config);
  EXPECT_TRUE(status.ok()) << status;
}

// ---- NormalizeAndValidate: one case per rule --------------------------------

struct InvalidCase {
  std::string label;
  std::function<v1::ServerConfig()> make;
  std::string field;
  std::string message;  // a substring of the error message
};

std::vector<InvalidCase> InvalidCases() {
  auto stdio = [](std::function<void(v1::ServerConfig*)> edit) {
    return [edit] {
      v1::ServerConfig c = ValidStdio();
      edit(&c);
      return c;
    };
  };
  auto http = [](std::function<void(v1::ServerConfig*)> edit) {
    return [edit] {
      v1::ServerConfig c = ValidHttp();
      edit(&c);
      return c;
    };
  };
  auto url = [http](std::string value) {
    return http([value](v1::ServerConfig* c) { c->set_url(value); });
  };
  std::string long_name(201, 'n');
  return {
      {"name missing", stdio([](auto* c) { c->clear_name(); }), "name",
       "name: required"},
      {"name blank", stdio([](auto* c) { c->set_name("   "); }), "name",
       "name: required"},
      {"name too long", stdio([=](auto* c) { c->set_name(long_name); }), "name",
       "201 characters long; the limit is 200"},
      {"name control char", stdio([](auto* c) { c->set_name("a\x01z"); }),
       "name", "control character"},
      {"name C1 control", stdio([](auto* c) { c->set_name("a\xC2\x85z"); }),
       "name", "control character"},
      {"name bad utf8", stdio([](auto* c) { c->set_name("a\xFFz"); }), "name",
       "not valid UTF-8"},
      {"name path traversal", stdio([](auto* c) { c->set_name("x/../.."); }),
       "name", "contains '/'; a name holds letters, digits"},
      {"name dot dot", stdio([](auto* c) { c->set_name(".."); }), "name",
       "starts with '.'"},
      {"name backslash", stdio([](auto* c) { c->set_name("a\\b"); }), "name",
       "contains '\\'"},
      {"name percent", stdio([](auto* c) { c->set_name("a%2fb"); }), "name",
       "contains '%'"},
      {"name query", stdio([](auto* c) { c->set_name("a?b"); }), "name",
       "contains '?'"},
      {"name leading dash", stdio([](auto* c) { c->set_name("-rf"); }), "name",
       "starts with '-'"},
      {"name trailing dot", stdio([](auto* c) { c->set_name("srv."); }), "name",
       "ends with '.'"},
      {"name bidi override",
       stdio([](auto* c) { c->set_name("a\xE2\x80\xAE" "b"); }), "name",
       "invisible formatting character"},
      {"transport missing", stdio([](auto* c) { c->clear_transport(); }),
       "transport", "transport: required"},
      {"transport unknown", stdio([](auto* c) { c->set_transport("ws"); }),
       "transport", "'ws' is not a transport"},
      {"transport wrong case",
       stdio([](auto* c) { c->set_transport("STDIO"); }), "transport",
       "is not a transport"},
      {"stdio without command", stdio([](auto* c) { c->clear_command(); }),
       "command", "command: required for transport \"stdio\""},
      {"stdio empty command", stdio([](auto* c) { c->set_command(""); }),
       "command", "required for transport \"stdio\""},
      {"stdio blank command", stdio([](auto* c) { c->set_command("  "); }),
       "command", "must not be blank"},
      {"command with NUL",
       stdio([](auto* c) { c->set_command(std::string("np\0x", 4)); }),
       "command", "NUL"},
      {"command too long",
       stdio([](auto* c) { c->set_command(std::string(4097, 'c')); }),
       "command", "limit is 4096"},
      {"cwd with NUL",
       stdio([](auto* c) { c->set_cwd(std::string("/tmp\0", 5)); }), "cwd",
       "NUL"},
      {"stdio with url",
       stdio([](auto* c) { c->set_url("http://localhost/mcp"); }), "url",
       "not allowed for transport \"stdio\""},
      {"stdio with headers",
       stdio([](auto* c) { (*c->mutable_headers())["X"] = "y"; }), "headers",
       "not allowed for transport \"stdio\""},
      {"stdio direct", stdio([](auto* c) { c->set_connection_mode("direct"); }),
       "connectionMode", "\"direct\" is not possible"},
      {"unknown connection mode",
       stdio([](auto* c) { c->set_connection_mode("tunnel"); }),
       "connectionMode", "'tunnel' is not a connection mode"},
      {"too many args", stdio([](auto* c) {
         for (int i = 0; i < 1001; ++i) c->add_args("a");
       }),
       "args", "limit is 1000"},
      {"arg too large",
       stdio([](auto* c) { c->add_args(std::string(64 * 1024 + 1, 'a')); }),
       "args[2]", "limit is 65536"},
      {"arg with NUL",
       stdio([](auto* c) { c->set_args(1, std::string("a\0b", 3)); }),
       "args[1]", "NUL"},
      {"env empty name", stdio([](auto* c) { (*c->mutable_env())[""] = "v"; }),
       "env", "empty name"},
      {"env name with =",
       stdio([](auto* c) { (*c->mutable_env())["A=B"] = "v"; }), "env.A=B",
       "must not contain '='"},
      {"env value too large", stdio([](auto* c) {
         (*c->mutable_env())["BIG"] = std::string(64 * 1024 + 1, 'v');
       }),
       "env.BIG", "limit is 65536"},
      {"env value with NUL",
       stdio([](auto* c) { (*c->mutable_env())["Z"] = std::string("a\0", 2); }),
       "env.Z", "NUL"},
      {"too many env entries", stdio([](auto* c) {
         for (int i = 0; i < 1001; ++i) {
           (*c->mutable_env())["V" + std::to_string(i)] = "x";
         }
       }),
       "env", "limit is 1000"},
      {"http without url", http([](auto* c) { c->clear_url(); }), "url",
       "url: required for transport \"streamableHttp\""},
      {"sse without url", http([](auto* c) {
         c->set_transport("sse");
         c->clear_url();
       }),
       "url", "required for transport \"sse\""},
      {"http with command", http([](auto* c) { c->set_command("npx"); }),
       "command", "not allowed for transport \"streamableHttp\""},
      {"http with args", http([](auto* c) { c->add_args("-y"); }), "args",
       "not allowed"},
      {"http with env", http([](auto* c) { (*c->mutable_env())["A"] = "b"; }),
       "env", "not allowed"},
      {"http with cwd", http([](auto* c) { c->set_cwd("/tmp"); }), "cwd",
       "not allowed"},
      {"ftp url", url("ftp://x"), "url",
       "url: 'ftp://x' is not an http(s) URL"},
      {"relative url", url("/mcp"), "url", "is not an absolute URL"},
      {"url without host", url("http:///mcp"), "url", "has no host"},
      {"url with space", url("http://local host/"), "url", "whitespace"},
      {"url with newline", url("http://localhost/\n"), "url", "control"},
      {"url non-ascii",
       url("http://b\xC3\xBC"
           "cher.de/"),
       "url", "non-ASCII"},
      {"url with credentials", url("https://user:pw@host/"), "url",
       "user credentials"},
      {"url port zero", url("http://localhost:0/"), "url", "invalid port"},
      {"url port too big", url("http://localhost:65536/"), "url",
       "invalid port"},
      {"url port not numeric", url("http://localhost:http/"), "url",
       "invalid port"},
      {"url empty port", url("http://localhost:/"), "url", "empty port"},
      {"url bad ipv6", url("http://[::g]/"), "url", "invalid IPv6"},
      {"url unterminated ipv6", url("http://[::1/"), "url", "unterminated"},
      {"url bad host char", url("http://ex!ample.com/"), "url",
       "invalid character '!'"},
      {"url empty label", url("http://a..b/"), "url", "empty label"},
      {"url bad percent", url("http://host/%zz"), "url", "percent escape"},
      {"url backslash", url("http://host\\evil/"), "url", "backslash"},
      {"url too long", url("http://h/" + std::string(8200, 'p')), "url",
       "limit is 8192"},
      {"header name not a token",
       http([](auto* c) { (*c->mutable_headers())["Bad Header"] = "v"; }),
       "headers.Bad Header", "not a valid HTTP header name"},
      {"header empty name",
       http([](auto* c) { (*c->mutable_headers())[""] = "v"; }), "headers",
       "empty name"},
      {"header value with CRLF", http([](auto* c) {
         (*c->mutable_headers())["X-Injected"] = "a\r\nEvil: 1";
       }),
       "headers.X-Injected", "CR, LF"},
      {"header duplicate ignoring case",
       http([](auto* c) { (*c->mutable_headers())["authorization"] = "x"; }),
       "headers.authorization", "duplicates header \"Authorization\""},
      {"header content-length",
       http([](auto* c) { (*c->mutable_headers())["Content-Length"] = "1"; }),
       "headers.Content-Length", "set by the transport"},
      {"header value too large", http([](auto* c) {
         (*c->mutable_headers())["X-Big"] = std::string(64 * 1024 + 1, 'v');
       }),
       "headers.X-Big", "limit is 65536"},
      {"too many headers", http([](auto* c) {
         for (int i = 0; i < 1001; ++i) {
           (*c->mutable_headers())["X-" + std::to_string(i)] = "v";
         }
       }),
       "headers", "limit is 1000"},
      {"timeout too large",
       stdio([](auto* c) { c->mutable_timeouts()->set_request(86400001); }),
       "timeouts.request", "more than 24 hours"},
      {"max total too large", stdio([](auto* c) {
         c->mutable_timeouts()->set_max_total(4000000000u);
       }),
       "timeouts.maxTotal", "more than 24 hours"},
      {"oauth authorization url", http([](auto* c) {
         c->mutable_oauth()->set_authorization_url("javascript:alert(1)");
       }),
       "oauth.authorizationUrl", "is not an http(s) URL"},
      {"oauth token url",
       http([](auto* c) { c->mutable_oauth()->set_token_url("token"); }),
       "oauth.tokenUrl", "not an absolute URL"},
      {"oauth redirect not loopback", http([](auto* c) {
         c->mutable_oauth()->set_redirect_uri("https://evil.example/cb");
       }),
       "oauth.redirectUri", "not a loopback URL"},
      {"oauth redirect localhost lookalike", http([](auto* c) {
         c->mutable_oauth()->set_redirect_uri("http://localhost.evil.com/cb");
       }),
       "oauth.redirectUri", "not a loopback URL"},
      {"oauth scope with space",
       http([](auto* c) { c->mutable_oauth()->add_scopes("read write"); }),
       "oauth.scopes[0]", "not a valid scope"},
      {"oauth empty scope",
       http([](auto* c) { c->mutable_oauth()->add_scopes(""); }),
       "oauth.scopes[0]", "not a valid scope"},
      {"oauth protocol version", http([](auto* c) {
         c->mutable_oauth()->set_protocol_version("2024-11-05");
       }),
       "oauth.protocolVersion", "not supported"},
      {"oauth registration strategy", http([](auto* c) {
         c->mutable_oauth()->set_registration_strategy("manual");
       }),
       "oauth.registrationStrategy", "not supported"},
      {"oauth client id control char",
       http([](auto* c) { c->mutable_oauth()->set_client_id("a\nb"); }),
       "oauth.clientId", "control character"},
      {"oauth grant type", http([](auto* c) {
         c->mutable_oauth()->set_grant_type("password");
       }),
       "oauth.grantType", "not supported"},
      {"oauth token endpoint auth method", http([](auto* c) {
         c->mutable_oauth()->set_token_endpoint_auth_method("tls_client_auth");
       }),
       "oauth.tokenEndpointAuthMethod", "not supported"},
      {"oauth signing algorithm", http([](auto* c) {
         c->mutable_oauth()->set_signing_algorithm("HS256");
       }),
       "oauth.signingAlgorithm", "not supported"},
      {"oauth private key twice", http([](auto* c) {
         c->mutable_oauth()->set_private_key("-----BEGIN PRIVATE KEY-----");
         c->mutable_oauth()->set_private_key_file("/etc/key.pem");
       }),
       "oauth.privateKey", "not both"},
      {"oauth private_key_jwt without key", http([](auto* c) {
         c->mutable_oauth()->set_client_id("svc");
         c->mutable_oauth()->set_token_endpoint_auth_method("private_key_jwt");
       }),
       "oauth.privateKey", "needs the signing key"},
      {"oauth client credentials without client id", http([](auto* c) {
         c->mutable_oauth()->set_grant_type("client_credentials");
         c->mutable_oauth()->set_client_secret("s");
       }),
       "oauth.clientId", "needs a pre-registered client"},
      {"oauth client credentials without credentials", http([](auto* c) {
         c->mutable_oauth()->set_grant_type("client_credentials");
         c->mutable_oauth()->set_client_id("svc");
       }),
       "oauth.clientSecret", "needs client credentials"},
      {"oauth client_secret_post without secret", http([](auto* c) {
         c->mutable_oauth()->set_grant_type("client_credentials");
         c->mutable_oauth()->set_client_id("svc");
         c->mutable_oauth()->set_token_endpoint_auth_method("client_secret_post");
       }),
       "oauth.clientSecret", "needs oauth.clientSecret"},
      {"oauth cross-app access without IdP", http([](auto* c) {
         c->mutable_oauth()->set_grant_type("cross_app_access");
         c->mutable_oauth()->set_client_id("svc");
         c->mutable_oauth()->set_client_secret("s");
         c->mutable_oauth()->set_id_token_file("/run/id-token");
       }),
       "oauth.idpTokenUrl", "identity provider's token endpoint"},
      {"oauth cross-app access without ID token", http([](auto* c) {
         c->mutable_oauth()->set_grant_type("cross_app_access");
         c->mutable_oauth()->set_client_id("svc");
         c->mutable_oauth()->set_client_secret("s");
         c->mutable_oauth()->set_idp_token_url("https://idp.example.com/token");
       }),
       "oauth.idToken", "needs the ID token"},
      {"oauth IdP token url", http([](auto* c) {
         c->mutable_oauth()->set_idp_token_url("ftp://idp.example.com/token");
       }),
       "oauth.idpTokenUrl", "is not an http(s) URL"},
      {"oauth ID token control char",
       http([](auto* c) { c->mutable_oauth()->set_id_token("a\nb"); }),
       "oauth.idToken", "control character"},
      {"extra too large", stdio([](auto* c) {
         (*c->mutable_extra()->mutable_fields())["blob"].set_string_value(
             std::string(1024 * 1024 + 1, 'x'));
       }),
       "extra", "limit is 1048576"},
  };
}

class InvalidConfigTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidConfigTest, RefusedWithFieldAndReason) {
  const InvalidCase& c = GetParam();
  v1::ServerConfig config = c.make();
  absl::Status status = NormalizeAndValidate(&config);
  ASSERT_FALSE(status.ok()) << c.label;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG");
  auto details = GetErrorDetails(status);
  EXPECT_EQ(details["field"], c.field) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(c.message));
  // Messages start with the field they are about.
  EXPECT_THAT(std::string(status.message()), ::testing::StartsWith(c.field))
      << status;
}

INSTANTIATE_TEST_SUITE_P(Rules, InvalidConfigTest,
                         ::testing::ValuesIn(InvalidCases()),
                         inspector::testing::LabelName());

TEST(NormalizeAndValidateTest, AcceptsTheGrantExtensions) {
  v1::ServerConfig basic = FromJson(R"({
    "name": "svc", "transport": "streamableHttp",
    "url": "https://mcp.example.com/mcp",
    "oauth": {"grantType": "client_credentials", "clientId": "svc",
              "clientSecret": "s"}})");
  EXPECT_TRUE(NormalizeAndValidate(&basic).ok());
  v1::ServerConfig jwt = FromJson(R"({
    "name": "svc", "transport": "streamableHttp",
    "url": "https://mcp.example.com/mcp",
    "oauth": {"grantType": "client_credentials", "clientId": "svc",
              "tokenEndpointAuthMethod": "private_key_jwt",
              "privateKeyFile": "/etc/inspector/svc.pem",
              "signingAlgorithm": "ES256", "keyId": "k1"}})");
  absl::Status status = NormalizeAndValidate(&jwt);
  EXPECT_TRUE(status.ok()) << status;
  v1::ServerConfig xaa = FromJson(R"({
    "name": "svc", "transport": "streamableHttp",
    "url": "https://mcp.example.com/mcp",
    "oauth": {"grantType": "cross_app_access", "clientId": "svc",
              "clientSecret": "s",
              "idpTokenUrl": "https://idp.example.com/oauth2/token",
              "idpClientId": "inspector", "idTokenFile": "/run/id-token"}})");
  status = NormalizeAndValidate(&xaa);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(NormalizeAndValidateTest, ErrorMessagesDoNotEchoHeaderValues) {
  v1::ServerConfig config = ValidHttp();
  (*config.mutable_headers())["Authorization"] = "Bearer sk-secret\r\n";
  absl::Status status = NormalizeAndValidate(&config);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              ::testing::Not(HasSubstr("sk-secret")));
}

// The settings with a fixed set of values say each value they take, and
// what leaving them empty does.
TEST(NormalizeAndValidateTest, UnsupportedValuesListWhatIsSupported) {
  struct Case {
    void (*set)(v1::OAuthConfig*);
    std::string message;
  };
  const Case cases[] = {
      {[](v1::OAuthConfig* o) { o->set_grant_type("password"); },
       "oauth.grantType: 'password' is not supported; use "
       "\"authorization_code\", \"client_credentials\", "
       "\"cross_app_access\" or leave it empty"},
      {[](v1::OAuthConfig* o) {
         o->set_token_endpoint_auth_method("tls_client_auth");
       },
       "oauth.tokenEndpointAuthMethod: 'tls_client_auth' is not supported; "
       "use \"client_secret_basic\", \"client_secret_post\", "
       "\"private_key_jwt\", \"none\" or leave it empty"},
      {[](v1::OAuthConfig* o) { o->set_signing_algorithm("HS256"); },
       "oauth.signingAlgorithm: 'HS256' is not supported; use RS256, RS384, "
       "RS512, PS256, ES256, ES384, ES512 or leave it empty (from the key)"},
      {[](v1::OAuthConfig* o) { o->set_protocol_version("2024-11-05"); },
       "oauth.protocolVersion: '2024-11-05' is not supported; use "
       "\"2025-03-26\", \"2025-06-18\", \"2025-11-25\", \"2026-07-28\" "
       "or leave it empty to negotiate"},
      {[](v1::OAuthConfig* o) { o->set_registration_strategy("manual"); },
       "oauth.registrationStrategy: 'manual' is not supported; use \"dcr\", "
       "\"preregistered\", \"cimd\" or leave it empty"},
  };
  for (const Case& c : cases) {
    v1::ServerConfig config = ValidHttp();
    c.set(config.mutable_oauth());
    absl::Status status = NormalizeAndValidate(&config);
    EXPECT_EQ(std::string(status.message()), c.message);
  }
}

// ---- ParseHttpUrl
// -------------------------------------------

TEST(ParseHttpUrlTest, TakesUrlApart) {
  auto url = ParseHttpUrl("HTTPS://[::1]:8443/mcp?x=1#f");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "::1");
  EXPECT_TRUE(url->ipv6);
  EXPECT_EQ(url->port, 8443);
  EXPECT_EQ(url->path, "/mcp?x=1#f");

  url = ParseHttpUrl("http://example.com");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "example.com");
  EXPECT_EQ(url->port, 0);
  EXPECT_EQ(url->path, "");

  url = ParseHttpUrl("http://example.com?q");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->path, "?q");
}

TEST(ParseHttpUrlTest, RefusesNonHttpSchemes) {
  for (const char* bad : {"ftp://x", "file:///etc/passwd", "ws://host/",
                          "javascript:alert(1)", "mailto:a@b", "", "host:80"}) {
    EXPECT_FALSE(ParseHttpUrl(bad).ok()) << bad;
  }
}


// ---- ApplyUpdate
// ---------------------------------------------------------------

FieldMask Mask(std::vector<std::string> paths) {
  FieldMask mask;
  for (auto& p : paths) mask.add_paths(p);
  return mask;
}

TEST(ApplyUpdateTest, WithoutMaskReplacesPresentFieldsOnly) {
  v1::ServerConfig target = ValidStdio();
  target.mutable_timeouts()->set_request(1000);
  v1::ServerConfig patch;
  patch.set_name("renamed");
  patch.add_args("--verbose");
  ASSERT_TRUE(ApplyUpdate(patch, FieldMask(), &target).ok());
  EXPECT_EQ(target.name(), "renamed");
  EXPECT_THAT(target.args(), ::testing::ElementsAre("--verbose"));
  // Untouched: command, env (empty in patch), timeouts (unset in patch).
  EXPECT_EQ(target.command(), "npx");
  EXPECT_EQ(target.env().at("DEBUG"), "mcp:*");
  EXPECT_EQ(target.timeouts().request(), 1000u);
}

TEST(ApplyUpdateTest, WithoutMaskReplacesMessagesAsAWhole) {
  v1::ServerConfig target = ValidStdio();
  target.mutable_timeouts()->set_request(1000);
  target.mutable_timeouts()->set_connection(2000);
  v1::ServerConfig patch;
  patch.mutable_timeouts()->set_idle(5);
  (*patch.mutable_env())["NEW"] = "1";
  ASSERT_TRUE(ApplyUpdate(patch, FieldMask(), &target).ok());
  EXPECT_EQ(target.timeouts().idle(), 5u);
  EXPECT_EQ(target.timeouts().request(), 0u);
  EXPECT_EQ(target.env_size(), 1);
  EXPECT_EQ(target.env().at("NEW"), "1");
}

TEST(ApplyUpdateTest, NeverTouchesIdOrTimestamps) {
  v1::ServerConfig target = ValidStdio();
  v1::ServerConfig before = target;
  v1::ServerConfig patch;
  patch.set_id("other");
  patch.mutable_created_at()->set_seconds(1);
  patch.mutable_updated_at()->set_seconds(2);
  ASSERT_TRUE(ApplyUpdate(patch, FieldMask(), &target).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(target, before));
}

TEST(ApplyUpdateTest, EmptyStringClearsOptionalFieldAfterNormalization) {
  v1::ServerConfig target = ValidStdio();
  target.set_cwd("/srv");
  v1::ServerConfig patch;
  patch.set_cwd("");
  ASSERT_TRUE(ApplyUpdate(patch, FieldMask(), &target).ok());
  ASSERT_TRUE(NormalizeAndValidate(&target).ok());
  EXPECT_FALSE(target.has_cwd());
}

TEST(ApplyUpdateTest, MaskReplacesExactlyListedFieldsAndClearsAbsentOnes) {
  v1::ServerConfig target = ValidStdio();
  target.set_cwd("/srv");
  v1::ServerConfig patch;
  patch.set_name("ignored because not in the mask");
  (*patch.mutable_env())["ONLY"] = "this";
  ASSERT_TRUE(ApplyUpdate(patch, Mask({"env", "cwd", "args"}), &target).ok());
  EXPECT_EQ(target.name(), "everything");
  EXPECT_EQ(target.env_size(), 1);
  EXPECT_EQ(target.env().at("ONLY"), "this");
  EXPECT_FALSE(target.has_cwd());
  EXPECT_EQ(target.args_size(), 0);
}

TEST(ApplyUpdateTest, MaskAcceptsJsonAndProtoNames) {
  v1::ServerConfig target = ValidHttp();
  v1::ServerConfig patch;
  patch.set_connection_mode("proxy");
  ASSERT_TRUE(ApplyUpdate(patch, Mask({"connectionMode"}), &target).ok());
  EXPECT_EQ(target.connection_mode(), "proxy");
  patch.set_connection_mode("direct");
  ASSERT_TRUE(ApplyUpdate(patch, Mask({"connection_mode"}), &target).ok());
  EXPECT_EQ(target.connection_mode(), "direct");
}

TEST(ApplyUpdateTest, MaskSubFieldsOfTimeoutsOAuthAndExtra) {
  v1::ServerConfig target = ValidHttp();
  target.mutable_timeouts()->set_connection(1000);
  target.mutable_oauth()->set_client_id("id");
  target.mutable_oauth()->set_client_secret("old");
  (*target.mutable_extra()->mutable_fields())["keep"].set_bool_value(true);
  (*target.mutable_extra()->mutable_fields())["disabled"].set_bool_value(true);

  v1::ServerConfig patch;
  patch.mutable_timeouts()->set_request(5000);
  patch.mutable_oauth()->set_client_secret("new");
  ASSERT_TRUE(ApplyUpdate(patch,
                          Mask({"timeouts.request", "oauth.clientSecret",
                                "extra.disabled"}),
                          &target)
                  .ok());
  EXPECT_EQ(target.timeouts().connection(), 1000u);
  EXPECT_EQ(target.timeouts().request(), 5000u);
  EXPECT_EQ(target.oauth().client_id(), "id");
  EXPECT_EQ(target.oauth().client_secret(), "new");
  EXPECT_TRUE(target.extra().fields().contains("keep"));
  EXPECT_FALSE(target.extra().fields().contains("disabled"));

  // Clearing the last sub-field leaves no empty message behind.
  v1::ServerConfig empty;
  ASSERT_TRUE(ApplyUpdate(empty,
                          Mask({"timeouts.connection", "timeouts.request",
                                "extra.keep"}),
                          &target)
                  .ok());
  EXPECT_FALSE(target.has_timeouts());
  EXPECT_FALSE(target.has_extra());
}

TEST(ApplyUpdateTest, MaskCanClearMessages) {
  v1::ServerConfig target = ValidHttp();
  target.mutable_oauth()->set_client_id("id");
  ASSERT_TRUE(ApplyUpdate(v1::ServerConfig(), Mask({"oauth"}), &target).ok());
  EXPECT_FALSE(target.has_oauth());
}

TEST(ApplyUpdateTest, UnknownAndReadOnlyPathsAreInvalidRequests) {
  struct Bad {
    std::string path;
    std::string message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"nope", "unknown field \"nope\""},
           {"", "empty path"},
           {"id", "\"id\" cannot be updated"},
           {"createdAt", "cannot be updated"},
           {"updated_at", "cannot be updated"},
           {"timeouts.nope", "unknown field \"timeouts.nope\""},
           {"name.first",
            "only timeouts, oauth, clientCapabilities and extra have "
            "sub-fields"},
           {"extra.", "names no key"},
       }) {
    v1::ServerConfig target = ValidStdio();
    v1::ServerConfig before = target;
    v1::ServerConfig patch;
    patch.set_name("x");
    absl::Status status = ApplyUpdate(patch, Mask({"name", bad.path}), &target);
    ASSERT_FALSE(status.ok()) << bad.path;
    EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST") << bad.path;
    EXPECT_THAT(std::string(status.message()), HasSubstr(bad.message));
    EXPECT_EQ(GetErrorDetails(status)["path"], bad.path);
    // Nothing applied, not even the valid "name" path.
    EXPECT_TRUE(MessageDifferencer::Equals(target, before)) << bad.path;
  }
}

TEST(ApplyUpdateTest, SwitchTransportWithMask) {
  v1::ServerConfig target = ValidStdio();
  ASSERT_TRUE(NormalizeAndValidate(&target).ok());
  target.set_cwd("/srv");
  v1::ServerConfig patch;
  patch.set_transport("sse");
  patch.set_url("https://host.example/sse");
  ASSERT_TRUE(ApplyUpdate(patch,
                          Mask({"transport", "url", "command", "args", "env",
                                "cwd", "connectionMode"}),
                          &target)
                  .ok());
  ASSERT_TRUE(NormalizeAndValidate(&target).ok());
  EXPECT_EQ(target.transport(), "sse");
  EXPECT_EQ(target.url(), "https://host.example/sse");
  EXPECT_FALSE(target.has_command());
  EXPECT_EQ(target.args_size(), 0);
  EXPECT_EQ(target.env_size(), 0);
  EXPECT_FALSE(target.has_cwd());
  EXPECT_EQ(target.connection_mode(), "direct");
}

TEST(ApplyUpdateTest, SwitchTransportWithoutMaskClearsOldFamily) {
  v1::ServerConfig target = ValidStdio();
  ASSERT_TRUE(NormalizeAndValidate(&target).ok());
  v1::ServerConfig patch;
  patch.set_transport("sse");
  patch.set_url("https://host.example/sse");
  ASSERT_TRUE(ApplyUpdate(patch, FieldMask(), &target).ok());
  absl::Status status = NormalizeAndValidate(&target);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_FALSE(target.has_command());
  EXPECT_EQ(target.args_size(), 0);
  EXPECT_EQ(target.connection_mode(), "direct");

  // And back, keeping headers off and giving a mode explicitly.
  (*target.mutable_headers())["X-Key"] = "v";
  v1::ServerConfig back;
  back.set_transport("stdio");
  back.set_command("uvx");
  back.add_args("mcp-server-git");
  ASSERT_TRUE(ApplyUpdate(back, FieldMask(), &target).ok());
  ASSERT_TRUE(NormalizeAndValidate(&target).ok());
  EXPECT_FALSE(target.has_url());
  EXPECT_EQ(target.headers_size(), 0);
  EXPECT_EQ(target.connection_mode(), "proxy");
}

TEST(ApplyUpdateTest, SwitchBetweenHttpTransportsKeepsUrlAndHeaders) {
  v1::ServerConfig target = ValidHttp();
  ASSERT_TRUE(NormalizeAndValidate(&target).ok());
  target.set_connection_mode("proxy");
  v1::ServerConfig patch;
  patch.set_transport("sse");
  ASSERT_TRUE(ApplyUpdate(patch, FieldMask(), &target).ok());
  ASSERT_TRUE(NormalizeAndValidate(&target).ok());
  EXPECT_EQ(target.url(), "http://localhost:8080/mcp");
  EXPECT_EQ(target.headers().at("Authorization"), "Bearer token");
  EXPECT_EQ(target.connection_mode(), "proxy");
}

TEST(ApplyUpdateTest, ResultIsValidatedByTheCaller) {
  // ApplyUpdate itself does not validate: a patch that makes the config
  // invalid is caught by NormalizeAndValidate.
  v1::ServerConfig target = ValidStdio();
  v1::ServerConfig patch;
  ASSERT_TRUE(ApplyUpdate(patch, Mask({"command"}), &target).ok());
  absl::Status status = NormalizeAndValidate(&target);
  EXPECT_EQ(GetErrorDetails(status)["field"], "command");
}

TEST(RootsValidationTest, RootsMustBeFileUris) {
  v1::ServerConfig config = ValidStdio();
  config.add_roots()->set_uri("file:///home/me/project");
  config.add_roots()->set_uri("FILE:///srv");
  config.mutable_roots(1)->set_name("Server data");
  EXPECT_TRUE(NormalizeAndValidate(&config).ok());
  for (const std::string& bad :
       {std::string(""), std::string("/home/me"), std::string("https://x/"),
        std::string("file:///a b"), std::string("file:///a\nb"),
        std::string("file:///") + std::string(9000, 'a')}) {
    v1::ServerConfig c = ValidStdio();
    c.add_roots()->set_uri("file:///ok");
    c.add_roots()->set_uri(bad);
    absl::Status status = NormalizeAndValidate(&c);
    EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG") << bad;
    EXPECT_EQ(GetErrorDetails(status)["field"], "roots[1].uri") << bad;
  }
  v1::ServerConfig named = ValidStdio();
  v1::Root* root = named.add_roots();
  root->set_uri("file:///x");
  root->set_name("tab\x01");
  EXPECT_EQ(GetErrorDetails(NormalizeAndValidate(&named))["field"],
            "roots[0].name");
}

TEST(RootsValidationTest, ClientSettingsCanBeUpdatedByMask) {
  v1::ServerConfig target = ValidStdio();
  target.add_roots()->set_uri("file:///old");
  v1::ServerConfig patch;
  patch.add_roots()->set_uri("file:///new");
  patch.mutable_client_capabilities()->set_sampling(false);
  google::protobuf::FieldMask mask;
  mask.add_paths("roots");
  mask.add_paths("clientCapabilities.sampling");
  ASSERT_TRUE(ApplyUpdate(patch, mask, &target).ok());
  ASSERT_EQ(target.roots_size(), 1);
  EXPECT_EQ(target.roots(0).uri(), "file:///new");
  EXPECT_TRUE(target.client_capabilities().has_sampling());
  EXPECT_FALSE(target.client_capabilities().has_roots());
  v1::ServerConfig timeouts = ValidStdio();
  timeouts.mutable_timeouts()->set_client_request(kMaxTimeoutMs + 1);
  EXPECT_EQ(GetErrorDetails(NormalizeAndValidate(&timeouts))["field"],
            "timeouts.clientRequest");
}

TEST(NormalizeAndValidateTest, RetrySettings) {
  v1::ServerConfig ok = ValidHttp();
  ok.set_max_retries(0);
  ok.add_retry_backoff(0);
  ok.add_retryable_errors("ENOTFOUND");
  ok.add_retryable_errors("RATE_LIMITED");
  EXPECT_TRUE(NormalizeAndValidate(&ok).ok());
  v1::ServerConfig many = ValidHttp();
  many.set_max_retries(kMaxRetries + 1);
  EXPECT_EQ(GetErrorDetails(NormalizeAndValidate(&many))["field"],
            "maxRetries");
  v1::ServerConfig slow = ValidHttp();
  slow.add_retry_backoff(1000);
  slow.add_retry_backoff(kMaxTimeoutMs + 1);
  EXPECT_EQ(GetErrorDetails(NormalizeAndValidate(&slow))["field"],
            "retryBackoff[1]");
  v1::ServerConfig unknown = ValidHttp();
  unknown.add_retryable_errors("ECONNREFUSED");
  unknown.add_retryable_errors("EAGAIN");
  absl::Status status = NormalizeAndValidate(&unknown);
  EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG");
  EXPECT_EQ(GetErrorDetails(status)["field"], "retryableErrors[1]");
  EXPECT_THAT(std::string(status.message()), HasSubstr("EAGAIN"));
}

}  // namespace
}  // namespace inspector::config
