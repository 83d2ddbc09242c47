// End-to-end tests of the Prometheus metrics: a real inspectord with
// --http 127.0.0.1:0 and --metrics-listen 127.0.0.1:0, the fixture MCP
// server over stdio, curl as the scraper and as a front door's client;
// the Grafana dashboard of tools/observability/ checked against what the
// daemon exposes; and, when Debian's prometheus is installed, a real
// Prometheus configured from tools/observability/prometheus.yml scraping
// --metrics-listen, asked over its HTTP API for the counters and for every
// query of the dashboard.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace metrics_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::Curl;
using testing::HttpResult;
using testing::kFixtureServer;
using testing::PeerProcess;
using testing::WaitUntil;

constexpr int kCalls = 7;

// The value of the series `series` (name and labels, as rendered) in a
// text exposition; -1 when absent.
double SeriesValue(const std::string& text, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, series) && absl::ConsumePrefix(&line, " ")) {
      double value = 0;
      if (absl::SimpleAtod(line, &value)) return value;
    }
  }
  return -1;
}

// The cumulative bucket counts of one histogram series, in the order
// rendered, with their "le" values.
std::vector<std::pair<std::string, double>> Buckets(
    const std::string& text, const std::string& name,
    const std::string& labels) {
  std::vector<std::pair<std::string, double>> out;
  const std::string prefix = absl::StrCat(name, "_bucket{", labels, ",le=\"");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, prefix)) continue;
    size_t quote = line.find('"');
    double value = 0;
    if (quote == absl::string_view::npos ||
        !absl::SimpleAtod(line.substr(line.find(' ') + 1), &value)) {
      continue;
    }
    out.emplace_back(std::string(line.substr(0, quote)), value);
  }
  return out;
}

// The sum of the series of `name` (e.g. a histogram's _count) whose
// labels include every one of `labels` (each as rendered: key="value").
double SumOfSeries(const std::string& text, const std::string& name,
                   const std::vector<std::string>& labels) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, name)) continue;
    if (!line.empty() && line[0] != '{' && line[0] != ' ') continue;
    size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) continue;
    absl::string_view series = line.substr(0, space);
    bool all = true;
    for (const std::string& label : labels) {
      all = all && absl::StrContains(series, label);
    }
    double value = 0;
    if (all && absl::SimpleAtod(line.substr(space + 1), &value)) sum += value;
  }
  return sum;
}

// The metric names an exposition declares (# TYPE), with a histogram's
// _bucket, _sum and _count series.
std::set<std::string> ExposedNames(const std::string& text) {
  std::set<std::string> names;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "# TYPE ")) continue;
    std::vector<std::string> parts = absl::StrSplit(line, ' ');
    if (parts.size() != 2) continue;
    names.insert(parts[0]);
    if (parts[1] == "histogram") {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        names.insert(parts[0] + suffix);
      }
    }
  }
  return names;
}

// The metric names a PromQL expression of ours selects: its identifiers
// that start with mcp_ or inspector_, outside quoted strings, label
// matchers ({...}) and grouping clauses (by (...), without (...)), which
// hold label names and values.
std::set<std::string> MetricNamesIn(const std::string& expr) {
  std::string plain;
  int braces = 0;
  bool quoted = false;
  for (size_t i = 0; i < expr.size(); ++i) {
    char c = expr[i];
    if (quoted) {
      if (c == '\\') ++i;
      if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == '{') {
      ++braces;
    } else if (c == '}') {
      --braces;
    } else if (braces == 0) {
      plain += c;
    }
  }
  for (const char* clause : {"by (", "without ("}) {
    size_t at;
    while ((at = plain.find(clause)) != std::string::npos) {
      size_t close = plain.find(')', at);
      plain.erase(at, close == std::string::npos ? std::string::npos
                                                 : close + 1 - at);
    }
  }
  std::set<std::string> names;
  std::string token;
  auto flush = [&] {
    if (absl::StartsWith(token, "mcp_") ||
        absl::StartsWith(token, "inspector_")) {
      names.insert(token);
    }
    token.clear();
  };
  for (char c : plain) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ||
        c == ':') {
      token += c;
    } else {
      flush();
    }
  }
  flush();
  return names;
}

