// `inspectorctl sessions verify (ID | --file FILE) --against SERVER`: a
// live server checked against a recording (SessionService.VerifySession),
// with a readable report, a JUnit file for CI and exit codes a build can
// branch on.
#include <sys/stat.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/sessions_subcommands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/files.h"
#include "clients/cli/verify_report.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

// The exit code of a verification whose answers differ.
constexpr int kExitAnswersDiffer = 1;

struct VerifyFlags {
  std::string id;
  std::string file;
  std::string against;
  std::string rules;
  std::string junit;
  bool all = false;
};

absl::Status RunVerify(Context& context, const VerifyFlags& flags) {
  if (flags.id.empty() == flags.file.empty()) {
    return UsageError("give a session ID or --file FILE, not both",
                      "inspectorctl sessions verify ID --against SERVER, or "
                      "inspectorctl sessions verify --file session.json "
                      "--against SERVER");
  }
  v1::VerifySessionRequest request;
  request.set_server_id(flags.against);
  VerifySubject subject{flags.id, flags.against};
  if (!flags.file.empty()) {
    std::string text;
    ASSIGN_OR_RETURN(text, ReadInputFile(flags.file, kMaxImportBytes));
    request.set_session_json(std::move(text));
    subject.recording = flags.file;
  } else {
    request.set_id(flags.id);
  }
  std::string rules_path = flags.rules;
  if (rules_path.empty() && !flags.file.empty()) {
    rules_path = RulesFileBeside(flags.file);
  }
  if (!rules_path.empty()) {
    std::string rules;
    ASSIGN_OR_RETURN(rules, ReadInputFile(rules_path, kMaxMessageBytes));
    request.set_rules_json(std::move(rules));
  }
  v1::VerifySessionResponse response;
  RETURN_IF_ERROR(context.CallServer(
      context.sessions(), &v1::SessionService::Stub::VerifySession, request,
      &response));
  if (!flags.junit.empty()) {
    RETURN_IF_ERROR(
        WritePrivateFile(flags.junit, VerifyJunit(response, subject)));
  }
  if (context.json()) {
    RETURN_IF_ERROR(context.PrintJson(response));
  } else {
    context.out() << VerifyText(response, subject, flags.all) << std::flush;
  }
  if (response.passed()) return absl::OkStatus();
  return AlreadyReported(kExitAnswersDiffer);
}

}  // namespace

std::string RulesFileBeside(const std::string& session_file) {
  std::string base = session_file;
  if (absl::EndsWith(base, ".json")) base.resize(base.size() - 5);
  base += ".rules.json";
  struct stat st;
  if (::stat(base.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  return base;
}

void AddSessionsVerifyCommand(CLI::App* sessions, Context* context) {
  auto flags = std::make_shared<VerifyFlags>();
  CLI::App* verify = sessions->add_subcommand(
      "verify", "Check a server's answers against a recorded session");
  verify->add_option("id", flags->id,
                     "Session id, or a saved recording NAME[@VERSION] "
                     "(recordings save), or --file");
  verify->add_option("--file", flags->file,
                     "A session file (sessions export) instead of a stored "
                     "session; it is read, not stored")
      ->type_name("FILE");
  verify->add_option("--against", flags->against,
                     "The server (name or id) to check; default: the "
                     "recorded one")
      ->type_name("SERVER");
  verify->add_option("--rules", flags->rules,
                     "What may differ (JSON); default: FILE's .rules.json "
                     "beside it, or the recording's saved rules, else the "
                     "built-in defaults")
      ->type_name("FILE");
  verify->add_option("--junit", flags->junit,
                     "Also write a JUnit XML report (one testcase per "
                     "recorded request)")
      ->type_name("FILE");
  verify->add_flag("--all", flags->all, "List the answers that match too");
  verify->footer(
      "Replays the recording's client requests in order against SERVER\n"
      "(any configured server, any transport) in a fresh session of kind\n"
      "replay, answers the server's own requests (sampling, elicitation,\n"
      "roots) with the recorded answers, and compares each answer with the\n"
      "recorded one, printing each difference with its JSON Pointer, the\n"
      "recorded and the actual value.\n"
      "\n"
      "Rules file (session.rules.json beside session.json, or --rules):\n"
      "  {\"ignore\": [\"/result/content/0/text\", \"/**/createdAt\"],\n"
      "   \"match\": {\"/result/structuredContent/id\": {\"type\": "
      "\"string\"},\n"
      "             \"/result/content/*/text\": {\"regex\": \"^Echo: \"}},\n"
      "   \"sets\": [\"/result/tools\"],\n"
      "   \"tolerance\": {\"/result/structuredContent/temp\": 0.5},\n"
      "   \"timestamps\": true, \"defaults\": true}\n"
      "Pointers are into the whole JSON-RPC answer; \"*\" matches one key\n"
      "or index, \"**\" any number. Defaults (\"defaults\": false drops\n"
      "them): /id, /result/_meta, /params/_meta, traceparent, tracestate\n"
      "and progressToken in any _meta, and two date-time strings are\n"
      "equal.\n"
      "\n"
      "Exit codes:\n"
      "  0  every answer matches\n"
      "  1  an answer differs (and a bad command line, as everywhere)\n"
      "  2  no such session or server\n"
      "  4  inspectord is not running\n"
      "  5  the session file or rules file is not valid\n"
      "  7  the server failed (could not start, crashed, timed out)\n"
      "  9  anything else\n"
      "\n"
      "Examples:\n"
      "  inspectorctl sessions export 3f2a... --out session.json\n"
      "  inspectorctl sessions verify --file session.json --against mine \\\n"
      "      --junit report.xml\n"
      "  inspectorctl sessions verify 3f2a... --against mine -o json\n"
      "  inspectorctl sessions verify weather@2 --against mine");
  OnSelected(verify, context, flags, RunVerify);
}

}  // namespace inspector::cli
