// The Prometheus text exposition format 0.0.4 of a registry snapshot
// (MetricsRegistry::Snapshot): "# HELP" and "# TYPE" per family, then its
// series, a histogram as its cumulative _bucket series (with "le"), _sum
// and _count. A label whose value is empty is left out of the series'
// text, as Prometheus treats it as absent.
//
// Pure functions of their arguments, owning nothing; any thread.
#ifndef INSPECTOR_SERVER_METRICS_PROMETHEUS_TEXT_H_
#define INSPECTOR_SERVER_METRICS_PROMETHEUS_TEXT_H_

#include <string>
#include <string_view>

#include "absl/types/span.h"
#include "server/metrics/metrics_registry.h"

namespace inspector::metrics {

// Every family of `families`, in their order.
std::string RenderPrometheusText(
    absl::Span<const MetricsRegistry::FamilySnapshot> families);

// HELP text: backslash and line feed escaped.
std::string EscapeHelp(std::string_view text);
// A label value: backslash, line feed and double quote escaped.
std::string EscapeLabelValue(std::string_view text);
// A sample value: the shortest text that reads back the same double;
// "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

}  // namespace inspector::metrics

#endif  // INSPECTOR_SERVER_METRICS_PROMETHEUS_TEXT_H_