std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every query of the dashboard: its panel's title and its expression.
std::vector<std::pair<std::string, std::string>> DashboardQueries() {
  json dashboard = json::parse(
      ReadSourceFile("tools/observability/grafana-dashboard.json"), nullptr,
      /*allow_exceptions=*/false);
  std::vector<std::pair<std::string, std::string>> out;
  if (!dashboard.is_object() || !dashboard["panels"].is_array()) return out;
  for (const json& panel : dashboard["panels"]) {
    for (const json& target : panel.value("targets", json::array())) {
      out.emplace_back(panel.value("title", ""), target.value("expr", ""));
    }
  }
  return out;
}

class MetricsTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    // Conversions on ports the kernel picks.
    StartDaemonWithHttp(
        {"--metrics-listen", "127.0.0.1:0", "--bridge-port-base", "0"});
    ASSERT_TRUE(WaitUntil(
        [&] {
          return daemon_->Stderr().find("metrics on http://") !=
                 std::string::npos;
        },
        absl::Seconds(30), "the daemon says where its metrics are"));
    std::string log = daemon_->Stderr();
    size_t at = log.find("metrics on http://") + strlen("metrics on ");
    metrics_url_ = log.substr(at, log.find_first_of(" \n", at) - at);
    ASSERT_THAT(metrics_url_, HasSubstr("/metrics"));
  }

  // Registers the fixture server (stdio) and calls its echo tool kCalls
  // times through POST /mcp; returns the server's id.
  std::string CallEchoTimes(int calls) {
    json config = {{"name", "fixture"},
                   {"transport", "stdio"},
                   {"command", "node"},
                   {"args", {kFixtureServer, "stdio"}}};
    HttpResult created = Rest("POST", "/config", config.dump());
    EXPECT_EQ(created.status, 200) << created.body;
    std::string id = created.Json().value("id", "");
    for (int i = 0; i < calls; ++i) {
      HttpResult called = Rest(
          "POST", "/mcp?serverId=" + id,
          absl::StrCat(R"({"jsonrpc":"2.0","id":)", i,
                       R"(,"method":"tools/call","params":{"name":"echo",)",
                       R"("arguments":{"message":"m)", i, R"("}}})"));
      EXPECT_EQ(called.status, 200) << called.body;
      EXPECT_THAT(called.body, HasSubstr(absl::StrCat("m", i)));
    }
    return id;
  }

  static std::string EchoLabels(const std::string& id) {
    return absl::StrCat(
        R"(mcp_method_name="tools/call",gen_ai_operation_name="execute_tool",)",
        R"(gen_ai_tool_name="echo",inspector_server_id=")", id, R"(")");
  }

  // POSTs `body` to the MCP endpoint `url`, in `session` ("" before
  // initialize).
  static HttpResult PostMcp(const std::string& url, const std::string& body,
                            const std::string& session) {
    std::vector<std::string> args = {
        "-X", "POST", "-H", "Content-Type: application/json", "-H",
        "Accept: application/json, text/event-stream", "--data-binary", "@-"};
    if (!session.empty()) {
      args.push_back("-H");
      args.push_back("Mcp-Session-Id: " + session);
    }
    args.push_back(url);
    return Curl(args, body);
  }
  // The same to the fixture's front door.
  HttpResult FrontDoorPost(const std::string& body,
                           const std::string& session = "") {
    return PostMcp(base_ + "/servers/fixture/mcp", body, session);
  }

  std::string Scrape() {
    HttpResult scraped = Curl({metrics_url_});
    EXPECT_EQ(scraped.status, 200) << scraped.body;
    return scraped.body;
  }

  std::string metrics_url_;  // http://127.0.0.1:PORT/metrics
};

