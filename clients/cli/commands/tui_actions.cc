// `inspectorctl tui`'s actions on the daemon (tui_app.h): resolving and
// modifying held messages, the intercept mode, replays of a request or a
// session (on a background call, so the screen stays live), a session's
// export and the explore report (a server's tools and skills). Main thread
// only, but for the background call itself.
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/intercept_calls.h"
#include "clients/cli/commands/tui_app.h"
#include "clients/cli/files.h"
#include "clients/cli/intercept_views.h"
#include "clients/cli/session_views.h"
#include "clients/cli/tui_explore.h"

namespace inspector::cli::tui {

void TuiApp::ShowFailure(const absl::Status& status, const std::string& what) {
  absl::Status shown = NotAvailableIfUnimplemented(status, what);
  Failure failure = DescribeError(shown, context_.error_context());
  SetStatus(absl::StrCat(failure.message,
                         failure.hint.empty() ? "" : " (" + failure.hint + ")"),
            true);
}

void TuiApp::Resolve(v1::InterceptAction action) {
  const TuiRow* row = model_.selected();
  if (row == nullptr || !row->held()) {
    SetStatus("the selected message is not held", true);
    return;
  }
  v1::ResolveHeldRequest request;
  request.set_id(row->held_id);
  request.set_action(action);
  v1::HeldMessage held;
  absl::Status status =
      Call(context_.intercept(), &v1::InterceptService::Stub::ResolveHeld,
           request, &held);
  if (!status.ok()) {
    ShowFailure(status, "intercept");
    return;
  }
  model_.ApplyHeld(held);
  SetStatus(absl::StrCat(held.id(), " ", ResolvedText(held)));
}

void TuiApp::Modify() {
  const TuiRow* row = model_.selected();
  if (row == nullptr || !row->held()) {
    SetStatus("the selected message is not held", true);
    return;
  }
  const std::string held_id = row->held_id;
  v1::HeldMessage held;
  held.set_id(held_id);
  *held.mutable_message() = row->message;
  auto draft = drafts_.find(held_id);
  const std::string text =
      draft != drafts_.end() ? draft->second : HeldMessageForEditing(held);
  const std::string editor =
      ChooseEditor(std::getenv("VISUAL"), std::getenv("EDITOR"));
  curses_->Suspend();
  absl::StatusOr<std::string> edited = EditInEditor(editor, text);
  curses_->Resume();
  if (!edited.ok()) {
    ShowFailure(edited.status(), "intercept");
    return;
  }
  if (EditUnchanged(text, *edited)) {
    SetStatus(absl::StrCat("unchanged: nothing sent; ", held_id,
                           " stays held"));
    return;
  }
  v1::ResolveHeldRequest request;
  request.set_id(held_id);
  request.set_action(v1::MODIFY);
  request.set_modified(*edited);
  v1::HeldMessage resolved;
  absl::Status status =
      Call(context_.intercept(), &v1::InterceptService::Stub::ResolveHeld,
           request, &resolved);
  if (!status.ok()) {
    drafts_[held_id] = *edited;
    ShowFailure(status, "intercept");
    absl::StrAppend(&status_, "; F6 edits your text again");
    return;
  }
  drafts_.erase(held_id);
  model_.ApplyHeld(resolved);
  SetStatus(absl::StrCat(resolved.id(), " ", ResolvedText(resolved)));
}

void TuiApp::ToggleMode() {
  v1::SetInterceptStateRequest request;
  request.set_mode(mode_ == v1::INTERCEPT ? v1::PASSTHROUGH : v1::INTERCEPT);
  v1::InterceptState state;
  absl::Status status =
      Call(context_.intercept(), &v1::InterceptService::Stub::SetInterceptState,
           request, &state);
  if (!status.ok()) {
    ShowFailure(status, "intercept");
    return;
  }
  mode_ = state.mode();
  SetStatus(mode_ == v1::INTERCEPT
                ? "INTERCEPT: every message is held"
                : "PASSTHROUGH: messages flow on; held ones were forwarded");
  PollState(/*force=*/true);
}

bool TuiApp::StartBackground(
    std::function<std::function<void()>(grpc::ClientContext*)> call,
    double seconds) {
  if (background_.valid()) {
    SetStatus("a replay is still running: wait for it (F5 forwards a held "
              "message it sent)",
              true);
    return false;
  }
  background_call_ = std::make_unique<grpc::ClientContext>();
  if (absl::Status prepared = context_.PrepareStream(background_call_.get());
      !prepared.ok()) {
    ShowFailure(prepared, "replay");
    return false;
  }
  background_call_->set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  background_ = std::async(std::launch::async,
                           [call = std::move(call),
                            ctx = background_call_.get()] { return call(ctx); });
  return true;
}

void TuiApp::FinishBackground(bool wait) {
  if (!background_.valid()) return;
  if (!wait && background_.wait_for(std::chrono::seconds(0)) !=
                   std::future_status::ready) {
    return;
  }
  std::function<void()> apply = background_.get();
  background_call_.reset();
  if (apply) apply();
}

void TuiApp::Replay() {
  const TuiRow* row = model_.selected();
  if (row == nullptr || row->message.direction() != v1::CLIENT_TO_SERVER ||
      row->message.kind() != "request" || row->message.id() == 0) {
    SetStatus("select a recorded client-to-server request to replay", true);
    return;
  }
  const int64_t id = row->message.id();
  auto request = std::make_shared<v1::ReplayRequest>();
  request->set_message_id(id);
  v1::SessionService::Stub* stub = context_.sessions();
  if (!StartBackground(
          [this, stub, request, id](grpc::ClientContext* call)
              -> std::function<void()> {
            auto response = std::make_shared<v1::ReplayResponse>();
            absl::Status status =
                FromGrpcStatus(stub->Replay(call, *request, response.get()));
            return [this, status, response, id] {
              if (!status.ok()) {
                ShowFailure(status, "replay");
                return;
              }
              model_.AddMessage(response->request());
              if (response->has_response()) {
                model_.AddMessage(response->response());
              }
              SetStatus(absl::StrCat(
                  "replayed #", id, " as #", response->request().id(),
                  response->has_response()
                      ? absl::StrCat(": answer #", response->response().id(),
                                     response->response().kind() == "error"
                                         ? " (error)"
                                         : "")
                      : ""));
            };
          },
          kTuiCallSeconds * 12)) {
    return;
  }
  SetStatus(absl::StrCat("replaying #", id, "..."));
}

void TuiApp::ReplaySession() {
  const TuiRow* row = model_.selected();
  if (row == nullptr || row->message.session_id().empty()) {
    SetStatus("select a message of a recorded session to replay it", true);
    return;
  }
  const std::string session_id = row->message.session_id();
  auto request = std::make_shared<v1::ReplaySessionRequest>();
  request->set_id(session_id);
  v1::SessionService::Stub* stub = context_.sessions();
  if (!StartBackground(
          [this, stub, request, session_id](grpc::ClientContext* call)
              -> std::function<void()> {
            auto response = std::make_shared<v1::ReplaySessionResponse>();
            absl::Status status = FromGrpcStatus(
                stub->ReplaySession(call, *request, response.get()));
            return [this, status, response, session_id] {
              if (!status.ok()) {
                ShowFailure(status, "replay");
                return;
              }
              ShowReplayReport(session_id, *response);
            };
          },
          kReplaySessionSeconds)) {
    return;
  }
  // The call takes as long as the session's requests (and any a
  // breakpoint holds): the screen stays live meanwhile.
  SetStatus(absl::StrCat("replaying session ", session_id, "..."));
}

void TuiApp::ShowReplayReport(const std::string& session_id,
                              const v1::ReplaySessionResponse& response) {
  const v1::DiffSessionsResponse& diff = response.diff();
  report_.clear();
  report_scroll_ = 0;
  report_.push_back(absl::StrCat("REPLAY of session ", session_id));
  report_.push_back(absl::StrCat("as session ", response.session().id(), " (",
                                 response.session().messages(),
                                 " messages)"));
  report_.push_back(diff.identical()
                        ? "the answers are the same as recorded"
                        : absl::StrCat(diff.differing(), " of ",
                                       diff.pairs_size(),
                                       " answers changed:"));
  report_.push_back("");
  const std::string text = DiffText(diff, /*only_differences=*/true);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    report_.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  report_.push_back("");
  report_.push_back("(J/K scroll, Esc or any other key closes)");
  SetStatus(absl::StrCat("replayed as session ", response.session().id(), ": ",
                         diff.identical()
                             ? "same answers"
                             : absl::StrCat(diff.differing(), " changed")));
}

void TuiApp::Export() {
  const TuiRow* row = model_.selected();
  if (row == nullptr || row->message.session_id().empty()) {
    SetStatus("select a message of a recorded session to export", true);
    return;
  }
  v1::ExportSessionRequest request;
  request.set_id(row->message.session_id());
  v1::ExportSessionResponse response;
  absl::Status status =
      Call(context_.sessions(), &v1::SessionService::Stub::ExportSession,
           request, &response);
  if (!status.ok()) {
    ShowFailure(status, "session export");
    return;
  }
  std::string name = response.filename().empty()
                         ? absl::StrCat("session-", request.id(), ".json")
                         : std::filesystem::path(response.filename())
                               .filename()
                               .string();
  std::error_code error;
  std::filesystem::path path = std::filesystem::current_path(error) / name;
  absl::Status written = WritePrivateFile(path.string(), response.json());
  if (!written.ok()) {
    ShowFailure(written, "session export");
    return;
  }
  SetStatus(absl::StrCat("session exported to ", path.string(),
                         response.masked() > 0
                             ? absl::StrCat(" (", response.masked(),
                                            " values masked)")
                             : ""));
}

void TuiApp::Explore() {
  std::string server_id = server_id_;
  if (server_id.empty()) {
    const TuiRow* row = model_.selected();
    if (row != nullptr) server_id = row->message.server_id();
  }
  if (server_id.empty()) {
    SetStatus("select a message of the server to explore (or start with "
              "--server)",
              true);
    return;
  }
  v1::ListRequest request;
  request.set_server_id(server_id);
  request.set_all(true);
  v1::ListToolsResponse tools;
  absl::Status tools_status = Call(
      context_.mcp(), &v1::McpService::Stub::ListTools, request, &tools);
  v1::ListSkillsResponse skills;
  absl::Status skills_status = Call(
      context_.mcp(), &v1::McpService::Stub::ListSkills, request, &skills);
  if (!tools_status.ok() && !skills_status.ok()) {
    ShowFailure(tools_status, "explore");
    return;
  }
  report_ = ExploreReportLines(
      names_.Display(server_id),
      tools_status.ok() ? absl::StatusOr<v1::ListToolsResponse>(tools)
                        : absl::StatusOr<v1::ListToolsResponse>(tools_status),
      skills_status.ok()
          ? absl::StatusOr<v1::ListSkillsResponse>(skills)
          : absl::StatusOr<v1::ListSkillsResponse>(skills_status));
  report_scroll_ = 0;
  explore_server_ = server_id;
  explore_skills_.assign(skills.skills().begin(), skills.skills().end());
  SetStatus(absl::StrCat("explored ", names_.Display(server_id), ": ",
                         tools.tools_size(), " tools, ", skills.skills_size(),
                         " skills"));
}

void TuiApp::ShowSkill(size_t index) {
  if (index >= explore_skills_.size()) {
    SetStatus(absl::StrCat("there is no skill ", index + 1), true);
    return;
  }
  v1::SkillRequest request;
  request.set_server_id(explore_server_);
  request.set_uri(explore_skills_[index].uri());
  v1::GetSkillResponse response;
  absl::Status status = Call(context_.mcp(), &v1::McpService::Stub::GetSkill,
                             request, &response);
  if (!status.ok()) {
    ShowFailure(status, "skills get");
    return;
  }
  report_ = SkillReportLines(response.skill());
  report_scroll_ = 0;
  SetStatus(absl::StrCat("skills/get ", response.skill().name()));
}

}  // namespace inspector::cli::tui
