#include "server/config/formats.h"

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/param_name.h"

namespace inspector::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Structural equality: key order and number formatting (1 vs 1.0) do not
// matter, everything else does.
nlohmann::json J(const std::string& text) {
  return nlohmann::json::parse(text, nullptr, true, /*ignore_comments=*/true);
}

ParsedConfigFile MustParse(const std::string& content,
                           v1::ConfigFormat format = v1::CONFIG_FORMAT_AUTO) {
  auto parsed = ParseConfigFile(content, format);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *std::move(parsed) : ParsedConfigFile();
}

std::string MustSerialize(const std::vector<v1::ServerConfig>& servers,
                          v1::ConfigFormat format,
                          const google::protobuf::Struct& file_extra =
                              google::protobuf::Struct::default_instance()) {
  auto text = SerializeConfigFile(servers, format, file_extra);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

std::map<std::string, std::string> Sorted(
    const google::protobuf::Map<std::string, std::string>& map) {
  return {map.begin(), map.end()};
}

const v1::ServerConfig* Find(const ParsedConfigFile& file,
                             const std::string& name) {
  for (const auto& s : file.servers) {
    if (s.name() == name) return &s;
  }
  ADD_FAILURE() << "no server " << name;
  static const v1::ServerConfig kEmpty;
  return &kEmpty;
}

// A realistic claude_desktop_config.json: npx, uvx and docker servers,
// secrets in env, an HTTP server with headers, an SSE server, a disabled
// flag and per-client keys the inspector does not model.
constexpr char kClaudeDesktop[] = R"({
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/alice/Desktop",
        "/Users/alice/Downloads"
      ]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN",
               "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_exampleexampleexample"}
    },
    "git": {
      "command": "uvx",
      "args": ["mcp-server-git", "--repository", "/Users/alice/src/app"],
      "disabled": true
    },
    "brave-search": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-brave-search"],
      "env": {"BRAVE_API_KEY": "BSA-example", "LOG_LEVEL": "debug"},
      "autoApprove": ["brave_web_search"],
      "timeout": 60
    },
    "weather": {
      "command": "node",
      "args": ["build/index.js"],
      "cwd": "/Users/alice/src/weather",
      "alwaysAllow": [],
      "description": "Weather from NWS",
      "retry": {"attempts": 3, "backoff": 1.5, "on": null}
    },
    "linear": {
      "type": "http",
      "url": "https://mcp.linear.app/mcp",
      "headers": {"Authorization": "Bearer lin_api_example", "X-Team": "eng"}
    },
    "playwright": {
      "type": "sse",
      "url": "http://localhost:8931/sse"
    },
    "context7": {
      "type": "streamable-http",
      "url": "https://mcp.context7.com/mcp",
      "headers": {"CONTEXT7_API_KEY": "ctx7-example"}
    }
  },
  "globalShortcut": "Ctrl+Space"
})";

constexpr char kVsCode[] = R"({
  // VS Code writes JSONC: comments and trailing commas.
  "inputs": [
    {"type": "promptString", "id": "github-token",
     "description": "GitHub Personal Access Token", "password": true},
  ],
  "servers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer ${input:github-token}"}
    },
    "playwright": {
      "type": "stdio",
      "command": "npx",
      "args": ["@playwright/mcp@latest"],
      "envFile": "${workspaceFolder}/.env"
    },
    /* a server under development */
    "memory": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "env": {"MEMORY_FILE_PATH": "${workspaceFolder}/memory.json"},
      "dev": {"watch": "src/**/*.ts", "debug": {"type": "node"}},
    },
    "legacy": {
      "type": "sse",
      "url": "http://127.0.0.1:3001/sse",
    },
  },
})";

// The seed's mcp.json example.
constexpr char kInspector[] = R"({
  "$schema": "https://inspector.modelcontextprotocol.io/schemas/mcp-config.json",
  "version": "2.0",
  "servers": [
    {
      "id": "unique-id",
      "name": "Display Name",
      "transport": "stdio",
      "command": "npx",
      "args": ["-y", "package-name"],
      "env": {
        "API_KEY": "value"
      },
      "connectionMode": "proxy",
      "timeouts": {
        "connection": 30000,
        "request": 60000
      }
    },
    {
      "id": "another-id",
      "name": "Streamable HTTP Server",
      "transport": "streamableHttp",
      "url": "http://localhost:8080/mcp",
      "headers": {
        "Authorization": "Bearer token"
      },
      "connectionMode": "direct",
      "oauth": {
        "clientId": "my-client",
        "clientSecret": "secret",
        "authorizationUrl": "https://auth.example.com/authorize",
        "tokenUrl": "https://auth.example.com/token",
        "scopes": ["read", "write"]
      },
      "createdAt": "2024-01-15T10:00:00Z",
      "updatedAt": "2024-01-16T11:30:00.250Z"
    }
  ],
  "preferences": {
    "theme": "dark",
    "defaultTransport": "streamableHttp"
  }
})";

// ---- Import
// --------------------------------------------------------------------