// The server side of every entry (REST here, a front door), tool errors
// by the conventions, a front-door session's duration once it ends, the
// front door's status codes and the history writer's commits.
TEST_F(MetricsTest, CountsCallersRequestsToolErrorsSessionsAndCommits) {
  const std::string id = CallEchoTimes(kCalls);
  std::string text = Scrape();
  // REST POST /mcp is gRPC Forward: the daemon answered them as a server.
  EXPECT_EQ(SeriesValue(text, absl::StrCat(
                                  "mcp_server_operation_duration_seconds_count{",
                                  EchoLabels(id), "}")),
            kCalls)
      << text;
  EXPECT_EQ(SeriesValue(text, absl::StrCat(
                                  R"(inspector_mcp_operations_total{side="server",)",
                                  R"(mcp_method_name="tools/call",outcome="ok",)",
                                  R"(inspector_server_id=")", id, R"("})")),
            kCalls)
      << text;

  // A tool that ran and failed (isError: true) is a tool_error on both
  // sides, though JSON-RPC says it succeeded.
  HttpResult failed = Rest(
      "POST", "/mcp?serverId=" + id,
      R"({"jsonrpc":"2.0","id":"f","method":"tools/call","params":{"name":"fail","arguments":{}}})");
  ASSERT_EQ(failed.status, 200) << failed.body;
  ASSERT_THAT(failed.body, HasSubstr("\"isError\":true"));

  // A front-door session: initialize, a call, DELETE.
  HttpResult initialized = FrontDoorPost(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  ASSERT_EQ(initialized.status, 200) << initialized.body;
  const std::string session = initialized.headers["mcp-session-id"];
  ASSERT_FALSE(session.empty());
  EXPECT_EQ(FrontDoorPost(
                R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                session)
                .status,
            202);
  HttpResult called = FrontDoorPost(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"door"}}})",
      session);
  EXPECT_EQ(called.status, 200) << called.body;
  HttpResult deleted = Curl({"-X", "DELETE", "-H", "Mcp-Session-Id: " + session,
                             base_ + "/servers/fixture/mcp"});
  EXPECT_LT(deleted.status, 300) << deleted.body;

  ASSERT_TRUE(WaitUntil(
      [&] {
        text = Scrape();
        return SumOfSeries(text, "mcp_server_session_duration_seconds_count",
                           {R"(inspector_session_kind="bridge")",
                            R"(network_transport="tcp")"}) == 1;
      },
      absl::Seconds(30), "the front-door session's duration is recorded"))
      << text;
  EXPECT_EQ(SumOfSeries(text, "mcp_client_session_duration_seconds_count",
                        {R"(inspector_session_kind="bridge")",
                         R"(network_transport="pipe")"}),
            1)
      << text;
  for (const char* side : {"client", "server"}) {
    EXPECT_EQ(SumOfSeries(text,
                          absl::StrCat("mcp_", side,
                                       "_operation_duration_seconds_count"),
                          {R"(gen_ai_tool_name="fail")",
                           R"(error_type="tool_error")"}),
              1)
        << side << "\n"
        << text;
  }
  // The front door's call, timed as the server.
  EXPECT_EQ(SumOfSeries(text, "mcp_server_operation_duration_seconds_count",
                        {R"(gen_ai_tool_name="echo")"}),
            kCalls + 1)
      << text;
  EXPECT_GE(SeriesValue(text, R"(inspector_frontdoor_responses_total{code="200"})"),
            2)
      << text;
  EXPECT_EQ(SeriesValue(text, R"(inspector_frontdoor_responses_total{code="202"})"),
            1)
      << text;
  EXPECT_GT(SeriesValue(text, "inspector_history_batch_rows_count"), 0) << text;
  EXPECT_GT(SeriesValue(text, "inspector_history_writer_lag_seconds_count"), 0)
      << text;
  EXPECT_THAT(text, HasSubstr("# TYPE inspector_oauth_refresh_total counter\n"));
}

// A conversion's endpoint times its callers' requests as a server too.
TEST_F(MetricsTest, ConversionsTimeTheirCallersRequests) {
  json convert = {{"serverName", "converted"},
                  {"command", "node"},
                  {"args", {kFixtureServer, "stdio"}}};
  HttpResult created = Rest("POST", "/convert", convert.dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string url = created.Json().value("url", "");
  ASSERT_FALSE(url.empty()) << created.body;
  auto post = [&](const std::string& body, const std::string& session) {
    return PostMcp(url, body, session);
  };
  HttpResult initialized = post(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
      "");
  ASSERT_EQ(initialized.status, 200) << initialized.body;
  const std::string session = initialized.headers["mcp-session-id"];
  ASSERT_FALSE(session.empty());
  post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", session);
  for (int i = 0; i < 3; ++i) {
    HttpResult called = post(
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"c"}}})",
        session);
    EXPECT_EQ(called.status, 200) << called.body;
  }
  const std::string text = Scrape();
  EXPECT_EQ(SumOfSeries(text, "mcp_server_operation_duration_seconds_count",
                        {R"(gen_ai_tool_name="echo")"}),
            3)
      << text;
  EXPECT_EQ(SumOfSeries(text, "mcp_server_operation_duration_seconds_count",
                        {R"(mcp_method_name="initialize")"}),
            1)
      << text;
}

