#include "server/telemetry/otlp_metrics_encoder.h"

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/version.h"
#include "server/telemetry/otlp_encoder.h"

namespace inspector::telemetry {
namespace {

namespace otlp_metrics = opentelemetry::proto::collector::metrics::v1;
using Type = metrics::MetricsRegistry::Type;
using FamilySnapshot = metrics::MetricsRegistry::FamilySnapshot;
using SeriesSnapshot = metrics::MetricsRegistry::SeriesSnapshot;

// Underscores to dots, but for the conventions' own underscores.
std::string Dotted(absl::string_view name) {
  std::string dotted = absl::StrReplaceAll(name, {{"_", "."}});
  if (absl::StartsWith(dotted, "gen.ai.")) dotted.replace(0, 6, "gen_ai");
  if (absl::EndsWith(dotted, ".status.code")) {
    dotted.replace(dotted.size() - 5, 1, "_");
  }
  return dotted;
}

void WriteLabels(
    const FamilySnapshot& family, const SeriesSnapshot& series,
    google::protobuf::RepeatedPtrField<
        opentelemetry::proto::collector::trace::v1::KeyValue>* out) {
  Attributes attributes;
  for (size_t i = 0;
       i < family.label_names.size() && i < series.label_values.size(); ++i) {
    if (series.label_values[i].empty()) continue;
    attributes.push_back(
        {OtelAttributeKeyOf(family.label_names[i]), series.label_values[i]});
  }
  WriteAttributes(attributes, out);
}

}  // namespace

OtelMetricName OtelMetricNameOf(std::string_view name, Type type) {
  absl::string_view rest(name.data(), name.size());
  if (type == Type::kCounter) rest = absl::StripSuffix(rest, "_total");
  OtelMetricName out;
  if (absl::ConsumeSuffix(&rest, "_seconds")) {
    out.unit = "s";
  } else if (absl::ConsumeSuffix(&rest, "_bytes")) {
    out.unit = "By";
  }
  out.name = Dotted(rest);
  return out;
}

std::string OtelAttributeKeyOf(std::string_view label) {
  return Dotted(absl::string_view(label.data(), label.size()));
}

otlp_metrics::ExportMetricsServiceRequest EncodeMetrics(
    const Attributes& resource, absl::Span<const FamilySnapshot> families,
    absl::Time start, absl::Time now) {
  otlp_metrics::ExportMetricsServiceRequest request;
  otlp_metrics::ResourceMetrics* resource_metrics =
      request.add_resource_metrics();
  WriteAttributes(resource,
                  resource_metrics->mutable_resource()->mutable_attributes());
  otlp_metrics::ScopeMetrics* scope = resource_metrics->add_scope_metrics();
  scope->mutable_scope()->set_name(kScopeName);
  scope->mutable_scope()->set_version(std::string(Version()));
  const uint64_t start_nanos = UnixNanos(start);
  const uint64_t now_nanos = UnixNanos(now);
  for (const FamilySnapshot& family : families) {
    if (family.series.empty()) continue;
    otlp_metrics::Metric* metric = scope->add_metrics();
    const OtelMetricName name = OtelMetricNameOf(family.name, family.type);
    metric->set_name(name.name);
    metric->set_unit(name.unit);
    metric->set_description(family.help);
    if (family.type == Type::kHistogram) {
      otlp_metrics::Histogram* histogram = metric->mutable_histogram();
      histogram->set_aggregation_temporality(
          otlp_metrics::AGGREGATION_TEMPORALITY_CUMULATIVE);
      for (const SeriesSnapshot& series : family.series) {
        otlp_metrics::HistogramDataPoint* point = histogram->add_data_points();
        WriteLabels(family, series, point->mutable_attributes());
        point->set_start_time_unix_nano(start_nanos);
        point->set_time_unix_nano(now_nanos);
        point->set_count(series.count());
        point->set_sum(series.sum);
        for (double bound : family.bounds) point->add_explicit_bounds(bound);
        // The snapshot's buckets are cumulative; OTLP's are not.
        uint64_t below = 0;
        for (uint64_t cumulative : series.buckets) {
          point->add_bucket_counts(cumulative - below);
          below = cumulative;
        }
      }
      continue;
    }
    google::protobuf::RepeatedPtrField<otlp_metrics::NumberDataPoint>* points;
    if (family.type == Type::kCounter) {
      otlp_metrics::Sum* sum = metric->mutable_sum();
      sum->set_aggregation_temporality(
          otlp_metrics::AGGREGATION_TEMPORALITY_CUMULATIVE);
      sum->set_is_monotonic(true);
      points = sum->mutable_data_points();
    } else {
      points = metric->mutable_gauge()->mutable_data_points();
    }
    for (const SeriesSnapshot& series : family.series) {
      otlp_metrics::NumberDataPoint* point = points->Add();
      WriteLabels(family, series, point->mutable_attributes());
      if (family.type == Type::kCounter) {
        point->set_start_time_unix_nano(start_nanos);
      }
      point->set_time_unix_nano(now_nanos);
      point->set_as_double(series.value);
    }
  }
  return request;
}

}  // namespace inspector::telemetry