TEST(ParseConfigFileTest, ClaudeDesktopFile) {
  ParsedConfigFile file = MustParse(kClaudeDesktop);
  EXPECT_EQ(file.format, v1::CONFIG_FORMAT_MCP_SERVERS);
  ASSERT_EQ(file.servers.size(), 8u);
  // File order is kept.
  EXPECT_EQ(file.servers[0].name(), "filesystem");
  EXPECT_EQ(file.servers[7].name(), "context7");

  const v1::ServerConfig& fs = *Find(file, "filesystem");
  EXPECT_EQ(fs.transport(), "stdio");
  EXPECT_EQ(fs.command(), "npx");
  EXPECT_THAT(fs.args(),
              ElementsAre("-y", "@modelcontextprotocol/server-filesystem",
                          "/Users/alice/Desktop", "/Users/alice/Downloads"));
  EXPECT_EQ(fs.connection_mode(), "proxy");
  EXPECT_FALSE(fs.has_extra());

  const v1::ServerConfig& github = *Find(file, "github");
  EXPECT_EQ(github.command(), "docker");
  EXPECT_EQ(github.env().at("GITHUB_PERSONAL_ACCESS_TOKEN"),
            "ghp_exampleexampleexample");

  const v1::ServerConfig& git = *Find(file, "git");
  EXPECT_TRUE(git.extra().fields().at("disabled").bool_value());

  const v1::ServerConfig& brave = *Find(file, "brave-search");
  EXPECT_EQ(brave.extra().fields().at("timeout").number_value(), 60);
  EXPECT_EQ(brave.extra()
                .fields()
                .at("autoApprove")
                .list_value()
                .values(0)
                .string_value(),
            "brave_web_search");

  EXPECT_EQ(Find(file, "weather")->cwd(), "/Users/alice/src/weather");

  const v1::ServerConfig& linear = *Find(file, "linear");
  EXPECT_EQ(linear.transport(), "streamableHttp");
  EXPECT_EQ(linear.url(), "https://mcp.linear.app/mcp");
  EXPECT_EQ(linear.headers().at("Authorization"), "Bearer lin_api_example");
  EXPECT_EQ(linear.connection_mode(), "direct");
  // "http" is what the exporter writes anyway: nothing to remember.
  EXPECT_FALSE(linear.has_extra());

  EXPECT_EQ(Find(file, "playwright")->transport(), "sse");

  const v1::ServerConfig& context7 = *Find(file, "context7");
  EXPECT_EQ(context7.transport(), "streamableHttp");
  EXPECT_EQ(context7.extra().fields().at("type").string_value(),
            "streamable-http");

  EXPECT_EQ(file.file_extra.fields().at("globalShortcut").string_value(),
            "Ctrl+Space");
  EXPECT_FALSE(file.file_extra.fields().contains("mcpServers"));
}

TEST(ParseConfigFileTest, VsCodeFileWithCommentsAndTrailingCommas) {
  ParsedConfigFile file = MustParse(kVsCode);
  EXPECT_EQ(file.format, v1::CONFIG_FORMAT_VSCODE);
  ASSERT_EQ(file.servers.size(), 4u);
  const v1::ServerConfig& github = *Find(file, "github");
  EXPECT_EQ(github.transport(), "streamableHttp");
  EXPECT_EQ(github.headers().at("Authorization"),
            "Bearer ${input:github-token}");
  const v1::ServerConfig& playwright = *Find(file, "playwright");
  EXPECT_EQ(playwright.transport(), "stdio");
  EXPECT_EQ(playwright.extra().fields().at("envFile").string_value(),
            "${workspaceFolder}/.env");
  // "stdio" is VS Code's own spelling: not kept in extra.
  EXPECT_FALSE(playwright.extra().fields().contains("type"));
  EXPECT_EQ(Find(file, "memory")->env().at("MEMORY_FILE_PATH"),
            "${workspaceFolder}/memory.json");
  EXPECT_EQ(Find(file, "legacy")->transport(), "sse");
  EXPECT_TRUE(file.file_extra.fields().contains("inputs"));
}

TEST(ParseConfigFileTest, InspectorFile) {
  ParsedConfigFile file = MustParse(kInspector);
  EXPECT_EQ(file.format, v1::CONFIG_FORMAT_INSPECTOR);
  ASSERT_EQ(file.servers.size(), 2u);
  const v1::ServerConfig& a = file.servers[0];
  EXPECT_EQ(a.id(), "unique-id");
  EXPECT_EQ(a.name(), "Display Name");
  EXPECT_EQ(a.env().at("API_KEY"), "value");
  EXPECT_EQ(a.timeouts().connection(), 30000u);
  EXPECT_EQ(a.timeouts().request(), 60000u);
  const v1::ServerConfig& b = file.servers[1];
  EXPECT_EQ(b.transport(), "streamableHttp");
  EXPECT_EQ(b.oauth().client_id(), "my-client");
  EXPECT_THAT(b.oauth().scopes(), ElementsAre("read", "write"));
  EXPECT_EQ(b.created_at().seconds(), 1705312800);
  EXPECT_EQ(b.updated_at().nanos(), 250000000);
  EXPECT_TRUE(file.file_extra.fields().contains("$schema"));
  EXPECT_TRUE(file.file_extra.fields().contains("preferences"));
  EXPECT_FALSE(file.file_extra.fields().contains("version"));
}