// The desktop proxy (inspectorctl proxy, a stdio client's entry) is timed
// as a server too, and its session's duration is recorded when it ends.
TEST_F(MetricsTest, TheDesktopProxyTimesItsClientsRequests) {
  CallEchoTimes(0);  // registers the fixture; no calls of its own
  const std::string input =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"desk\",\"version\":\"1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"echo\",\"arguments\":{\"message\":\"p1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"echo\",\"arguments\":{\"message\":\"p2\"}}}\n";
  testing::ProcessResult proxy = testing::RunProcess(
      {INSPECTORCTL_PATH, "proxy", "fixture", "--addr", daemon_->address(),
       "--token-file", daemon_->token_file()},
      {}, input);
  ASSERT_EQ(proxy.exit_code, 0) << proxy.err;
  EXPECT_THAT(proxy.out, HasSubstr("p2"));
  std::string text;
  ASSERT_TRUE(WaitUntil(
      [&] {
        text = Scrape();
        return SumOfSeries(text, "mcp_server_session_duration_seconds_count",
                           {R"(inspector_session_kind="proxy")"}) == 1;
      },
      absl::Seconds(30), "the proxy session's duration is recorded"))
      << text;
  EXPECT_EQ(SumOfSeries(text, "mcp_server_operation_duration_seconds_count",
                        {R"(gen_ai_tool_name="echo")"}),
            2)
      << text;
  EXPECT_EQ(SumOfSeries(text, "inspector_mcp_operations_total",
                        {R"(side="server")", R"(mcp_method_name="tools/call")"}),
            2)
      << text;
}

// The dashboard parses, has the panels it promises, and each of its
// queries names only metrics a daemon exposes after a few calls.
TEST_F(MetricsTest, DashboardQueriesNameOnlyExposedMetrics) {
  CallEchoTimes(2);
  const std::set<std::string> exposed = ExposedNames(Scrape());
  ASSERT_FALSE(exposed.empty());
  const auto queries = DashboardQueries();
  ASSERT_GE(queries.size(), 10u) << "tools/observability/grafana-dashboard.json";
  std::set<std::string> titles;
  for (const auto& [title, expr] : queries) {
    titles.insert(title);
    const std::set<std::string> names = MetricNamesIn(expr);
    EXPECT_FALSE(names.empty()) << title << ": " << expr;
    for (const std::string& name : names) {
      EXPECT_TRUE(exposed.count(name) > 0)
          << title << ": " << name << " is not exposed (" << expr << ")";
    }
  }
  for (const char* wanted :
       {"Requests per second (callers to inspectord)",
        "Errors per second by type", "Latency p50 by server and tool",
        "Latency p95 by server and tool", "Sessions", "Held messages",
        "History writer lag p95 and batch size"}) {
    EXPECT_TRUE(titles.count(wanted) > 0) << wanted;
  }
  // The extraction itself: label names are not metric names.
  EXPECT_EQ(MetricNamesIn(R"(sum by (inspector_server_id) (rate(mcp_x_total{inspector_server_id=~"$server",a="}{"}[1m])) / inspector_y)"),
            (std::set<std::string>{"inspector_y", "mcp_x_total"}));
}

