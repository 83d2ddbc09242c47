// What `inspectorctl tui`'s explore report (key `e`) says of a server: its
// tools and its skills (the io.modelcontextprotocol/skills extension), the
// skills numbered so that a digit shows one (`skills/get`, RenderSkill).
// The screen (commands/tui_actions.cc) makes the calls and shows these
// lines in the detail pane. Pure functions; thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_TUI_EXPLORE_H_
#define INSPECTOR_CLIENTS_CLI_TUI_EXPLORE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "inspector/v1/mcp.pb.h"

namespace inspector::cli {

// How many skills a digit can show (1-9).
inline constexpr int kTuiExploreSkillKeys = 9;

// "EXPLORE NAME", the skills ("[1] name — description"), then the tools
// (name, title, description), each list's error instead of it when its call
// failed (a server without the skills extension answers -32601), and the
// keys.
std::vector<std::string> ExploreReportLines(
    const std::string& server_name,
    const absl::StatusOr<v1::ListToolsResponse>& tools,
    const absl::StatusOr<v1::ListSkillsResponse>& skills);

// `skills/get` of one skill: "SKILL NAME (skills/get)", then RenderSkill's
// lines, then the keys.
std::vector<std::string> SkillReportLines(const v1::Skill& skill);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_TUI_EXPLORE_H_
