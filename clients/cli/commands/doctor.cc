// `inspectorctl doctor SERVER`: the connection doctor.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/doctor_views.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

struct DoctorFlags {
  std::string server;
  uint32_t timeout_ms = 0;
};

absl::Status RunDoctor(Context& context, const DoctorFlags& flags) {
  v1::DiagnoseRequest request;
  request.set_server_id(flags.server);
  request.set_timeout_ms(flags.timeout_ms);
  v1::Diagnosis diagnosis;
  RETURN_IF_ERROR(context.CallServer(context.doctor(),
                                     &v1::DoctorService::Stub::Diagnose,
                                     request, &diagnosis));
  if (context.json()) {
    RETURN_IF_ERROR(context.PrintJson(diagnosis));
  } else {
    DoctorViewOptions options;
    options.color = context.stdout_color();
    context.out() << DoctorReport(diagnosis, options) << std::flush;
  }
  if (diagnosis.overall() != v1::CHECK_FAIL) return absl::OkStatus();
  Failure failure;
  failure.exit_code = kExitMcpServer;
  failure.message =
      absl::StrCat(SanitizeForTerminal(diagnosis.server_name()),
                   ": check(s) failed: ", FailedChecks(diagnosis));
  context.PrintFailure(failure);
  return AlreadyReported(kExitMcpServer);
}

}  // namespace

void AddDoctorCommand(CLI::App* app, Context* context) {
  auto flags = std::make_shared<DoctorFlags>();
  CLI::App* doctor = app->add_subcommand(
      "doctor",
      "Diagnose the connection to a server, step by step, with fixes");
  doctor->add_option("server", flags->server, "The server (name or id)")
      ->type_name("SERVER")
      ->required();
  doctor
      ->add_option("--timeout-ms", flags->timeout_ms,
                   "Time for the whole diagnosis (default 30000, at most "
                   "120000)")
      ->type_name("MS");
  doctor->footer(
      "Runs, in order: config; for stdio servers executable and spawn\n"
      "(with the process's first stderr lines); for HTTP servers dns, tcp,\n"
      "tls, http (status and content type), transport (Streamable HTTP or\n"
      "legacy SSE) and oauth (RFC 9728 and RFC 8414 metadata, auth state);\n"
      "then initialize (protocol version) and tools (a tools/list round\n"
      "trip). Each check is PASS, WARN, FAIL or SKIP, with its time, what\n"
      "it found and how to fix it. The diagnosis uses a connection of its\n"
      "own: the daemon's session with the server is not touched.\n"
      "\n"
      "Exits 0 when no check failed (warnings included), 7 when one did,\n"
      "2 for an unknown server. -o json prints the Diagnosis message.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl doctor everything\n"
      "  inspectorctl doctor remote --timeout-ms 60000\n"
      "  inspectorctl doctor remote -o json | jq '.checks[] | "
      "select(.status == \"CHECK_FAIL\")'");
  doctor->callback([context, flags] {
    context->SetAction([context, flags] { return RunDoctor(*context, *flags); },
                       /*takes_command_line=*/false);
  });
}

}  // namespace inspector::cli