TEST_F(MetricsTest, CountsToolCallsInTheConventionsHistogram) {
  const std::string id = CallEchoTimes(kCalls);
  HttpResult scraped = Rest("GET", "/metrics");
  ASSERT_EQ(scraped.status, 200) << scraped.body;
  EXPECT_EQ(scraped.content_type(), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& text = scraped.body;
  EXPECT_THAT(text, HasSubstr("# TYPE mcp_client_operation_duration_seconds "
                              "histogram\n"));
  EXPECT_THAT(text, HasSubstr("# HELP mcp_client_operation_duration_seconds "));
  const std::string labels = EchoLabels(id);
  const std::string name = "mcp_client_operation_duration_seconds";
  EXPECT_EQ(SeriesValue(text, absl::StrCat(name, "_count{", labels, "}")),
            kCalls)
      << text;
  EXPECT_GT(SeriesValue(text, absl::StrCat(name, "_sum{", labels, "}")), 0);
  EXPECT_EQ(SeriesValue(text, absl::StrCat(
                                  R"(inspector_mcp_operations_total{side="client",)",
                                  R"(mcp_method_name="tools/call",outcome="ok",)",
                                  R"(inspector_server_id=")", id, R"("})")),
            kCalls)
      << text;

  // Buckets: in rising "le" order, never decreasing, ending in +Inf with
  // the count.
  auto buckets = Buckets(text, name, labels);
  ASSERT_GE(buckets.size(), 2u) << text;
  EXPECT_EQ(buckets.back().first, "+Inf");
  EXPECT_EQ(buckets.back().second, kCalls);
  for (size_t i = 1; i < buckets.size(); ++i) {
    EXPECT_LE(buckets[i - 1].second, buckets[i].second)
        << buckets[i - 1].first << " vs " << buckets[i].first;
    if (buckets[i].first != "+Inf") {
      double before = 0, now = 0;
      ASSERT_TRUE(absl::SimpleAtod(buckets[i - 1].first, &before));
      ASSERT_TRUE(absl::SimpleAtod(buckets[i].first, &now));
      EXPECT_LT(before, now);
    }
  }

  // The daemon's own: its server connected, the database on disk.
  EXPECT_EQ(SeriesValue(text, absl::StrCat(
                                  R"(inspector_upstream_state{inspector_server_id=")",
                                  id, R"(",inspector_server_name="fixture",)",
                                  R"(state="connected"})")),
            1)
      << text;
  EXPECT_GT(SeriesValue(text, R"(inspector_database_bytes{file="main"})"), 0);
  EXPECT_EQ(SeriesValue(text, "inspector_intercept_held_messages"), 0);

  // The same numbers on --metrics-listen.
  HttpResult own = Curl({metrics_url_});
  ASSERT_EQ(own.status, 200) << own.body;
  EXPECT_EQ(SeriesValue(own.body, absl::StrCat(name, "_count{", labels, "}")),
            kCalls);
}

TEST_F(MetricsTest, HttpListenerNeedsTheToken) {
  const std::string url = base_ + "/metrics";
  for (const std::vector<std::string>& auth :
       {std::vector<std::string>{},
        std::vector<std::string>{"-H", "X-Session-Token: wrong"},
        std::vector<std::string>{"-H", "Authorization: Bearer wrong"},
        std::vector<std::string>{"-H", "Cookie: inspector_session_1=forged"}}) {
    std::vector<std::string> args = auth;
    args.push_back(url);
    HttpResult refused = Curl(args);
    EXPECT_EQ(refused.status, 401) << refused.body;
    EXPECT_EQ(refused.Json()["error"].value("code", ""), "SESSION_INVALID");
    EXPECT_THAT(refused.body, ::testing::Not(HasSubstr("# TYPE")));
  }
  HttpResult bearer =
      Curl({"-H", "Authorization: Bearer " + daemon_->token(), url});
  EXPECT_EQ(bearer.status, 200) << bearer.body;
  EXPECT_THAT(bearer.body, HasSubstr("# TYPE inspector_database_bytes gauge"));
}

TEST_F(MetricsTest, OwnListenerNeedsNoTokenButALoopbackHost) {
  HttpResult plain = Curl({metrics_url_});
  EXPECT_EQ(plain.status, 200) << plain.body;
  EXPECT_THAT(plain.body, HasSubstr("# TYPE inspector_upstream_state gauge"));
  // A page reaching it by DNS rebinding names another host.
  HttpResult rebound = Curl({"-H", "Host: attacker.example", metrics_url_});
  EXPECT_EQ(rebound.status, 403) << rebound.body;
  HttpResult posted = Curl({"-X", "POST", "-d", "x", metrics_url_});
  EXPECT_EQ(posted.status, 405) << posted.body;
  std::string other = metrics_url_.substr(0, metrics_url_.rfind('/')) + "/config";
  HttpResult elsewhere = Curl({other});
  EXPECT_EQ(elsewhere.status, 404) << elsewhere.body;
}

TEST(MetricsListenTest, RefusesANonLoopbackAddressWithoutTheFlag) {
  testing::TempDir dir;
  std::string error;
  auto daemon = testing::DaemonProcess::Start(
      INSPECTORD_PATH, dir, {"--metrics-listen", "0.0.0.0:0"}, &error);
  EXPECT_EQ(daemon, nullptr);
  EXPECT_THAT(error, HasSubstr("--metrics-allow-network")) << error;
}

