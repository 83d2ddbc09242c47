// `inspectorctl ui [--open] [--url BASE]`: a fresh one-time sign-in link
// of the web UI (SystemService.CreateSignInCode), printed or opened.

#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

struct UiOptions {
  bool open = false;
  std::string url;
};

absl::Status RunUi(Context& context, const UiOptions& options) {
  std::string base(absl::StripSuffix(options.url, "/"));
  if (!base.empty() && !absl::StartsWith(base, "http://") &&
      !absl::StartsWith(base, "https://")) {
    return UsageError("--url must start with http:// or https://",
                      "for example --url http://127.0.0.1:3000");
  }
  v1::SignInCode code;
  RETURN_IF_ERROR(context.Call(context.system(),
                               &v1::SystemService::Stub::CreateSignInCode,
                               v1::CreateSignInCodeRequest(), &code));
  std::string url = base.empty()
                        ? code.url()
                        : absl::StrCat(base, "/ui/sign-in?code=", code.code());
  if (url.empty()) {
    return LocalError(
        v1::FAILED_PRECONDITION,
        "inspectord serves no web UI: it was started without --http",
        "start it with --http 127.0.0.1:3000 (tools/run.sh does), or give "
        "--url with the address of an inspector-gateway in front of it");
  }
  if (context.json()) {
    context.PrintJson(
        nlohmann::json{{"url", url}, {"expiresAt", code.expires_at()}});
  } else {
    context.out() << url << "\n" << std::flush;
  }
  if (options.open) {
    if (absl::Status opened = OpenInBrowser(url); !opened.ok()) {
      std::cerr << "warning: " << opened.message()
                << "; open the link above in a browser yourself\n";
    }
  }
  return absl::OkStatus();
}

}  // namespace

void AddUiCommand(CLI::App* app, Context* context) {
  auto options = std::make_shared<UiOptions>();
  CLI::App* ui = app->add_subcommand(
      "ui",
      "Print a one-time link that signs a browser into the web UI (--open "
      "opens it)");
  ui->add_flag("--open", options->open,
               "Open the link in the desktop's browser (xdg-open)");
  ui->add_option("--url", options->url,
                 "The web UI's address when it is not inspectord's own "
                 "--http listener, e.g. an inspector-gateway's")
      ->type_name("BASE");
  ui->footer(
      "The link works once, for 15 minutes. Opening it stores the session\n"
      "token in an HttpOnly cookie of that browser, for that address only;\n"
      "the address bar keeps neither the code nor the token.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl ui\n"
      "  inspectorctl ui --open\n"
      "  inspectorctl ui --url http://127.0.0.1:3001   # an inspector-gateway");
  ui->callback([context, options] {
    context->SetAction([context, options] { return RunUi(*context, *options); },
                       /*takes_command_line=*/false);
  });
}

}  // namespace inspector::cli
