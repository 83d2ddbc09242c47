// `inspectorctl recordings save|list|export`: sessions saved under a name,
// versioned in the daemon's database (SessionService.SaveRecording,
// ListRecordings, ExportRecording), for `sessions verify NAME[@VERSION]`
// and for the two files a CI job checks in beside a server's code.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/files.h"
#include "clients/cli/table.h"
#include "clients/cli/text.h"
#include "clients/cli/times.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace inspector::cli {
// The names are the file's own: the commands compile in unity batches.
namespace {

using SessionStub = v1::SessionService::Stub;

struct RecordingSaveFlags {
  std::string session;
  std::string name;
  std::string notes;
  std::string rules;
};

absl::Status RunRecordingSave(Context& context,
                              const RecordingSaveFlags& flags) {
  v1::SaveRecordingRequest request;
  request.set_session_id(flags.session);
  request.set_name(flags.name);
  request.set_notes(flags.notes);
  if (!flags.rules.empty()) {
    std::string rules;
    ASSIGN_OR_RETURN(rules, ReadInputFile(flags.rules, kMaxMessageBytes));
    request.set_rules_json(std::move(rules));
  }
  v1::Recording response;
  RETURN_IF_ERROR(context.Call(context.sessions(), &SessionStub::SaveRecording,
                               request, &response));
  if (context.json()) return context.PrintJson(response);
  context.out() << "saved " << SanitizeForTerminal(response.name()) << "@"
                << response.version() << " (session "
                << SanitizeForTerminal(response.session_id()) << ")\n"
                << std::flush;
  return absl::OkStatus();
}

struct RecordingListFlags {
  std::string name;
};

absl::Status RunRecordingList(Context& context,
                              const RecordingListFlags& flags) {
  v1::ListRecordingsRequest request;
  request.set_name(flags.name);
  v1::ListRecordingsResponse response;
  RETURN_IF_ERROR(context.Call(context.sessions(), &SessionStub::ListRecordings,
                               request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.recordings_size() > 0) {
    TableTimes times = LocalTimes();
    Table table({"NAME", "VERSION", "SAVED", "SESSION", "RULES", "NOTES"});
    for (const v1::Recording& r : response.recordings()) {
      table.AddRow({r.name(), absl::StrCat(r.version()),
                    FormatTableTime(r.created_at(), times.now, times.zone),
                    r.session_id(), r.rules_json().empty() ? "defaults" : "own",
                    r.notes()});
    }
    context.PrintTable(table, 5);
  }
  context.out() << response.recordings_size() << " recording version(s)\n"
                << std::flush;
  return absl::OkStatus();
}

struct RecordingExportFlags {
  std::string name;
  std::string out;
  bool include_secrets = false;
};

// FILE's rules file: FILE without .json, then .rules.json (what `sessions
// verify --file FILE` reads).
std::string RecordingRulesPath(const std::string& session_path) {
  std::string base = session_path;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0) {
    base.resize(base.size() - 5);
  }
  return base + ".rules.json";
}

absl::Status RunRecordingExport(Context& context,
                                const RecordingExportFlags& flags) {
  v1::ExportRecordingRequest request;
  request.set_name(flags.name);
  request.set_include_secrets(flags.include_secrets);
  v1::ExportRecordingResponse response;
  RETURN_IF_ERROR(context.Call(
      context.sessions(), &SessionStub::ExportRecording, request, &response));
  const std::string session_path =
      flags.out.empty() ? response.session_filename() : flags.out;
  const std::string rules_path = RecordingRulesPath(session_path);
  RETURN_IF_ERROR(WritePrivateFile(session_path, response.session_json()));
  RETURN_IF_ERROR(WritePrivateFile(rules_path, response.rules_json()));
  if (context.json()) {
    context.PrintJson(
        nlohmann::json{{"name", response.recording().name()},
                       {"version", response.recording().version()},
                       {"session", session_path},
                       {"rules", rules_path},
                       {"masked", response.masked()}});
    return absl::OkStatus();
  }
  context.out() << "wrote " << SanitizeForTerminal(session_path) << " and "
                << SanitizeForTerminal(rules_path) << " ("
                << SanitizeForTerminal(response.recording().name()) << "@"
                << response.recording().version() << "; " << response.masked()
                << " secret value(s) masked)\n"
                << "check it: inspectorctl sessions verify --file "
                << SanitizeForTerminal(session_path) << " --against SERVER\n"
                << std::flush;
  return absl::OkStatus();
}

}  // namespace

void AddRecordingsCommands(CLI::App* app, Context* context) {
  CLI::App* recordings = app->add_subcommand(
      "recordings", "Sessions saved under a name, versioned, for verify");
  recordings->require_subcommand(1);
  recordings->footer(
      "A recording is a session saved under a name; each save adds a\n"
      "version (1, 2, ...), kept in the daemon's database (table\n"
      "recordings) with its rules file, and its session is kept from\n"
      "retention. Verify a server against one with\n"
      "  inspectorctl sessions verify NAME[@VERSION] --against SERVER\n"
      "(NAME alone: the newest version; its saved rules apply unless\n"
      "--rules is given), or export it for CI.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl recordings save 3f2a... weather --rules "
      "weather.rules.json\n"
      "  inspectorctl recordings list\n"
      "  inspectorctl recordings export weather@2 --out tests/weather.json\n"
      "  inspectorctl sessions verify --file tests/weather.json --against "
      "mine --junit report.xml");

  auto save_flags = std::make_shared<RecordingSaveFlags>();
  CLI::App* save = recordings->add_subcommand(
      "save", "Save a session as the next version of a named recording");
  save->add_option("session", save_flags->session, "Session id")->required();
  save->add_option("name", save_flags->name, "Recording name (no '@')")
      ->required();
  save->add_option("--notes", save_flags->notes, "Notes")->type_name("TEXT");
  save->add_option("--rules", save_flags->rules,
                   "Rules file saved with it (what may differ; see "
                   "sessions verify --help)")
      ->type_name("FILE");
  OnSelected(save, context, save_flags, RunRecordingSave);

  auto list_flags = std::make_shared<RecordingListFlags>();
  CLI::App* list =
      recordings->add_subcommand("list", "Recordings and their versions");
  list->add_option("name", list_flags->name, "Only this recording");
  OnSelected(list, context, list_flags, RunRecordingList);

  auto export_flags = std::make_shared<RecordingExportFlags>();
  CLI::App* exp = recordings->add_subcommand(
      "export", "Write a recording's session file and rules file");
  exp->add_option("name", export_flags->name, "NAME or NAME@VERSION")
      ->required();
  exp->add_option("--out", export_flags->out,
                  "Session file to write (mode 0600; default NAME-vN.json); "
                  "the rules file goes beside it as .rules.json")
      ->type_name("FILE");
  exp->add_flag("--include-secrets", export_flags->include_secrets,
                "Keep env and header values, URL credentials and "
                "secret-looking message values");
  OnSelected(exp, context, export_flags, RunRecordingExport);
}

}  // namespace inspector::cli
