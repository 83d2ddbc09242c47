// `inspectorctl skills list|get SERVER ...`: the Skills extension
// (io.modelcontextprotocol/skills).
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/skill_views.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

using McpStub = v1::McpService::Stub;

// DESCRIPTION, the last column of the skills table, is cut to the width.
constexpr int kSkillDescriptionColumn = 3;

struct SkillListFlags {
  std::string server;
  PageFlags page;
};

absl::Status RunSkillsList(Context& context, const SkillListFlags& flags) {
  v1::ListRequest request;
  request.set_server_id(flags.server);
  request.set_cursor(flags.page.cursor);
  request.set_all(flags.page.all);
  request.set_refresh(flags.page.refresh);
  v1::ListSkillsResponse response;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::ListSkills,
                                     request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.skills().empty()) {
    context.out() << SanitizeForTerminal(flags.server) << " lists no skills\n";
  } else {
    context.PrintTable(SkillsTable(response), kSkillDescriptionColumn);
  }
  if (!flags.page.all) PrintMoreHint(context, response.next_cursor());
  PrintCacheNote(context, response.from_cache());
  return absl::OkStatus();
}

struct SkillGetFlags {
  std::string server;
  std::string skill;  // a URI (has "://") or a name
  bool verify = false;
  bool require_digests = false;
};

absl::Status RunSkillsGet(Context& context, const SkillGetFlags& flags) {
  const bool is_uri = absl::StrContains(flags.skill, "://");
  if (!flags.verify) {
    v1::SkillRequest request;
    request.set_server_id(flags.server);
    (is_uri ? request.mutable_uri() : request.mutable_name())
        ->assign(flags.skill);
    v1::GetSkillResponse response;
    RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::GetSkill,
                                       request, &response));
    if (context.json()) return context.PrintJson(response);
    context.out() << RenderSkill(response.skill());
    return absl::OkStatus();
  }
  v1::VerifySkillRequest request;
  request.set_server_id(flags.server);
  (is_uri ? request.mutable_uri() : request.mutable_name())
      ->assign(flags.skill);
  request.set_require_digests(flags.require_digests);
  v1::SkillVerification report;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::VerifySkill,
                                     request, &report));
  if (context.json()) {
    RETURN_IF_ERROR(context.PrintJson(report));
  } else {
    context.out() << RenderSkillVerification(report);
  }
  if (report.verdict() != "failed") return absl::OkStatus();
  Failure failure;
  failure.exit_code = kExitMcpServer;
  failure.message = absl::StrCat("skill ", report.skill().name(),
                                 " failed verification");
  if (report.mismatched() == 0 && report.unreadable() == 0 &&
      flags.require_digests) {
    failure.hint =
        "--require-digests: a skill without digests to check counts as "
        "failed";
  }
  context.PrintFailure(failure);
  return AlreadyReported(kExitMcpServer);
}

}  // namespace

void AddSkillsCommands(CLI::App* app, Context* context) {
  CLI::App* skills = app->add_subcommand(
      "skills", "A server's skills (the io.modelcontextprotocol/skills "
                "extension)");
  skills->group(kMcpGroup);
  skills->require_subcommand(1);
  skills->footer(
      "Examples:\n"
      "  inspectorctl skills list docs\n"
      "  inspectorctl skills get docs git-workflow --verify");

  auto list = std::make_shared<SkillListFlags>();
  CLI::App* list_command = AddServerCommand(
      skills, context, kMcpGroup,
      {"list", "List a server's skills (skills/list)",
       "Columns: NAME, URI, FILES, DESCRIPTION. FILES is the number of\n"
       "files in the skill's manifest, or \"dynamic\" when the server\n"
       "generates them. One page unless --all. A server tells of a changed\n"
       "catalog with notifications/resources/list_changed.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl skills list docs\n"
       "  inspectorctl skills list docs --all -o json"},
      list, RunSkillsList);
  AddPageFlags(list_command, &list->page);

  auto get = std::make_shared<SkillGetFlags>();
  CLI::App* get_command = AddServerCommand(
      skills, context, kMcpGroup,
      {"get", "Show a skill (skills/get), or verify its files",
       "SKILL is the skill's URI (…/SKILL.md) or its name.\n"
       "\n"
       "--verify reads every file of the skill's manifest (resources/read)\n"
       "and checks its size and sha256 digest, and the entry against the\n"
       "extension's rules (name, description, URI, a complete manifest with\n"
       "a digest and size for each file). The report lists each problem and\n"
       "each file: verified, mismatch (manifest and served digest or size\n"
       "shown), unverifiable (no usable digest) or unreadable. Exits 0 when\n"
       "the verdict is verified or unverifiable, 7 when it failed; with\n"
       "--require-digests a skill with nothing to check (resources\n"
       "\"dynamic\") fails too. -o json prints the report (verdict, issues,\n"
       "files, counts).\n"
       "\n"
       "Examples:\n"
       "  inspectorctl skills get docs git-workflow\n"
       "  inspectorctl skills get docs skill://docs/git-workflow/SKILL.md "
       "--verify\n"
       "  inspectorctl skills get docs git-workflow --verify "
       "--require-digests -o json"},
      get, RunSkillsGet);
  get_command->add_option("skill", get->skill, "The skill's URI or name")
      ->required()
      ->type_name("URI_OR_NAME");
  get_command->add_flag("--verify", get->verify,
                        "Check the skill's files against its manifest");
  get_command
      ->add_flag("--require-digests", get->require_digests,
                 "With --verify: fail when there is no digest to check")
      ->needs("--verify");
}

}  // namespace inspector::cli