TEST(ParseConfigFileTest, GrantSettingsAreReadAndAnInlineKeyIsNotWrittenBack) {
  ParsedConfigFile file = MustParse(R"({"servers": [
    {"name": "svc", "transport": "streamableHttp",
     "url": "https://mcp.example.com/mcp",
     "oauth": {"grantType": "client_credentials", "clientId": "svc",
               "tokenEndpointAuthMethod": "private_key_jwt",
               "privateKey": "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMG\n-----END PRIVATE KEY-----\n",
               "signingAlgorithm": "ES256", "keyId": "k1"}},
    {"name": "xaa", "transport": "streamableHttp",
     "url": "https://mcp.example.com/other",
     "oauth": {"grant_type": "cross_app_access", "clientId": "xaa",
               "clientSecret": "s", "idp_token_url": "https://idp.example.com/token",
               "idpClientId": "inspector", "idTokenFile": "/run/id-token"}}]})");
  ASSERT_EQ(file.servers.size(), 2u);
  const v1::OAuthConfig& a = file.servers[0].oauth();
  EXPECT_EQ(a.grant_type(), "client_credentials");
  EXPECT_EQ(a.token_endpoint_auth_method(), "private_key_jwt");
  EXPECT_THAT(a.private_key(), HasSubstr("MIGHAgEAMBMG"));
  EXPECT_EQ(a.signing_algorithm(), "ES256");
  EXPECT_EQ(a.key_id(), "k1");
  const v1::OAuthConfig& b = file.servers[1].oauth();
  EXPECT_EQ(b.grant_type(), "cross_app_access");
  EXPECT_EQ(b.idp_token_url(), "https://idp.example.com/token");
  EXPECT_EQ(b.idp_client_id(), "inspector");
  EXPECT_EQ(b.id_token_file(), "/run/id-token");

  auto written = SerializeConfigFile(file.servers, v1::CONFIG_FORMAT_INSPECTOR);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_THAT(*written, Not(HasSubstr("MIGHAgEAMBMG")));
  EXPECT_THAT(*written, Not(HasSubstr("privateKey\"")));
  EXPECT_THAT(*written, HasSubstr("\"grantType\": \"cross_app_access\""));
  EXPECT_THAT(*written, HasSubstr("\"idTokenFile\": \"/run/id-token\""));
  EXPECT_THAT(*written, HasSubstr("\"keyId\": \"k1\""));
}

TEST(ParseConfigFileTest, RetrySettingsAreReadAndWrittenBack) {
  const std::string text = R"({"servers": [{
      "name": "a", "transport": "streamableHttp", "url": "http://h/mcp",
      "maxRetries": 5, "retryBackoff": [100, 200],
      "retryableErrors": ["ETIMEDOUT", "RATE_LIMITED"]}]})";
  ParsedConfigFile file = MustParse(text);
  ASSERT_EQ(file.servers.size(), 1u);
  const v1::ServerConfig& a = file.servers[0];
  EXPECT_EQ(a.max_retries(), 5u);
  EXPECT_THAT(a.retry_backoff(), ElementsAre(100u, 200u));
  EXPECT_THAT(a.retryable_errors(), ElementsAre("ETIMEDOUT", "RATE_LIMITED"));
  EXPECT_FALSE(a.has_extra());  // known keys, not kept aside
  nlohmann::json out = nlohmann::json::parse(
      MustSerialize(file.servers, v1::CONFIG_FORMAT_INSPECTOR));
  const nlohmann::json& server = out["servers"][0];
  EXPECT_EQ(server["maxRetries"], 5);
  EXPECT_EQ(server["retryBackoff"], nlohmann::json::parse("[100, 200]"));
  EXPECT_EQ(server["retryableErrors"],
            nlohmann::json::parse(R"(["ETIMEDOUT", "RATE_LIMITED"])"));
  // maxRetries 0 is a setting of its own, not the default.
  ParsedConfigFile zero = MustParse(R"({"servers": [{
      "name": "z", "transport": "stdio", "command": "x", "maxRetries": 0}]})");
  EXPECT_TRUE(zero.servers[0].has_max_retries());
  EXPECT_EQ(nlohmann::json::parse(MustSerialize(
                zero.servers,
                v1::CONFIG_FORMAT_INSPECTOR))["servers"][0]["maxRetries"],
            0);
  EXPECT_FALSE(ParseConfigFile(R"({"servers": [{"name": "b",
      "transport": "stdio", "command": "x", "retryBackoff": "fast"}]})",
                               v1::CONFIG_FORMAT_AUTO)
                   .ok());
}

TEST(ParseConfigFileTest, InspectorFileAcceptsApiShapedExtra) {
  // GET /config output carries unmodelled keys in an "extra" object.
  ParsedConfigFile file = MustParse(R"({"servers": [{
      "name": "a", "transport": "stdio", "command": "x",
      "extra": {"disabled": true}, "description": "flat"}]})");
  ASSERT_EQ(file.servers.size(), 1u);
  EXPECT_TRUE(file.servers[0].extra().fields().at("disabled").bool_value());
  EXPECT_EQ(file.servers[0].extra().fields().at("description").string_value(),
            "flat");
}

TEST(ParseConfigFileTest, AutoDetection) {
  EXPECT_EQ(MustParse(R"({"servers": []})").format,
            v1::CONFIG_FORMAT_INSPECTOR);
  EXPECT_EQ(MustParse(R"({"mcpServers": {}})").format,
            v1::CONFIG_FORMAT_MCP_SERVERS);
  EXPECT_EQ(MustParse(R"({"servers": {}})").format, v1::CONFIG_FORMAT_VSCODE);
  // A Cursor file with extra top-level keys still counts.
  EXPECT_EQ(MustParse(R"({"theme": 1, "mcpServers": {}})").format,
            v1::CONFIG_FORMAT_MCP_SERVERS);

  auto status =
      ParseConfigFile(R"({"tools": {}, "other": 1})", v1::CONFIG_FORMAT_AUTO)
          .status();
  EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST");
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("expected a \"servers\" array"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("\"mcpServers\""));
  EXPECT_THAT(std::string(status.message()), HasSubstr("\"tools\", \"other\""));
}

