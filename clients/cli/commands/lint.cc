// `inspectorctl lint SERVER...`: what in servers' tools breaks clients
// (tool_lint.h), from their tools as listed and their recorded results.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/json_values.h"
#include "clients/cli/table.h"
#include "clients/cli/text.h"
#include "clients/cli/tool_lint.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

struct LintFlags {
  std::vector<std::string> servers;
  uint32_t results = 200;
  bool strict = false;
};

absl::StatusOr<ServerTools> Gather(Context& context, const std::string& server,
                                   uint32_t results) {
  ServerTools gathered;
  gathered.server = server;
  v1::ListRequest list;
  list.set_server_id(server);
  list.set_all(true);
  v1::ListToolsResponse tools;
  RETURN_IF_ERROR(context.CallServer(
      context.mcp(), &v1::McpService::Stub::ListTools, list, &tools));
  for (const v1::Tool& tool : tools.tools()) {
    gathered.tools.push_back(StructToJson(tool.raw()));
  }
  if (results == 0) return gathered;
  v1::QueryHistoryRequest query;
  query.set_server_id(server);
  query.set_method("tools/call");
  query.set_limit(std::min<uint32_t>(results, 1000));
  v1::QueryHistoryResponse recorded;
  RETURN_IF_ERROR(context.CallServer(context.history(),
                                     &v1::HistoryService::Stub::QueryHistory,
                                     query, &recorded));
  for (const v1::HistoryEntry& entry : recorded.entries()) {
    if (!entry.has_result()) continue;
    gathered.results.push_back({entry.target(), ValueToJson(entry.result())});
  }
  return gathered;
}

nlohmann::json FindingsJson(const std::vector<LintFinding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const LintFinding& f : findings) {
    out.push_back({{"severity", LintSeverityName(f.severity)},
                   {"code", f.code},
                   {"server", f.server},
                   {"tool", f.tool},
                   {"path", f.path},
                   {"message", f.message}});
  }
  return out;
}

absl::Status RunLint(Context& context, const LintFlags& flags) {
  std::vector<ServerTools> servers;
  size_t tool_count = 0;
  size_t result_count = 0;
  for (const std::string& server : flags.servers) {
    ASSIGN_OR_RETURN(ServerTools gathered,
                     Gather(context, server, flags.results));
    tool_count += gathered.tools.size();
    result_count += gathered.results.size();
    servers.push_back(std::move(gathered));
  }
  const std::vector<LintFinding> findings = LintTools(servers);
  size_t errors = 0;
  for (const LintFinding& f : findings) {
    if (f.severity == LintSeverity::kError) ++errors;
  }
  if (context.json()) {
    context.PrintJson(nlohmann::json{
        {"tools", tool_count},
        {"recordedResults", result_count},
        {"errors", errors},
        {"warnings", findings.size() - errors},
        {"findings", FindingsJson(findings)}});
  } else {
    if (!findings.empty()) {
      Table table({"SEVERITY", "CODE", "SERVER", "TOOL", "PATH", "PROBLEM"});
      for (const LintFinding& f : findings) {
        table.AddRow({LintSeverityName(f.severity), f.code, f.server, f.tool,
                      f.path, f.message});
      }
      context.PrintTable(table, /*flexible_column=*/5);
    }
    context.out() << tool_count << (tool_count == 1 ? " tool" : " tools")
                  << " and " << result_count << " recorded "
                  << (result_count == 1 ? "result" : "results")
                  << " checked: " << errors
                  << (errors == 1 ? " error, " : " errors, ")
                  << findings.size() - errors
                  << (findings.size() - errors == 1 ? " warning\n"
                                                    : " warnings\n");
  }
  if (!flags.strict || errors == 0) return absl::OkStatus();
  Failure failure;
  failure.exit_code = kExitMcpServer;
  failure.message = absl::StrCat(errors, errors == 1 ? " error" : " errors",
                                 " in the tools (--strict)");
  context.PrintFailure(failure);
  return AlreadyReported(kExitMcpServer);
}

}  // namespace

void AddLintCommand(CLI::App* app, Context* context) {
  auto flags = std::make_shared<LintFlags>();
  CLI::App* lint = AddCommand(
      app, context, kMcpGroup,
      {"lint", "Check servers' tools for what breaks clients",
       "Checks each tool as the server lists it:\n"
       "  name-format (error)   the name is not 1 to 128 of A-Z a-z 0-9 _ - .\n"
       "  name-edge             it starts or ends with - or .\n"
       "  description-missing   the tool has no description\n"
       "  argument-description-missing  an input property has none\n"
       "  input-schema-type (error)   inputSchema is not of type object\n"
       "  output-schema-type (error)  outputSchema is not of type object\n"
       "  schema-keyword        $ref, $defs, oneOf, anyOf, allOf, not,\n"
       "                        if/then/else, patternProperties, ... which\n"
       "                        common clients drop or refuse\n"
       "  enum-huge             an enum of more than 100 values\n"
       "  required-unknown      `required` names a property that is not there\n"
       "and the tool's recorded results (the newest --results calls in\n"
       "history) against its outputSchema:\n"
       "  output-missing (error)   a result without structuredContent\n"
       "  output-mismatch (error)  structuredContent does not satisfy it\n"
       "  (type, enum, const, required, properties, additionalProperties,\n"
       "  items, min/max, min/maxItems, min/maxLength)\n"
       "With several servers, name-duplicate: a tool name more than one of\n"
       "them offers.\n"
       "\n"
       "Exits 0, or with --strict 7 when there is an error. -o json prints\n"
       "{tools, recordedResults, errors, warnings, findings: [{severity,\n"
       "code, server, tool, path, message}]}, path a JSON Pointer.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl lint everything\n"
       "  inspectorctl lint github filesystem --strict\n"
       "  inspectorctl lint everything -o json | jq '.findings[] | "
       "select(.severity == \"error\")'"},
      flags, RunLint);
  lint->add_option("servers", flags->servers, "The servers (names or ids)")
      ->type_name("SERVER")
      ->required();
  lint->add_option("--results", flags->results,
                   "Recorded tools/call results to check per server "
                   "(default 200, at most 1000; 0: none)")
      ->type_name("N");
  lint->add_flag("--strict", flags->strict, "Exit 7 when there is an error");
}

}  // namespace inspector::cli