// tools/observability/otel-collector.yaml as the Collector reads it (YAML,
// parsed by npm's `yaml` from tools/npm into JSON); null when it does not
// parse.
json CollectorConfiguration() {
  testing::ProcessResult parsed = testing::RunProcess(
      {"node", "-e",
       "const { createRequire } = require('node:module');"
       "const fs = require('node:fs');"
       "const YAML = createRequire(process.argv[1] + '/tools/npm/"
       "package.json')('yaml');"
       "process.stdout.write(JSON.stringify(YAML.parse("
       "fs.readFileSync(process.argv[2], 'utf8'))));",
       SOURCE_DIR, std::string(SOURCE_DIR) +
                       "/tools/observability/otel-collector.yaml"});
  if (parsed.exit_code != 0) {
    ADD_FAILURE() << "the configuration does not parse: " << parsed.err;
    return json();
  }
  return json::parse(parsed.out, nullptr, /*allow_exceptions=*/false);
}

// The Collector refuses to start on a pipeline that names a component its
// sections do not define; it should receive where the metrics guide points
// inspectord, and serve Prometheus where the file says.
TEST(ObservabilityFilesTest, TheCollectorConfigurationWiresEveryPipeline) {
  const json config = CollectorConfiguration();
  ASSERT_TRUE(config.is_object()) << config.dump();
  const json& pipelines = config["service"]["pipelines"];
  ASSERT_TRUE(pipelines.is_object()) << config.dump();
  for (const char* signal : {"traces", "metrics"}) {
    SCOPED_TRACE(signal);
    ASSERT_TRUE(pipelines.contains(signal)) << pipelines.dump();
    const json& pipeline = pipelines[signal];
    for (const char* kind : {"receivers", "processors", "exporters"}) {
      ASSERT_TRUE(pipeline[kind].is_array() && !pipeline[kind].empty())
          << kind << ": " << pipeline.dump();
      for (const json& id : pipeline[kind]) {
        EXPECT_TRUE(config[kind].is_object() &&
                    config[kind].contains(id.get<std::string>()))
            << kind << " " << id << " is named but not defined";
      }
    }
    EXPECT_EQ(pipeline["receivers"], json::array({"otlp"}));
    // The Collector's advice: the memory limiter first.
    EXPECT_EQ(pipeline["processors"][0], "memory_limiter");
  }
  // OTLP in, on the ports the guide sends to.
  const json& protocols = config["receivers"]["otlp"]["protocols"];
  const std::string grpc = protocols["grpc"].value("endpoint", "");
  const std::string http = protocols["http"].value("endpoint", "");
  EXPECT_EQ(grpc, "127.0.0.1:4317");
  EXPECT_EQ(http, "127.0.0.1:4318");
  const std::string guide = ReadSourceFile("docs/guides/metrics.md");
  EXPECT_THAT(guide, HasSubstr("--otel-endpoint http://" + http +
                               "/v1/traces"));
  EXPECT_THAT(guide, HasSubstr("--otel-metrics-endpoint http://" + http +
                               "/v1/metrics"));
  // Traces on over OTLP; metrics served for Prometheus.
  const std::string traces_out = pipelines["traces"]["exporters"][0];
  EXPECT_EQ(traces_out.substr(0, traces_out.find('/')), "otlp");
  EXPECT_EQ(pipelines["metrics"]["exporters"], json::array({"prometheus"}));
  EXPECT_EQ(config["exporters"]["prometheus"].value("endpoint", ""),
            "127.0.0.1:8889");
}

