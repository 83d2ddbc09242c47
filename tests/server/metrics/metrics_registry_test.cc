#include "server/metrics/metrics_registry.h"
#include "server/metrics/prometheus_text.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::metrics {
namespace metrics_registry_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(MetricsRegistryTest, CounterFamilyRendersHelpTypeAndSortedSeries) {
  MetricsRegistry registry;
  auto* calls = registry.AddCounter("calls_total", "Calls made.", {"method"});
  calls->With({"tools/list"})->Add();
  calls->With({"tools/call"})->Add(3);
  calls->With({"tools/call"})->Add();
  EXPECT_EQ(registry.Render(),
            "# HELP calls_total Calls made.\n"
            "# TYPE calls_total counter\n"
            "calls_total{method=\"tools/call\"} 4\n"
            "calls_total{method=\"tools/list\"} 1\n");
}

TEST(MetricsRegistryTest, SameLabelValuesGiveTheSameSeries) {
  MetricsRegistry registry;
  auto* family = registry.AddGauge("g", "A gauge.", {"a", "b"});
  MetricsRegistry::Gauge* first = family->With({"x", "y"});
  EXPECT_EQ(first, family->With({"x", "y"}));
  // Values are told apart even where their concatenations agree.
  EXPECT_NE(family->With({"xy", ""}), family->With({"x", "y"}));
  first->Set(2.5);
  first->Add(-1);
  EXPECT_DOUBLE_EQ(first->value(), 1.5);
}

TEST(MetricsRegistryTest, EmptyLabelValuesAreLeftOut) {
  MetricsRegistry registry;
  auto* family = registry.AddGauge("g", "A gauge.", {"a", "b"});
  family->With({"", "y"})->Set(1);
  family->With({"", ""})->Set(2);
  EXPECT_THAT(registry.Render(), HasSubstr("\ng{b=\"y\"} 1\n"));
  EXPECT_THAT(registry.Render(), HasSubstr("\ng 2\n"));
}

TEST(MetricsRegistryTest, EscapesHelpAndLabelValues) {
  EXPECT_EQ(EscapeHelp("a\\b\nc\"d"), "a\\\\b\\nc\"d");
  EXPECT_EQ(EscapeLabelValue("a\\b\nc\"d"),
            "a\\\\b\\nc\\\"d");
  MetricsRegistry registry;
  registry.AddCounter("c_total", "Line one\nline two \\ end", {"tool"})
      ->With({"say \"hi\"\n"})
      ->Add();
  EXPECT_EQ(registry.Render(),
            "# HELP c_total Line one\\nline two \\\\ end\n"
            "# TYPE c_total counter\n"
            "c_total{tool=\"say \\\"hi\\\"\\n\"} 1\n");
}