TEST(ParseConfigFileTest, ExplicitFormatMustMatch) {
  auto status =
      ParseConfigFile(kClaudeDesktop, v1::CONFIG_FORMAT_VSCODE).status();
  EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST");
  EXPECT_EQ(GetErrorDetails(status)["field"], "servers");
  EXPECT_THAT(std::string(status.message()), HasSubstr("VS Code"));

  status = ParseConfigFile(kVsCode, v1::CONFIG_FORMAT_INSPECTOR).status();
  EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST");
  EXPECT_THAT(std::string(status.message()), HasSubstr("it is an object"));

  status = ParseConfigFile(kVsCode, v1::CONFIG_FORMAT_MCP_SERVERS).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("it is missing"));
}

TEST(ParseConfigFileTest, UrlTransportDetection) {
  ParsedConfigFile file = MustParse(R"({"mcpServers": {
      "a": {"url": "https://host/mcp"},
      "b": {"url": "https://host/sse"},
      "c": {"url": "https://host/v1/sse/?key=1"},
      "d": {"url": "https://host/ssevents"},
      "e": {"type": "streamableHttp", "url": "https://host/sse"},
      "f": {"type": "stdio", "command": "x"}}})");
  EXPECT_EQ(Find(file, "a")->transport(), "streamableHttp");
  EXPECT_EQ(Find(file, "b")->transport(), "sse");
  EXPECT_EQ(Find(file, "c")->transport(), "sse");
  EXPECT_EQ(Find(file, "d")->transport(), "streamableHttp");
  EXPECT_EQ(Find(file, "e")->transport(), "streamableHttp");
  EXPECT_EQ(Find(file, "e")->extra().fields().at("type").string_value(),
            "streamableHttp");
  EXPECT_EQ(Find(file, "f")->extra().fields().at("type").string_value(),
            "stdio");
}

// ---- Round trips
// ---------------------------------------------------------------

TEST(RoundTripTest, ClaudeDesktopFileIsJsonEqual) {
  ParsedConfigFile file = MustParse(kClaudeDesktop);
  std::string out = MustSerialize(file.servers, v1::CONFIG_FORMAT_MCP_SERVERS,
                                  file.file_extra);
  EXPECT_EQ(J(out), J(kClaudeDesktop)) << out;

  // Without the top-level extras only the servers come back.
  nlohmann::json expected = J(kClaudeDesktop);
  expected.erase("globalShortcut");
  EXPECT_EQ(J(MustSerialize(file.servers, v1::CONFIG_FORMAT_MCP_SERVERS)),
            expected);
}

TEST(RoundTripTest, ClaudeFileSurvivesTheDaemonsOwnProtoJson) {
  // What the daemon stores and returns is the proto; going through its JSON
  // form (as REST does) loses nothing either.
  ParsedConfigFile file = MustParse(kClaudeDesktop);
  std::vector<v1::ServerConfig> reloaded;
  for (const auto& s : file.servers) {
    std::string json;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(s, &json).ok());
    v1::ServerConfig back;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &back).ok());
    reloaded.push_back(back);
  }
  nlohmann::json expected = J(kClaudeDesktop);
  expected.erase("globalShortcut");
  EXPECT_EQ(J(MustSerialize(reloaded, v1::CONFIG_FORMAT_MCP_SERVERS)),
            expected);
}

TEST(RoundTripTest, VsCodeFileIsJsonEqual) {
  ParsedConfigFile file = MustParse(kVsCode);
  std::string out =
      MustSerialize(file.servers, v1::CONFIG_FORMAT_VSCODE, file.file_extra);
  // The comparison parser takes comments but not trailing commas.
  std::string strict = std::regex_replace(std::string(kVsCode),
                                          std::regex(",(\\s*[}\\]])"), "$1");
  EXPECT_EQ(J(out), J(strict)) << out;
}

TEST(RoundTripTest, InspectorFileIsJsonEqual) {
  ParsedConfigFile file = MustParse(kInspector);
  std::string out =
      MustSerialize(file.servers, v1::CONFIG_FORMAT_INSPECTOR, file.file_extra);
  EXPECT_EQ(J(out), J(kInspector)) << out;
}

TEST(RoundTripTest, InspectorToClaudeToInspectorKeepsWhatMatters) {
  ParsedConfigFile original = MustParse(kInspector);
  std::string claude =
      MustSerialize(original.servers, v1::CONFIG_FORMAT_MCP_SERVERS);
  ParsedConfigFile via = MustParse(claude);
  EXPECT_EQ(via.format, v1::CONFIG_FORMAT_MCP_SERVERS);
  ASSERT_EQ(via.servers.size(), original.servers.size());
  for (size_t i = 0; i < original.servers.size(); ++i) {
    const v1::ServerConfig& a = original.servers[i];
    const v1::ServerConfig& b = via.servers[i];
    EXPECT_EQ(a.name(), b.name());
    EXPECT_EQ(a.transport(), b.transport());
    EXPECT_EQ(a.command(), b.command());
    EXPECT_THAT(b.args(), ::testing::ElementsAreArray(a.args()));
    EXPECT_EQ(Sorted(a.env()), Sorted(b.env()));
    EXPECT_EQ(a.url(), b.url());
    EXPECT_EQ(Sorted(a.headers()), Sorted(b.headers()));
  }
  // Back to mcp.json: inspector-only settings (ids, timeouts, oauth) are not
  // part of a Claude file, everything else is.
  std::string again = MustSerialize(via.servers, v1::CONFIG_FORMAT_INSPECTOR);
  nlohmann::json expected = J(kInspector);
  for (auto& server : expected["servers"]) {
    for (const char* key :
         {"id", "timeouts", "oauth", "createdAt", "updatedAt"}) {
      server.erase(key);
    }
  }
  expected.erase("preferences");
  EXPECT_EQ(J(again), expected) << again;
}

