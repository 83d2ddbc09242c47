#include "clients/cli/skill_views.h"

#include "absl/strings/str_cat.h"
#include "clients/cli/text.h"

namespace inspector::cli {

Table SkillsTable(const v1::ListSkillsResponse& response) {
  Table table({"NAME", "URI", "FILES", "DESCRIPTION"});
  for (const v1::Skill& skill : response.skills()) {
    table.AddRow({skill.name(), skill.uri(),
                  skill.dynamic() ? "dynamic"
                                  : absl::StrCat(skill.files_size()),
                  OneLine(skill.description())});
  }
  return table;
}

std::string RenderSkill(const v1::Skill& skill) {
  std::string out = absl::StrCat("name:         ", skill.name(), "\n",
                                 "uri:          ", skill.uri(), "\n",
                                 "description:  ", OneLine(skill.description()),
                                 "\n");
  if (skill.dynamic()) {
    absl::StrAppend(&out,
                    "files:        dynamic (the server lists no manifest)\n");
    return SanitizeText(out);
  }
  absl::StrAppend(&out, "files:        ", skill.files_size(), "\n");
  for (const v1::SkillFile& file : skill.files()) {
    absl::StrAppend(&out, "  ", file.uri(), "  ",
                    file.has_size() ? absl::StrCat(file.size(), " bytes")
                                    : "no size",
                    "  ", file.digest().empty() ? "no digest" : file.digest(),
                    "\n");
  }
  return SanitizeText(out);
}

std::string RenderSkillVerification(const v1::SkillVerification& report) {
  std::string out = absl::StrCat("skill ", report.skill().name(), " (",
                                 report.skill().uri(), ")\n");
  for (const v1::SkillIssue& issue : report.issues()) {
    absl::StrAppend(&out, "  ", issue.severity(), " ", issue.code(),
                    issue.resource_uri().empty()
                        ? ""
                        : absl::StrCat(" ", issue.resource_uri()),
                    ": ", issue.message(), "\n");
  }
  for (const v1::SkillFileCheck& file : report.files()) {
    absl::StrAppend(&out, "  ", file.status(), " ", file.uri(), "\n");
    if (file.status() == "verified") continue;
    if (file.has_expected_size() && file.status() == "mismatch" &&
        file.expected_size() != file.actual_size()) {
      absl::StrAppend(&out, "      size      manifest ", file.expected_size(),
                      ", served ", file.actual_size(), "\n");
    }
    if (file.status() == "mismatch" && !file.actual_digest().empty() &&
        file.actual_digest() != file.expected_digest()) {
      absl::StrAppend(&out, "      manifest  ", file.expected_digest(), "\n",
                      "      served    ", file.actual_digest(), "\n");
    }
    if (!file.reason().empty()) {
      absl::StrAppend(&out, "      ", file.reason(), "\n");
    }
  }
  absl::StrAppend(&out, report.verdict(), ": ", report.files_size(),
                  report.files_size() == 1 ? " file" : " files", " read, ",
                  report.verified(), " verified, ", report.mismatched(),
                  " mismatched, ", report.unverifiable(), " unverifiable, ",
                  report.unreadable(), " unreadable");
  int errors = 0;
  int warnings = 0;
  for (const v1::SkillIssue& issue : report.issues()) {
    (issue.severity() == "error" ? errors : warnings) += 1;
  }
  absl::StrAppend(&out, "; ", errors, errors == 1 ? " error, " : " errors, ",
                  warnings, warnings == 1 ? " warning" : " warnings", "\n");
  return SanitizeText(out);
}

}  // namespace inspector::cli
