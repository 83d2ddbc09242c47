#include "clients/cli/doctor_views.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cli/text.h"

namespace inspector::cli {
namespace {

constexpr size_t kNameWidth = 11;
constexpr size_t kTimeWidth = 8;

const char* Word(v1::CheckStatus status) {
  switch (status) {
    case v1::CHECK_PASS:
      return "PASS";
    case v1::CHECK_WARN:
      return "WARN";
    case v1::CHECK_FAIL:
      return "FAIL";
    case v1::CHECK_SKIP:
      return "SKIP";
    default:
      return "????";
  }
}

const char* Color(v1::CheckStatus status) {
  switch (status) {
    case v1::CHECK_PASS:
      return "\033[32m";
    case v1::CHECK_WARN:
      return "\033[33m";
    case v1::CHECK_FAIL:
      return "\033[1;31m";
    default:
      return "\033[2m";
  }
}

std::string CheckDuration(double ms) {
  if (ms >= 1000) return absl::StrFormat("%.1f s", ms / 1000);
  if (ms >= 10) return absl::StrFormat("%.0f ms", ms);
  return absl::StrFormat("%.1f ms", ms);
}

std::string PadRight(const std::string& text, size_t width) {
  size_t w = DisplayWidth(text);
  return w >= width ? text : text + std::string(width - w, ' ');
}

std::string PadLeft(const std::string& text, size_t width) {
  size_t w = DisplayWidth(text);
  return w >= width ? text : std::string(width - w, ' ') + text;
}

}  // namespace

std::string DoctorSummary(const v1::Diagnosis& diagnosis) {
  int counts[5] = {0, 0, 0, 0, 0};
  for (const v1::DoctorCheck& check : diagnosis.checks()) {
    int status = static_cast<int>(check.status());
    if (status >= 0 && status < 5) ++counts[status];
  }
  std::vector<std::string> parts;
  if (counts[v1::CHECK_FAIL] > 0) {
    parts.push_back(absl::StrCat(counts[v1::CHECK_FAIL], " failed"));
  }
  if (counts[v1::CHECK_WARN] > 0) {
    parts.push_back(absl::StrCat(counts[v1::CHECK_WARN], " warning",
                                 counts[v1::CHECK_WARN] == 1 ? "" : "s"));
  }
  parts.push_back(absl::StrCat(counts[v1::CHECK_PASS], " passed"));
  if (counts[v1::CHECK_SKIP] > 0) {
    parts.push_back(absl::StrCat(counts[v1::CHECK_SKIP], " skipped"));
  }
  std::string out = absl::StrCat(absl::StrJoin(parts, ", "), " in ",
                                 CheckDuration(diagnosis.duration_ms()));
  if (diagnosis.timed_out()) absl::StrAppend(&out, " (timed out)");
  return out;
}

std::string FailedChecks(const v1::Diagnosis& diagnosis) {
  std::vector<std::string> names;
  for (const v1::DoctorCheck& check : diagnosis.checks()) {
    if (check.status() == v1::CHECK_FAIL) names.push_back(check.name());
  }
  return SanitizeForTerminal(absl::StrJoin(names, ", "));
}

std::string DoctorReport(const v1::Diagnosis& diagnosis,
                         const DoctorViewOptions& options) {
  const std::string reset = options.color ? "\033[0m" : "";
  const std::string bold = options.color ? "\033[1m" : "";
  std::string out =
      absl::StrCat(bold, SanitizeForTerminal(diagnosis.server_name()), reset,
                   " (", SanitizeForTerminal(diagnosis.transport()), ")\n");
  const std::string indent(4 + 2 + kNameWidth + 2 + kTimeWidth + 2, ' ');
  for (const v1::DoctorCheck& check : diagnosis.checks()) {
    std::string color = options.color ? Color(check.status()) : "";
    std::string time = check.status() == v1::CHECK_SKIP
                           ? std::string("-")
                           : CheckDuration(check.duration_ms());
    absl::StrAppend(&out, color, Word(check.status()), reset, "  ",
                    PadRight(SanitizeForTerminal(check.name()), kNameWidth),
                    "  ", PadLeft(time, kTimeWidth), "  ",
                    SanitizeForTerminal(OneLine(check.found())), "\n");
    for (const std::string& detail : check.details()) {
      absl::StrAppend(&out, indent, SanitizeForTerminal(detail), "\n");
    }
    if (!check.fix().empty()) {
      absl::StrAppend(&out, indent, color, "fix:", reset, " ",
                      SanitizeForTerminal(OneLine(check.fix())), "\n");
    }
  }
  absl::StrAppend(&out, "\n", DoctorSummary(diagnosis), "\n");
  return out;
}

}  // namespace inspector::cli
