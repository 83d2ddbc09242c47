#include "clients/cli/verify_report.h"

#include "absl/strings/str_cat.h"
#include "clients/cli/session_views.h"
#include "clients/cli/text.h"

namespace inspector::cli {
namespace {

// What a pair's status says, in the report's words.
std::string VerdictOf(const v1::DiffPair& pair) {
  if (pair.status() == "same") return "matches";
  if (pair.status() == "only_a") return "not answered by the server";
  if (pair.status() == "only_b") return "not in the recording";
  if (pair.status() == "method_differs") {
    return absl::StrCat("replayed as ", pair.b_method());
  }
  return "differs";
}

std::string ChangeLine(const v1::DiffChange& c) {
  return absl::StrCat(
      c.path().empty() ? "/" : c.path(), ": recorded ",
      c.has_old_value() ? DiffValueText(c.old_value()) : "absent",
      ", actual ", c.has_new_value() ? DiffValueText(c.new_value()) : "absent");
}

std::string PairName(const v1::DiffPair& pair) {
  return absl::StrCat("#", pair.index(), " ",
                      pair.method().empty() ? "-" : pair.method());
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows no control characters but tab, CR and LF.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' &&
            c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string SuiteName(const VerifySubject& subject) {
  return absl::StrCat("verify ", subject.recording, " against ",
                      subject.server.empty() ? "the recorded server"
                                             : subject.server);
}

}  // namespace

std::string VerifyText(const v1::VerifySessionResponse& response,
                       const VerifySubject& subject, bool all) {
  const v1::DiffSessionsResponse& diff = response.diff();
  std::string out;
  for (const v1::DiffPair& pair : diff.pairs()) {
    if (!all && pair.status() == "same") continue;
    absl::StrAppend(&out, PairName(pair), ": ", VerdictOf(pair), "\n");
    for (const v1::DiffChange& c : pair.changes()) {
      absl::StrAppend(&out, "  ", ChangeLine(c), "\n");
    }
  }
  absl::StrAppend(&out, response.passed() ? "PASS: " : "FAIL: ");
  if (response.passed()) {
    absl::StrAppend(&out, "all ", diff.pairs_size(), " answers match");
  } else {
    absl::StrAppend(&out, diff.differing(), " of ", diff.pairs_size(),
                    " answers differ");
  }
  absl::StrAppend(&out, " (", SuiteName(subject), "; replay session ",
                  response.session().id(), ")\n");
  return SanitizeText(out);
}

std::string VerifyJunit(const v1::VerifySessionResponse& response,
                        const VerifySubject& subject) {
  const v1::DiffSessionsResponse& diff = response.diff();
  const std::string suite = XmlEscape(SuiteName(subject));
  const std::string classname = XmlEscape(
      absl::StrCat("inspectorctl.verify.", subject.recording));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(&out, "<testsuites name=\"", suite, "\" tests=\"",
                  diff.pairs_size(), "\" failures=\"", diff.differing(),
                  "\" errors=\"0\">\n");
  absl::StrAppend(&out, "  <testsuite name=\"", suite, "\" tests=\"",
                  diff.pairs_size(), "\" failures=\"", diff.differing(),
                  "\" errors=\"0\" skipped=\"0\">\n");
  absl::StrAppend(&out, "    <properties>\n",
                  "      <property name=\"replay_session\" value=\"",
                  XmlEscape(response.session().id()), "\"/>\n");
  for (const std::string& p : diff.ignored()) {
    absl::StrAppend(&out, "      <property name=\"ignored\" value=\"",
                    XmlEscape(p), "\"/>\n");
  }
  absl::StrAppend(&out, "    </properties>\n");
  for (const v1::DiffPair& pair : diff.pairs()) {
    absl::StrAppend(&out, "    <testcase classname=\"", classname,
                    "\" name=\"", XmlEscape(PairName(pair)), "\"");
    if (pair.status() == "same") {
      absl::StrAppend(&out, "/>\n");
      continue;
    }
    std::string message = VerdictOf(pair);
    if (pair.changes_size() > 0) message = ChangeLine(pair.changes(0));
    std::string text;
    for (const v1::DiffChange& c : pair.changes()) {
      absl::StrAppend(&text, ChangeLine(c), "\n");
    }
    absl::StrAppend(&out, ">\n      <failure type=\"", XmlEscape(pair.status()),
                    "\" message=\"", XmlEscape(message), "\">",
                    XmlEscape(text), "</failure>\n    </testcase>\n");
  }
  absl::StrAppend(&out, "  </testsuite>\n</testsuites>\n");
  return out;
}

}  // namespace inspector::cli
