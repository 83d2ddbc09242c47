// Checks of the Skills extension (io.modelcontextprotocol/skills,
// SEP-2640) that need no server: turning a skill entry (a `skills/list` or
// `skills/get` item) into its protobuf form, the rules an entry must follow
// (name, description, URI, manifest), one manifest file against the
// `resources/read` answer for it (size and sha256 digest), and the verdict
// over all of them. McpService::VerifySkill does the reading and calls
// these. Pure functions; thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_SKILL_CHECK_H_
#define INSPECTOR_SERVER_SERVICES_SKILL_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "inspector/v1/mcp.pb.h"
#include "nlohmann/json.hpp"

namespace inspector::services {

// The extension's key in capabilities.extensions.
inline constexpr char kSkillsExtension[] = "io.modelcontextprotocol/skills";

// The directory name of a skill URI ("skill://a/b/SKILL.md" -> "b"), or ""
// when the URI does not end in "/SKILL.md" after a non-empty segment.
std::string SkillNameFromUri(const std::string& uri);

// `entry` (one skill object) as a v1::Skill; what is missing stays empty.
void SkillFromJson(const nlohmann::json& entry, v1::Skill* out);

// The rules `entry` breaks: errors (the entry is not conforming) and
// warnings (conforming, but a host may not take it all).
std::vector<v1::SkillIssue> CheckSkillEntry(const nlohmann::json& entry);

// "sha256:" and the lowercase hex SHA-256 of `bytes`.
std::string SkillDigest(const std::string& bytes);

// `file` against `read`, the resources/read result for its URI (or why
// the read failed).
v1::SkillFileCheck CheckSkillFile(const v1::SkillFile& file,
                                  const absl::StatusOr<nlohmann::json>& read);

// Counts the file checks of `verification` and sets its verdict (see
// v1::SkillVerification).
void ConcludeSkillVerification(bool require_digests,
                               v1::SkillVerification* verification);

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_SKILL_CHECK_H_