TEST(RoundTripTest, ClaudeExtrasSurviveAnInspectorFile) {
  ParsedConfigFile file = MustParse(kClaudeDesktop);
  std::string inspector =
      MustSerialize(file.servers, v1::CONFIG_FORMAT_INSPECTOR);
  // Extras are written flat, next to the modelled keys.
  nlohmann::json doc = J(inspector);
  EXPECT_EQ(doc["servers"][2]["disabled"], true);
  ParsedConfigFile via = MustParse(inspector);
  nlohmann::json expected = J(kClaudeDesktop);
  expected.erase("globalShortcut");
  EXPECT_EQ(J(MustSerialize(via.servers, v1::CONFIG_FORMAT_MCP_SERVERS)),
            expected);
}

TEST(RoundTripTest, UntypedUrlServersGainAType) {
  ParsedConfigFile file = MustParse(
      R"({"mcpServers": {"a": {"url": "https://h/mcp"},
                         "b": {"url": "https://h/sse"}}})");
  EXPECT_EQ(J(MustSerialize(file.servers, v1::CONFIG_FORMAT_MCP_SERVERS)),
            J(R"({"mcpServers": {
                   "a": {"type": "http", "url": "https://h/mcp"},
                   "b": {"type": "sse", "url": "https://h/sse"}}})"));
}

// ---- Export
// --------------------------------------------------------------------

TEST(SerializeConfigFileTest, InspectorLayoutIsExactAndDeterministic) {
  v1::ServerConfig s;
  s.set_id("3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f");
  s.set_name("everything");
  s.set_transport("stdio");
  s.set_command("npx");
  s.add_args("-y");
  s.add_args("@modelcontextprotocol/server-everything");
  (*s.mutable_env())["ZED"] = "1";
  (*s.mutable_env())["ALPHA"] = "2";
  s.set_connection_mode("proxy");
  s.mutable_created_at()->set_seconds(1705312800);
  s.mutable_updated_at()->set_seconds(1705312800);
  auto& extra = *s.mutable_extra()->mutable_fields();
  extra["zeta"].set_number_value(60);
  extra["alpha"].set_number_value(1.5);
  extra["name"].set_string_value("modelled keys win");
  std::string expected = R"({
  "$schema": "https://inspector.modelcontextprotocol.io/schemas/mcp-config.json",
  "version": "2.0",
  "servers": [
    {
      "id": "3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f",
      "name": "everything",
      "transport": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-everything"
      ],
      "env": {
        "ALPHA": "2",
        "ZED": "1"
      },
      "connectionMode": "proxy",
      "createdAt": "2024-01-15T10:00:00Z",
      "updatedAt": "2024-01-15T10:00:00Z",
      "alpha": 1.5,
      "zeta": 60
    }
  ]
}
)";
  EXPECT_EQ(MustSerialize({s}, v1::CONFIG_FORMAT_INSPECTOR), expected);
  // AUTO exports INSPECTOR.
  EXPECT_EQ(MustSerialize({s}, v1::CONFIG_FORMAT_AUTO), expected);
}

TEST(SerializeConfigFileTest, ClaudeAndVsCodeLayouts) {
  v1::ServerConfig stdio;
  stdio.set_name("git");
  stdio.set_transport("stdio");
  stdio.set_command("uvx");
  stdio.add_args("mcp-server-git");
  stdio.set_connection_mode("proxy");
  stdio.mutable_timeouts()->set_request(1000);  // not part of these formats
  (*stdio.mutable_extra()->mutable_fields())["disabled"].set_bool_value(true);
  v1::ServerConfig sse;
  sse.set_name("events");
  sse.set_transport("sse");
  sse.set_url("http://localhost:9000/sse");
  (*sse.mutable_headers())["X-Key"] = "k";

  EXPECT_EQ(MustSerialize({stdio, sse}, v1::CONFIG_FORMAT_MCP_SERVERS),
            R"({
  "mcpServers": {
    "git": {
      "command": "uvx",
      "args": [
        "mcp-server-git"
      ],
      "disabled": true
    },
    "events": {
      "type": "sse",
      "url": "http://localhost:9000/sse",
      "headers": {
        "X-Key": "k"
      }
    }
  }
}
)");
  EXPECT_EQ(J(MustSerialize({stdio, sse}, v1::CONFIG_FORMAT_VSCODE)),
            J(R"({"servers": {
                "git": {"type": "stdio", "command": "uvx",
                        "args": ["mcp-server-git"], "disabled": true},
                "events": {"type": "sse", "url": "http://localhost:9000/sse",
                           "headers": {"X-Key": "k"}}}})"));
}

TEST(SerializeConfigFileTest, StaleOriginalTypeIsIgnored) {
  // Imported as "streamable-http", later switched to SSE through the API.
  v1::ServerConfig s;
  s.set_name("x");
  s.set_transport("sse");
  s.set_url("https://h/events");
  (*s.mutable_extra()->mutable_fields())["type"].set_string_value(
      "streamable-http");
  EXPECT_EQ(J(MustSerialize({s}, v1::CONFIG_FORMAT_MCP_SERVERS)),
            J(R"({"mcpServers": {"x": {"type": "sse",
                                        "url": "https://h/events"}}})"));
}

