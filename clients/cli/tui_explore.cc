#include "clients/cli/tui_explore.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "clients/cli/skill_views.h"
#include "clients/cli/text.h"

namespace inspector::cli {

namespace {

// What a server named: on one line, no control characters.
std::string Shown(const std::string& text) {
  return SanitizeForTerminal(OneLine(text));
}

// " — text" when there is a text.
std::string Dash(const std::string& text) {
  return text.empty() ? "" : absl::StrCat(" — ", Shown(text));
}

void AppendLines(const std::string& text, std::vector<std::string>* lines) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    lines->push_back(std::string(line));
  }
  while (!lines->empty() && lines->back().empty()) lines->pop_back();
}

}  // namespace

std::vector<std::string> ExploreReportLines(
    const std::string& server_name,
    const absl::StatusOr<v1::ListToolsResponse>& tools,
    const absl::StatusOr<v1::ListSkillsResponse>& skills) {
  std::vector<std::string> lines = {absl::StrCat("EXPLORE ", server_name), ""};
  if (!skills.ok()) {
    lines.push_back(absl::StrCat(
        "Skills: the list failed: ",
        Shown(std::string(skills.status().message()))));
  } else {
    lines.push_back(absl::StrCat("Skills (", skills->skills_size(), ")"));
    int number = 0;
    for (const v1::Skill& skill : skills->skills()) {
      ++number;
      const std::string key = number <= kTuiExploreSkillKeys
                                  ? absl::StrCat("[", number, "] ")
                                  : "    ";
      lines.push_back(absl::StrCat(
          "  ", key, Shown(skill.name().empty() ? skill.uri() : skill.name()),
          Dash(skill.description())));
    }
  }
  lines.push_back("");
  if (!tools.ok()) {
    lines.push_back(absl::StrCat("Tools: the list failed: ",
                                 Shown(std::string(tools.status().message()))));
  } else {
    lines.push_back(absl::StrCat("Tools (", tools->tools_size(), ")"));
    for (const v1::Tool& tool : tools->tools()) {
      lines.push_back(absl::StrCat(
          "  ", Shown(tool.name()),
          tool.title().empty() ? ""
                               : absl::StrCat(" (", Shown(tool.title()), ")"),
          Dash(tool.description())));
    }
  }
  lines.push_back("");
  lines.push_back(
      skills.ok() && skills->skills_size() > 0
          ? "(1-9 shows that skill, J/K scroll, Esc or any other key closes)"
          : "(J/K scroll, Esc or any other key closes)");
  return lines;
}

std::vector<std::string> SkillReportLines(const v1::Skill& skill) {
  std::vector<std::string> lines = {
      absl::StrCat("SKILL ",
                   Shown(skill.name().empty() ? skill.uri() : skill.name()),
                   " (skills/get)"),
      ""};
  AppendLines(RenderSkill(skill), &lines);
  lines.push_back("");
  lines.push_back(
      "(1-9 shows another skill, J/K scroll, Esc or any other key closes)");
  return lines;
}

}  // namespace inspector::cli
