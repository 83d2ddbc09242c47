// How inspectorctl shows the Skills extension: the skills table, one skill,
// and the report of `skills get --verify` (inspector.v1.SkillVerification).
// Pure functions of their arguments; thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_SKILL_VIEWS_H_
#define INSPECTOR_CLIENTS_CLI_SKILL_VIEWS_H_

#include <string>

#include "clients/cli/table.h"
#include "inspector/v1/mcp.pb.h"

namespace inspector::cli {

// NAME, URI, FILES ("dynamic" or the manifest's count), DESCRIPTION.
Table SkillsTable(const v1::ListSkillsResponse& response);

// A skill: its name, URI, description and manifest (URI, size, digest).
std::string RenderSkill(const v1::Skill& skill);

// The verification report: the problems of the entry (severity, code,
// file, message), one line per file (status, URI, and for a mismatch the
// expected and actual size or digest), and a last line with the verdict
// and the counts.
std::string RenderSkillVerification(const v1::SkillVerification& report);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_SKILL_VIEWS_H_