TEST(SerializeConfigFileTest, NumbersInExtra) {
  v1::ServerConfig s;
  s.set_name("n");
  s.set_transport("stdio");
  s.set_command("x");
  auto& extra = *s.mutable_extra()->mutable_fields();
  extra["int"].set_number_value(60);
  extra["negative"].set_number_value(-3);
  extra["big"].set_number_value(9007199254740991.0);  // 2^53 - 1
  extra["huge"].set_number_value(1e300);
  extra["fraction"].set_number_value(0.25);
  std::string out = MustSerialize({s}, v1::CONFIG_FORMAT_MCP_SERVERS);
  EXPECT_THAT(out, HasSubstr("\"int\": 60,"));
  EXPECT_THAT(out, HasSubstr("\"negative\": -3\n"));
  EXPECT_THAT(out, HasSubstr("\"big\": 9007199254740991,"));
  EXPECT_THAT(out, HasSubstr("\"huge\": 1e+300"));
  EXPECT_THAT(out, HasSubstr("\"fraction\": 0.25"));
}

TEST(SerializeConfigFileTest, FileExtraComesAfterTheFormatsKeys) {
  google::protobuf::Struct file_extra;
  (*file_extra.mutable_fields())["mcpServers"].set_string_value("ignored");
  (*file_extra.mutable_fields())["b"].set_bool_value(true);
  (*file_extra.mutable_fields())["a"].set_number_value(1);
  EXPECT_EQ(MustSerialize({}, v1::CONFIG_FORMAT_MCP_SERVERS, file_extra),
            "{\n  \"mcpServers\": {},\n  \"a\": 1,\n  \"b\": true\n}\n");
}

TEST(SerializeConfigFileTest, Errors) {
  v1::ServerConfig s;
  s.set_name("dup");
  s.set_transport("stdio");
  s.set_command("x");
  auto status =
      SerializeConfigFile({s, s}, v1::CONFIG_FORMAT_MCP_SERVERS).status();
  EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST");
  EXPECT_EQ(GetErrorDetails(status)["serverName"], "dup");

  v1::ServerConfig nameless = s;
  nameless.clear_name();
  status = SerializeConfigFile({nameless}, v1::CONFIG_FORMAT_VSCODE).status();
  EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG");
  EXPECT_EQ(GetErrorDetails(status)["field"], "name");

  v1::ServerConfig no_transport = s;
  no_transport.clear_transport();
  status =
      SerializeConfigFile({no_transport}, v1::CONFIG_FORMAT_INSPECTOR).status();
  EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG");
  EXPECT_EQ(GetErrorDetails(status)["field"], "transport");

  status = SerializeConfigFile({s}, static_cast<v1::ConfigFormat>(42)).status();
  EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST");

  v1::ServerConfig bad_utf8 = s;
  bad_utf8.add_args("\xFF\xFE");
  status =
      SerializeConfigFile({bad_utf8}, v1::CONFIG_FORMAT_INSPECTOR).status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("UTF-8"));
}

// ---- Bad input
// -----------------------------------------------------------------

struct BadFile {
  std::string label;
  std::string content;
  std::string reason;
  std::string message;           // substring
  std::string field = "";        // "" = not checked
  std::string server_name = "";  // "" = not checked
  v1::ConfigFormat format = v1::CONFIG_FORMAT_AUTO;
};

