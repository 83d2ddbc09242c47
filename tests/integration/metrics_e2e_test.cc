// End-to-end tests of the Prometheus metrics: a real inspectord with
// --http 127.0.0.1:0 and --metrics-listen 127.0.0.1:0, the fixture MCP
// server over stdio, curl as the scraper; and, when Debian's prometheus
// is installed, a real Prometheus scraping --metrics-listen, asked over
// its HTTP API.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

class MetricsTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    StartDaemonWithHttp({"--metrics-listen", "127.0.0.1:0"});
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

  std::string metrics_url_;  // http://127.0.0.1:PORT/metrics
};

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
  const std::string config_path = dir_.path() + "/prometheus.yml";
  {
    FILE* config = fopen(config_path.c_str(), "w");
    ASSERT_NE(config, nullptr);
    fprintf(config,
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: inspectord\n"
            "    static_configs:\n      - targets: ['%s']\n",
            target.c_str());
    fclose(config);
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
}

}  // namespace
}  // namespace metrics_e2e_test
}  // namespace inspector
