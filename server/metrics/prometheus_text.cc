#include "server/metrics/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"

namespace inspector::metrics {
namespace {

const char* TypeName(MetricsRegistry::Type type) {
  switch (type) {
    case MetricsRegistry::Type::kCounter:
      return "counter";
    case MetricsRegistry::Type::kGauge:
      return "gauge";
    case MetricsRegistry::Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Backslash and line feed escaped, as HELP text and label values need;
// with `quotes`, double quotes too (label values only).
std::string EscapeExposition(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quotes && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

// `{a="x",b="y"` (no closing brace; "" when no label has a value) for
// `values` of the labels `names`, with `extra` (already formatted, e.g.
// le="0.5") appended.
std::string LabelText(const std::vector<std::string>& names,
                      const std::vector<std::string>& values,
                      std::string_view extra) {
  std::string text;
  for (size_t i = 0; i < values.size() && i < names.size(); ++i) {
    if (values[i].empty()) continue;
    absl::StrAppend(&text, text.empty() ? "{" : ",", names[i], "=\"",
                    EscapeLabelValue(values[i]), "\"");
  }
  if (!extra.empty()) {
    text += text.empty() ? "{" : ",";
    text.append(extra.data(), extra.size());
  }
  return text;
}

void RenderSeries(const MetricsRegistry::FamilySnapshot& family,
                  std::string* out) {
  const std::string& name = family.name;
  for (const MetricsRegistry::SeriesSnapshot& series : family.series) {
    if (family.type == MetricsRegistry::Type::kHistogram) {
      for (size_t i = 0; i < series.buckets.size(); ++i) {
        std::string le = absl::StrCat(
            "le=\"",
            i < family.bounds.size() ? FormatValue(family.bounds[i]) : "+Inf",
            "\"");
        absl::StrAppend(out, name, "_bucket",
                        LabelText(family.label_names, series.label_values, le),
                        "} ", series.buckets[i], "\n");
      }
      std::string labels =
          LabelText(family.label_names, series.label_values, "");
      const char* close = labels.empty() ? "" : "}";
      absl::StrAppend(out, name, "_sum", labels, close, " ",
                      FormatValue(series.sum), "\n");
      absl::StrAppend(out, name, "_count", labels, close, " ", series.count(),
                      "\n");
    } else {
      std::string labels =
          LabelText(family.label_names, series.label_values, "");
      absl::StrAppend(out, name, labels, labels.empty() ? "" : "}", " ",
                      FormatValue(series.value), "\n");
    }
  }
}

}  // namespace

std::string RenderPrometheusText(
    absl::Span<const MetricsRegistry::FamilySnapshot> families) {
  std::string out;
  for (const MetricsRegistry::FamilySnapshot& family : families) {
    absl::StrAppend(&out, "# HELP ", family.name, " ", EscapeHelp(family.help),
                    "\n# TYPE ", family.name, " ", TypeName(family.type),
                    "\n");
    RenderSeries(family, &out);
  }
  return out;
}

std::string EscapeHelp(std::string_view text) {
  return EscapeExposition(text, /*quotes=*/false);
}

std::string EscapeLabelValue(std::string_view text) {
  return EscapeExposition(text, /*quotes=*/true);
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  if (ec != std::errc()) return absl::StrCat(value);
  return std::string(buf, end);
}

}  // namespace inspector::metrics