TEST(MetricsRegistryTest, FormatsValuesAsPrometheusParsesThem) {
  EXPECT_EQ(FormatValue(0.005), "0.005");
  EXPECT_EQ(FormatValue(300), "300");
  EXPECT_EQ(FormatValue(-1.5), "-1.5");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(FormatValue(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(FormatValue(0.0 / 0.0), "NaN");
}

TEST(MetricsRegistryTest, ChecksNames) {
  EXPECT_TRUE(MetricsRegistry::ValidMetricName("mcp_client_operation_duration_seconds"));
  EXPECT_TRUE(MetricsRegistry::ValidMetricName("a:b_c9"));
  EXPECT_FALSE(MetricsRegistry::ValidMetricName("mcp.client"));
  EXPECT_FALSE(MetricsRegistry::ValidMetricName("9a"));
  EXPECT_FALSE(MetricsRegistry::ValidMetricName(""));
  EXPECT_TRUE(MetricsRegistry::ValidLabelName("gen_ai_tool_name"));
  EXPECT_FALSE(MetricsRegistry::ValidLabelName("a:b"));
  EXPECT_FALSE(MetricsRegistry::ValidLabelName("__name__"));
  EXPECT_FALSE(MetricsRegistry::ValidLabelName("gen_ai.tool.name"));
}

TEST(MetricsRegistryDeathTest, MisuseAborts) {
  EXPECT_DEATH(
      {
        MetricsRegistry registry;
        registry.AddCounter("bad.name", "x", {});
      },
      "bad metric name");
  EXPECT_DEATH(
      {
        MetricsRegistry registry;
        registry.AddHistogram("h", "x", {"le"}, {1});
      },
      "bad label name le");
  EXPECT_DEATH(
      {
        MetricsRegistry registry;
        registry.AddCounter("c_total", "x", {});
        registry.AddGauge("c_total", "x", {});
      },
      "registered twice");
  EXPECT_DEATH(
      {
        MetricsRegistry registry;
        registry.AddCounter("c_total", "x", {"a"})->With({"1", "2"});
      },
      "has 1 labels, given 2 values");
  EXPECT_DEATH(
      {
        MetricsRegistry registry;
        registry.AddHistogram("h", "x", {}, {2, 1});
      },
      "bucket bounds");
}

TEST(MetricsRegistryTest, HistogramBucketsAreCumulativeWithLeInclusive) {
  MetricsRegistry registry;
  auto* family = registry.AddHistogram("latency_seconds", "Latency.",
                                       {"method"}, {0.1, 1, 10});
  MetricsRegistry::Histogram* h = family->With({"ping"});
  for (double v : {0.05, 0.1, 0.5, 1.0, 20.0}) h->Observe(v);
  EXPECT_THAT(h->CumulativeCounts(), ElementsAre(2, 4, 4, 5));
  EXPECT_DOUBLE_EQ(h->sum(), 21.65);
  EXPECT_EQ(registry.Render(),
            "# HELP latency_seconds Latency.\n"
            "# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{method=\"ping\",le=\"0.1\"} 2\n"
            "latency_seconds_bucket{method=\"ping\",le=\"1\"} 4\n"
            "latency_seconds_bucket{method=\"ping\",le=\"10\"} 4\n"
            "latency_seconds_bucket{method=\"ping\",le=\"+Inf\"} 5\n"
            "latency_seconds_sum{method=\"ping\"} 21.65\n"
            "latency_seconds_count{method=\"ping\"} 5\n");
}

// What an exporter reads: the same families, series, values and buckets
// the text shows, in the same order.
TEST(MetricsRegistryTest, SnapshotHoldsWhatTheTextShows) {
  MetricsRegistry registry;
  registry.AddCounter("c_total", "C.", {"t"})->With({"b"})->Add(3);
  registry.AddCounter("c_total_2", "C2.", {"t"})->With({""})->Add();
  auto* latency = registry.AddHistogram("h", "H.", {"m"}, {0.1, 1});
  latency->With({"x"})->Observe(0.5);
  latency->With({"x"})->Observe(5);
  latency->With({"a"})->Observe(0.05);
  registry.AddCallback("g", "G.", MetricsRegistry::Type::kGauge, {"k"}, [] {
    return std::vector<MetricsRegistry::Sample>{{{"z"}, 1.5}, {{"y", "n"}, 9}};
  });

  std::vector<MetricsRegistry::FamilySnapshot> families = registry.Snapshot();
  ASSERT_EQ(families.size(), 4u);
  EXPECT_EQ(families[0].name, "c_total");
  EXPECT_EQ(families[0].help, "C.");
  EXPECT_EQ(families[0].type, MetricsRegistry::Type::kCounter);
  EXPECT_THAT(families[0].label_names, ElementsAre("t"));
  ASSERT_EQ(families[0].series.size(), 1u);
  EXPECT_THAT(families[0].series[0].label_values, ElementsAre("b"));
  EXPECT_EQ(families[0].series[0].value, 3);
  // An empty value is kept in the snapshot (the text leaves it out).
  EXPECT_THAT(families[1].series[0].label_values, ElementsAre(""));

  const MetricsRegistry::FamilySnapshot& h = families[2];
  EXPECT_EQ(h.type, MetricsRegistry::Type::kHistogram);
  EXPECT_THAT(h.bounds, ElementsAre(0.1, 1));
  ASSERT_EQ(h.series.size(), 2u);
  EXPECT_THAT(h.series[0].label_values, ElementsAre("a"));  // sorted
  EXPECT_THAT(h.series[1].buckets, ElementsAre(0, 1, 2));
  EXPECT_EQ(h.series[1].count(), 2u);
  EXPECT_DOUBLE_EQ(h.series[1].sum, 5.5);

  // Callback samples with the wrong number of label values are skipped.
  ASSERT_EQ(families[3].series.size(), 1u);
  EXPECT_EQ(families[3].type, MetricsRegistry::Type::kGauge);
  EXPECT_EQ(families[3].series[0].value, 1.5);

  EXPECT_EQ(RenderPrometheusText(families), registry.Render());
}

TEST(MetricsRegistryTest, HistogramWithoutLabels) {
  MetricsRegistry registry;
  registry.AddHistogram("h", "H.", {}, {1})->With({})->Observe(2);
  EXPECT_EQ(registry.Render(),
            "# HELP h H.\n# TYPE h histogram\n"
            "h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 1\n"
            "h_sum 2\nh_count 1\n");
}

TEST(MetricsRegistryTest, CallbackFamiliesAreReadAtEachRender) {
  MetricsRegistry registry;
  int calls = 0;
  registry.AddCallback("sessions", "Open sessions.",
                       MetricsRegistry::Type::kGauge, {"kind"}, [&calls] {
                         ++calls;
                         return std::vector<MetricsRegistry::Sample>{
                             {{"proxy"}, 2},
                             {{"front_door"}, static_cast<double>(calls)},
                             {{"too", "many"}, 9}};
                       });
  registry.Render();
  EXPECT_EQ(registry.Render(),
            "# HELP sessions Open sessions.\n# TYPE sessions gauge\n"
            "sessions{kind=\"front_door\"} 2\n"
            "sessions{kind=\"proxy\"} 2\n");
}

TEST(MetricsRegistryTest, FamiliesRenderInTheOrderAdded) {
  MetricsRegistry registry;
  registry.AddGauge("z", "Z.", {})->With({})->Set(1);
  registry.AddGauge("a", "A.", {})->With({})->Set(2);
  std::vector<std::string> lines = absl::StrSplit(registry.Render(), '\n');
  ASSERT_GE(lines.size(), 6u);
  EXPECT_EQ(lines[0], "# HELP z Z.");
  EXPECT_EQ(lines[3], "# HELP a A.");
}

TEST(MetricsRegistryTest, SeriesBeyondTheLimitShareOneOverflowSeries) {
  MetricsRegistry registry;
  auto* family = registry.AddCounter("c_total", "C.", {"tool", "server"});
  for (size_t i = 0; i < MetricsRegistry::kMaxSeries; ++i) {
    family->With({std::to_string(i), "s"})->Add();
  }
  MetricsRegistry::Counter* extra = family->With({"one more", "s"});
  EXPECT_EQ(extra, family->With({"and another", "t"}));
  EXPECT_NE(extra, family->With({"0", "s"}));  // known ones stay
  extra->Add(5);
  EXPECT_THAT(registry.Render(),
              HasSubstr("\nc_total{tool=\"_OTHER\",server=\"_OTHER\"} 5\n"));
}

TEST(MetricsRegistryTest, ConcurrentUpdatesAreAllCounted) {
  MetricsRegistry registry;
  auto* counters = registry.AddCounter("c_total", "C.", {"t"});
  auto* histograms = registry.AddHistogram("h", "H.", {"t"}, {0.5});
  constexpr int kThreads = 4;
  constexpr int kEach = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        counters->With({t % 2 == 0 ? "even" : "odd"})->Add();
        histograms->With({"all"})->Observe(i % 2 == 0 ? 0.25 : 1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counters->With({"even"})->value() + counters->With({"odd"})->value(),
            uint64_t{kThreads * kEach});
  EXPECT_THAT(histograms->With({"all"})->CumulativeCounts(),
              ElementsAre(kThreads * kEach / 2, kThreads * kEach));
  EXPECT_DOUBLE_EQ(histograms->With({"all"})->sum(),
                   kThreads * kEach / 2 * 1.25);
}

}  // namespace
}  // namespace metrics_registry_test
}  // namespace inspector::metrics