// Debian's prometheus (apt package "prometheus") scrapes --metrics-listen
// once a second; its query API must report the calls.
TEST_F(MetricsTest, PrometheusScrapesTheCounters) {
  const std::string binary = "/usr/bin/prometheus";
  if (access(binary.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "Debian's prometheus is not installed (apt-get install "
                    "prometheus); the real-Prometheus check is skipped";
  }
  const std::string id = CallEchoTimes(kCalls);
  std::string target = metrics_url_.substr(strlen("http://"));
  target = target.substr(0, target.find('/'));
  // The shipped scrape configuration, with the test's target and a
  // scrape every second.
  std::string config = ReadSourceFile("tools/observability/prometheus.yml");
  ASSERT_TRUE(absl::StrContains(config, "'127.0.0.1:9464'")) << config;
  ASSERT_TRUE(absl::StrContains(config, "scrape_interval: 15s")) << config;
  config = absl::StrReplaceAll(
      config, {{"'127.0.0.1:9464'", absl::StrCat("'", target, "'")},
               {"scrape_interval: 15s", "scrape_interval: 1s"},
               {"evaluation_interval: 15s", "evaluation_interval: 1s"}});
  const std::string config_path = dir_.path() + "/prometheus.yml";
  {
    std::ofstream out(config_path);
    out << config;
    ASSERT_TRUE(out.good());
  }
  std::string error;
  auto prometheus = PeerProcess::Start(
      {binary, "--config.file=" + config_path,
       "--storage.tsdb.path=" + dir_.path() + "/tsdb",
       "--web.listen-address=127.0.0.1:0"},
      {}, "msg=\"Listening on\"", &error);
  ASSERT_NE(prometheus, nullptr) << error;
  const std::string& ready = prometheus->ready_line();
  size_t at = ready.find("address=");
  ASSERT_NE(at, std::string::npos) << ready;
  const std::string api =
      "http://" + ready.substr(at + strlen("address=")) + "/api/v1/query";
  const std::string query = absl::StrCat(
      "mcp_client_operation_duration_seconds_count{gen_ai_tool_name=\"echo\","
      "inspector_server_id=\"",
      id, "\"}");
  json answer;
  ASSERT_TRUE(WaitUntil(
      [&] {
        HttpResult result =
            Curl({"-G", "--data-urlencode", "query=" + query, api});
        if (result.status != 200) return false;
        answer = result.Json();
        const json& data = answer["data"]["result"];
        return data.is_array() && data.size() == 1 &&
               data[0]["value"][1] == std::to_string(kCalls);
      },
      absl::Seconds(60), "Prometheus reports the calls"))
      << answer.dump() << "\n"
      << prometheus->Output();
  EXPECT_EQ(answer["data"]["result"][0]["metric"].value("mcp_method_name", ""),
            "tools/call");
  // And the latency histogram's buckets, as histogram_quantile reads them.
  HttpResult quantile = Curl(
      {"-G", "--data-urlencode",
       absl::StrCat("query=histogram_quantile(0.5, "
                    "mcp_client_operation_duration_seconds_bucket{"
                    "gen_ai_tool_name=\"echo\",inspector_server_id=\"",
                    id, "\"})"),
       api});
  ASSERT_EQ(quantile.status, 200) << quantile.body;
  const json median = quantile.Json()["data"]["result"];
  ASSERT_EQ(median.size(), 1u) << quantile.body;
  double seconds = 0;
  ASSERT_TRUE(absl::SimpleAtod(median[0]["value"][1].get<std::string>(),
                               &seconds));
  EXPECT_GT(seconds, 0);
  EXPECT_LT(seconds, 10);
  // What Prometheus answered, for whoever reads the test's output.
  std::cout << "prometheus: " << query << " -> "
            << answer["data"]["result"].dump() << "\n"
            << "prometheus: histogram_quantile(0.5, ...) -> " << median.dump()
            << "\n";

  // Every query of the dashboard, as Grafana sends it (all servers, a
  // minute's rate): no error; the request and latency panels have data.
  const auto queries = DashboardQueries();
  ASSERT_FALSE(queries.empty());
  for (const auto& [title, expr] : queries) {
    const std::string query = absl::StrReplaceAll(
        expr, {{"$__rate_interval", "1m"}, {"$server", ".*"}});
    const bool needs_data = absl::StrContains(title, "Requests") ||
                            absl::StrContains(title, "Latency");
    json answered;
    EXPECT_TRUE(WaitUntil(
        [&] {
          HttpResult result =
              Curl({"-G", "--data-urlencode", "query=" + query, api});
          answered = result.Json();
          if (result.status != 200 || !answered.is_object() ||
              answered.value("status", "") != "success") {
            return false;
          }
          return !needs_data || !answered["data"]["result"].empty();
        },
        absl::Seconds(30), title))
        << title << ": " << query << "\n" << answered.dump();
  }
}

}  // namespace
}  // namespace metrics_e2e_test
}  // namespace inspector