std::vector<BadFile> BadFiles() {
  return {
      {"empty", "", "INVALID_REQUEST", "the file is empty"},
      {"blank", "  \n // only a comment\n", "INVALID_REQUEST",
       "the file is empty"},
      {"not an object", "[1, 2]", "INVALID_REQUEST",
       "top level must be a JSON object (got an array)"},
      {"malformed", "{\n  \"mcpServers\": {\n    \"a\": {\"command\" \"x\"}\n}",
       "INVALID_REQUEST", "not valid JSON at line 3, column"},
      {"truncated",
       "{\"mcpServers\": {\"a\": {\"command\": \"npx\", \"args\": [\"-y\"",
       "INVALID_REQUEST", "ends too early (truncated?)"},
      {"truncated string", "{\"mcpServers\": {\"a\": {\"command\": \"np",
       "INVALID_REQUEST", "ends too early"},
      {"invalid utf8", "{\"mcpServers\": {\"a\": {\"command\": \"\xFF\"}}}",
       "INVALID_REQUEST", "not valid JSON"},
      {"too deep", std::string(100, '[') + std::string(100, ']'),
       "INVALID_REQUEST", "nested deeper than 64 levels"},
      {"duplicate server key",
       R"({"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}})",
       "INVALID_CONFIG", "server \"a\": name: appears more than once", "name",
       "a"},
      {"duplicate vscode server key",
       R"({"servers": {"a": {"command": "x"}, "a": {"command": "y"}}})",
       "INVALID_CONFIG", "appears more than once", "name", "a"},
      {"duplicate names after trimming",
       R"({"mcpServers": {"a": {"command": "x"}, " a ": {"command": "y"}}})",
       "INVALID_CONFIG", "appears more than once", "name", "a"},
      {"duplicate names in mcp.json",
       R"({"servers": [{"name": "a", "transport": "stdio", "command": "x"},
                       {"name": "a", "transport": "stdio", "command": "y"}]})",
       "INVALID_CONFIG", "server \"a\": name: appears more than once", "name",
       "a"},
      {"duplicate inner key",
       R"({"mcpServers": {"a": {"command": "x", "env": {"K": "1", "K": "2"}}}})",
       "INVALID_REQUEST", "duplicate key \"K\" in mcpServers.a.env",
       "mcpServers.a.env.K"},
      {"args not an array",
       R"({"mcpServers": {"srv": {"command": "x", "args": "-y pkg"}}})",
       "INVALID_CONFIG",
       "server \"srv\": args: must be an array of strings (got a string)",
       "args", "srv"},
      {"args element not a string",
       R"({"mcpServers": {"srv": {"command": "x", "args": ["-y", 3]}}})",
       "INVALID_CONFIG",
       "server \"srv\": args[1]: must be a string, not a number (args is an "
       "array of strings)",
       "args[1]", "srv"},
      {"env value a number",
       R"({"mcpServers": {"srv": {"command": "x", "env": {"PORT": 3000}}}})",
       "INVALID_CONFIG", "env.PORT: must be a string (got a number); quote it",
       "env.PORT", "srv"},
      {"headers not an object",
       R"({"mcpServers": {"srv": {"url": "https://h/", "headers": []}}})",
       "INVALID_CONFIG", "headers: must be an object", "headers", "srv"},
      {"command not a string",
       R"({"mcpServers": {"srv": {"command": ["npx"]}}})", "INVALID_CONFIG",
       "command: must be a string (got an array)", "command", "srv"},
      {"entry not an object", R"({"mcpServers": {"srv": "npx -y pkg"}})",
       "INVALID_CONFIG",
       "server \"srv\": each entry of \"mcpServers\" must be an object (got a "
       "string)",
       "mcpServers.srv", "srv"},
      {"neither command nor url", R"({"mcpServers": {"srv": {"args": []}}})",
       "INVALID_CONFIG", "needs \"command\"", "command", "srv"},
      {"both command and url",
       R"({"mcpServers": {"srv": {"command": "x", "url": "https://h/"}}})",
       "INVALID_CONFIG", "not both", "url", "srv"},
      {"unknown type",
       R"({"mcpServers": {"srv": {"type": "websocket", "url": "wss://h/"}}})",
       "INVALID_CONFIG", "\"websocket\" is not a supported type", "type",
       "srv"},
      {"empty server name", R"({"mcpServers": {"": {"command": "x"}}})",
       "INVALID_CONFIG", "empty name", "name"},
      {"validation failure is prefixed",
       R"({"mcpServers": {"ftp": {"type": "http", "url": "ftp://x"}}})",
       "INVALID_CONFIG", "server \"ftp\": url: 'ftp://x' is not an http(s) URL",
       "url", "ftp"},
      {"validation of stdio", R"({"servers": {"v": {"type": "stdio"}}})",
       "INVALID_CONFIG",
       "server \"v\": command: required for transport \"stdio\"", "command",
       "v"},
      {"mcp.json server without name",
       R"({"servers": [{"transport": "stdio", "command": "x"}]})",
       "INVALID_CONFIG", "servers[0]: name: required", "name"},
      {"mcp.json server not an object", R"({"servers": [1]})", "INVALID_CONFIG",
       "servers[0]: each entry of \"servers\" must be an object (got a number)",
       "servers[0]"},
      {"mcp.json bad timeouts",
       R"({"servers": [{"name": "t", "transport": "stdio", "command": "x",
                        "timeouts": {"request": "60s"}}]})",
       "INVALID_CONFIG", "timeouts.request: must be a whole number",
       "timeouts.request", "t"},
      {"mcp.json negative timeout",
       R"({"servers": [{"name": "t", "transport": "stdio", "command": "x",
                        "timeouts": {"idle": -1}}]})",
       "INVALID_CONFIG", "must not be negative", "timeouts.idle", "t"},
      {"mcp.json unknown timeout",
       R"({"servers": [{"name": "t", "transport": "stdio", "command": "x",
                        "timeouts": {"read": 1}}]})",
       "INVALID_CONFIG", "unknown key", "timeouts.read", "t"},
      {"mcp.json timeout over 24h",
       R"({"servers": [{"name": "t", "transport": "stdio", "command": "x",
                        "timeouts": {"request": 90000000}}]})",
       "INVALID_CONFIG", "more than 24 hours", "timeouts.request", "t"},
      {"mcp.json bad oauth scopes",
       R"({"servers": [{"name": "o", "transport": "sse", "url": "https://h/",
                        "oauth": {"scopes": "read write"}}]})",
       "INVALID_CONFIG", "oauth.scopes: must be an array of strings",
       "oauth.scopes", "o"},
      {"mcp.json bad timestamp",
       R"({"servers": [{"name": "t", "transport": "stdio", "command": "x",
                        "createdAt": "yesterday"}]})",
       "INVALID_CONFIG", "not an RFC 3339 timestamp", "createdAt", "t"},
      {"mcp.json wrong version", R"({"version": "3.0", "servers": []})",
       "INVALID_REQUEST", "version 2.x", "version"},
  };
}

class BadFileTest : public ::testing::TestWithParam<BadFile> {};

TEST_P(BadFileTest, RefusedWithAClearError) {
  const BadFile& c = GetParam();
  auto parsed = ParseConfigFile(c.content, c.format);
  ASSERT_FALSE(parsed.ok()) << c.label;
  const absl::Status& status = parsed.status();
  EXPECT_EQ(ErrorReason(status), c.reason) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(c.message));
  auto details = GetErrorDetails(status);
  if (!c.field.empty()) {
    EXPECT_EQ(details["field"], c.field) << status;
  }
  if (!c.server_name.empty()) {
    EXPECT_EQ(details["serverName"], c.server_name) << status;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, BadFileTest, ::testing::ValuesIn(BadFiles()),
                         inspector::testing::LabelName());

TEST(ParseConfigFileTest, SyntaxErrorsCarryPosition) {
  auto status =
      ParseConfigFile("{\n  \"mcpServers\": {,}\n}", v1::CONFIG_FORMAT_AUTO)
          .status();
  auto details = GetErrorDetails(status);
  EXPECT_EQ(details["line"], "2");
  EXPECT_EQ(details["column"], "18");
  EXPECT_EQ(details["offset"], "19");
  EXPECT_THAT(std::string(status.message()),
              StartsWith("not valid JSON at line 2, column 18"));
}

TEST(ParseConfigFileTest, OversizedFileIsTooLarge) {
  std::string content = "{\"mcpServers\": {}}";
  content.resize(kMaxConfigFileBytes + 1, ' ');
  auto status = ParseConfigFile(content, v1::CONFIG_FORMAT_AUTO).status();
  EXPECT_EQ(ErrorReason(status), "TOO_LARGE");
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("16 MiB"));

  // Exactly at the limit is fine.
  content.resize(kMaxConfigFileBytes);
  EXPECT_TRUE(ParseConfigFile(content, v1::CONFIG_FORMAT_AUTO).ok());
}

TEST(ParseConfigFileTest, OversizedValuesAreRefusedNotTruncated) {
  std::string content =
      R"({"mcpServers": {"big": {"command": "x", "args": [")" +
      std::string(64 * 1024 + 1, 'a') + R"("]}}})";
  auto status = ParseConfigFile(content, v1::CONFIG_FORMAT_AUTO).status();
  EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG");
  EXPECT_EQ(GetErrorDetails(status)["field"], "args[0]");
}

TEST(ClientSettingsTest, InspectorFilesCarryClientCapabilitiesAndRoots) {
  const std::string file = R"({"version": "2.0", "servers": [{
    "name": "fs",
    "transport": "stdio",
    "command": "mcp-fs",
    "timeouts": {"clientRequest": 60000},
    "clientCapabilities": {"sampling": false, "elicitationUrl": false},
    "roots": [{"uri": "file:///home/me/project", "name": "Project"},
              {"uri": "file:///tmp"}]
  }]})";
  ParsedConfigFile parsed = MustParse(file);
  ASSERT_EQ(parsed.servers.size(), 1u);
  const v1::ServerConfig& s = parsed.servers[0];
  EXPECT_EQ(s.timeouts().client_request(), 60000u);
  EXPECT_TRUE(s.client_capabilities().has_sampling());
  EXPECT_FALSE(s.client_capabilities().sampling());
  EXPECT_FALSE(s.client_capabilities().has_roots());
  ASSERT_EQ(s.roots_size(), 2);
  EXPECT_EQ(s.roots(0).name(), "Project");
  EXPECT_FALSE(s.has_extra());  // modelled, not kept aside
  nlohmann::json out =
      J(MustSerialize(parsed.servers, v1::CONFIG_FORMAT_INSPECTOR));
  const nlohmann::json& server = out["servers"][0];
  EXPECT_EQ(server["clientCapabilities"], J(R"({"sampling": false,
                                                "elicitationUrl": false})"));
  EXPECT_EQ(server["roots"], J(R"([{"uri": "file:///home/me/project",
                                    "name": "Project"},
                                   {"uri": "file:///tmp"}])"));
  EXPECT_EQ(server["timeouts"]["clientRequest"], 60000);
  // Inspector-only settings stay out of other clients' files.
  nlohmann::json claude =
      J(MustSerialize(parsed.servers, v1::CONFIG_FORMAT_MCP_SERVERS));
  EXPECT_FALSE(claude["mcpServers"]["fs"].contains("roots"));
  EXPECT_FALSE(claude["mcpServers"]["fs"].contains("clientCapabilities"));
}

// The MCP Apps extension is off unless a file asks for it, and is kept.
TEST(ClientSettingsTest, AppsExtensionIsReadAndWritten) {
  ParsedConfigFile parsed = MustParse(R"({"version": "2.0", "servers": [{
    "name": "app", "transport": "stdio", "command": "app-server",
    "clientCapabilities": {"apps": true}}]})");
  ASSERT_EQ(parsed.servers.size(), 1u);
  EXPECT_TRUE(parsed.servers[0].client_capabilities().apps());
  nlohmann::json out =
      J(MustSerialize(parsed.servers, v1::CONFIG_FORMAT_INSPECTOR));
  EXPECT_EQ(out["servers"][0]["clientCapabilities"], J(R"({"apps": true})"));
  ParsedConfigFile plain = MustParse(R"({"version": "2.0", "servers": [{
    "name": "plain", "transport": "stdio", "command": "x"}]})");
  EXPECT_FALSE(plain.servers[0].client_capabilities().has_apps());
}

TEST(ClientSettingsTest, BadClientSettingsNameTheField) {
  struct Case {
    const char* server;
    const char* field;
  };
  for (const Case& c : {
           Case{R"("clientCapabilities": {"sampling": "yes"})",
                "clientCapabilities.sampling"},
           Case{R"("clientCapabilities": {"tasks": true})",
                "clientCapabilities.tasks"},
           Case{R"("roots": {"uri": "file:///x"})", "roots"},
           Case{R"("roots": [{"uri": 5}])", "roots[0].uri"},
           Case{R"("roots": [{"uri": "file:///x", "label": "x"}])",
                "roots[0].label"},
           Case{R"("roots": [{"uri": "http://example.com/"}])", "roots[0].uri"},
       }) {
    std::string file = std::string(R"({"servers": [{"name": "s", )") +
                       R"("transport": "stdio", "command": "c", )" + c.server +
                       "}]}";
    auto parsed = ParseConfigFile(file, v1::CONFIG_FORMAT_AUTO);
    ASSERT_FALSE(parsed.ok()) << file;
    EXPECT_EQ(ErrorReason(parsed.status()), "INVALID_CONFIG") << file;
    EXPECT_EQ(GetErrorDetails(parsed.status())["field"], c.field) << file;
  }
}

}  // namespace
}  // namespace inspector::config
