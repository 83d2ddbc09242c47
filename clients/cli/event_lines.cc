#include "clients/cli/event_lines.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cli/mcp_views.h"
#include "clients/cli/text.h"
#include "clients/cli/times.h"

namespace inspector::cli {
namespace {

constexpr char kReset[] = "\033[0m";
constexpr char kDim[] = "\033[2m";
constexpr char kRed[] = "\033[31m";
constexpr char kGreen[] = "\033[32m";
constexpr char kYellow[] = "\033[33m";
constexpr char kCyan[] = "\033[36m";
constexpr char kGap[] = "  ";

class LineBuilder {
 public:
  explicit LineBuilder(bool color) : color_(color) {}

  // Adds `text` (made safe for the terminal) in `style` ("" for none),
  // separated from the previous part by two spaces; empty text is skipped.
  LineBuilder& Add(const std::string& text, const char* style = "") {
    return AddRaw(SanitizeForTerminal(text), style);
  }
  // Adds text that is already safe.
  LineBuilder& AddRaw(const std::string& text, const char* style = "") {
    if (text.empty()) return *this;
    if (!line_.empty()) line_ += kGap;
    if (color_ && *style != '\0') {
      absl::StrAppend(&line_, style, text, kReset);
    } else {
      line_ += text;
    }
    return *this;
  }
  // Appends `text` to the previous part without a gap.
  LineBuilder& Append(const std::string& text, const char* style = "") {
    const std::string safe = SanitizeForTerminal(text);
    if (color_ && *style != '\0') {
      absl::StrAppend(&line_, style, safe, kReset);
    } else {
      line_ += safe;
    }
    return *this;
  }
  std::string str() const { return line_; }

 private:
  bool color_;
  std::string line_;
};

std::string Time(double timestamp, const EventLineOptions& options) {
  return FormatClock(timestamp, options.zone);
}

const char* ArrowFor(v1::Direction direction) {
  switch (direction) {
    case v1::CLIENT_TO_SERVER:
      return "→";
    case v1::SERVER_TO_CLIENT:
      return "←";
    default:
      return "·";
  }
}

std::string MessageLine(double timestamp, const v1::McpMessage& message,
                        const ServerNames& names,
                        const EventLineOptions& options,
                        const std::string& suffix) {
  const bool notification = message.kind() == "notification";
  const bool error = message.kind() == "error" || message.kind() == "invalid" ||
                     (message.has_success() && !message.success());
  const char* style = error ? kRed : notification ? kDim : "";
  const char* arrow_style = error ? kRed
                            : message.direction() == v1::SERVER_TO_CLIENT
                                ? kGreen
                                : kCyan;

  LineBuilder line(options.color);
  line.Add(Time(timestamp, options), notification ? kDim : "");
  line.Add(names.Display(message.server_id()), notification ? kDim : "");
  line.AddRaw(ArrowFor(message.direction()), arrow_style);
  std::string method = message.method();
  if (method.empty()) {
    method = message.kind().empty() ? "(message)"
                                    : absl::StrCat("(", message.kind(), ")");
  }
  line.Add(method, style);
  line.Add(OneLine(message.target()), style);
  if (!notification) line.Add(message.jsonrpc_id(), style);
  if (message.has_duration_ms()) {
    line.Add(absl::StrCat("(", FormatMilliseconds(message.duration_ms()), ")"),
             style);
  }
  if (message.kind() == "invalid") {
    line.Add("invalid", kRed);
  } else if (error) {
    line.Add(message.error_code().empty()
                 ? std::string("error")
                 : absl::StrCat("error ", message.error_code()),
             kRed);
  }
  if (message.input_round() > 0) {
    line.Add(absl::StrCat("[round ", message.input_round(), "]"), kYellow);
  }
  if (message.modified()) line.Add("[modified]", kYellow);
  if (message.truncated()) {
    line.Add(absl::StrCat("[truncated, ", message.raw_size(), " bytes]"), kDim);
  }
  line.Add(suffix, kYellow);
  return line.str();
}

std::string LevelStyle(const std::string& level) {
  const std::string lower = absl::AsciiStrToLower(level);
  if (lower == "error" || lower == "critical" || lower == "alert" ||
      lower == "emergency") {
    return kRed;
  }
  if (lower == "warn" || lower == "warning") return kYellow;
  if (lower == "debug") return kDim;
  return "";
}

std::string FlowStateName(v1::OAuthFlowState state) {
  if (state == v1::OAUTH_FLOW_STATE_UNSPECIFIED) return "unspecified";
  return absl::AsciiStrToLower(v1::OAuthFlowState_Name(state));
}

std::string Lower(const std::string& name) {
  return absl::AsciiStrToLower(name);
}

}  // namespace

std::string FormatEventLine(const v1::Event& event, const ServerNames& names,
                            const EventLineOptions& options) {
  const double timestamp = event.timestamp();
  switch (event.payload_case()) {
    case v1::Event::kMessage:
      return MessageLine(
          timestamp > 0 ? timestamp : event.message().timestamp(),
          event.message(), names, options, "");
    case v1::Event::kState: {
      const v1::StateChange& state = event.state();
      const bool error = state.to() == v1::ERROR;
      const std::string server = state.server_name().empty()
                                     ? names.Display(state.server_id())
                                     : state.server_name();
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(server + ":", error ? kRed : "");
      line.Append(absl::StrCat(" ", StateName(state.from()), " → ",
                               StateName(state.to())),
                  error ? kRed : "");
      if (!state.error_code().empty() || !state.error_message().empty()) {
        std::vector<std::string> parts;
        if (!state.error_code().empty()) parts.push_back(state.error_code());
        if (!state.error_message().empty()) {
          parts.push_back(OneLine(state.error_message()));
        }
        line.Add(absl::StrCat("(", absl::StrJoin(parts, ": "), ")"), kRed);
      }
      return line.str();
    }
    case v1::Event::kLog: {
      const v1::LogEntry& log = event.log();
      std::string server =
          log.server_id().empty()
              ? (log.source().empty() || log.source() == "daemon"
                     ? std::string("inspectord")
                     : log.source())
              : names.Display(log.server_id());
      const std::string style = LevelStyle(log.level());
      LineBuilder line(options.color);
      line.Add(Time(timestamp > 0 ? timestamp : log.timestamp(), options));
      line.Add(server);
      line.Append(absl::StrCat(" [", log.level(), "]"), style.c_str());
      line.Append(" ");
      line.Append(log.message(), style == kDim ? kDim : "");
      return line.str();
    }
    case v1::Event::kPending: {
      const v1::PendingRequest& pending = event.pending();
      std::string status = Lower(v1::PendingStatus_Name(pending.status()));
      if (pending.status() == v1::PENDING_STATUS_UNSPECIFIED) {
        status = "pending";
      }
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(names.Display(pending.server_id()));
      line.AddRaw("←", kGreen);
      line.Add(pending.method());
      line.Add(absl::StrCat("[", status, " ", pending.id(), "]"), kYellow);
      return line.str();
    }
    case v1::Event::kHeld: {
      const v1::HeldMessage& held = event.held();
      std::string marker = absl::StrCat("[held ", held.id());
      if (held.action() != v1::INTERCEPT_ACTION_UNSPECIFIED) {
        absl::StrAppend(&marker, ": ",
                        Lower(v1::InterceptAction_Name(held.action())));
      }
      marker += "]";
      return MessageLine(timestamp > 0 ? timestamp : held.held_at(),
                         held.message(), names, options, marker);
    }
    case v1::Event::kListChanged: {
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(names.Display(event.list_changed().server_id()) + ":");
      line.Append(
          absl::StrCat(" ", event.list_changed().list(), " list changed"));
      return line.str();
    }
    case v1::Event::kConfig: {
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(names.Display(event.config().server_id()) + ":");
      line.Append(absl::StrCat(" configuration ", event.config().change()));
      return line.str();
    }
    case v1::Event::kProgress: {
      const v1::Progress& progress = event.progress();
      std::string text = absl::StrCat(" progress ", progress.progress());
      if (progress.has_total()) absl::StrAppend(&text, "/", progress.total());
      if (!progress.method().empty()) {
        absl::StrAppend(&text, " of ", progress.method());
        if (!progress.target().empty()) {
          absl::StrAppend(&text, " ", OneLine(progress.target()));
        }
        if (!progress.request_id().empty()) {
          absl::StrAppend(&text, " ", progress.request_id());
        }
      }
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options), kDim);
      line.Add(names.Display(progress.server_id()) + ":", kDim);
      line.Append(text, kDim);
      line.Add(OneLine(progress.message()), kDim);
      return line.str();
    }
    case v1::Event::kCatalogChanged: {
      const v1::CatalogChanged& catalog = event.catalog_changed();
      std::vector<std::string> items;
      for (const v1::CatalogItemChange& c : catalog.changes()) {
        items.push_back(absl::StrCat(
            OneLine(c.key()), " ", c.change(),
            c.fields_size() > 0
                ? absl::StrCat(" (", absl::StrJoin(c.fields(), ", "), ")")
                : std::string()));
      }
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(names.Display(catalog.server_id()) + ":");
      line.Append(absl::StrCat(" catalog ", catalog.list(), ": "));
      line.Append(absl::StrJoin(items, "; "));
      return line.str();
    }
    case v1::Event::kSessionStarted: {
      const v1::Session& session = event.session_started();
      std::string text =
          absl::StrCat(" session ", OneLine(session.id()), " opened by ",
                       OneLine(session.caller().subject()));
      if (!session.caller().client_id().empty()) {
        absl::StrAppend(&text, " (client ",
                        OneLine(session.caller().client_id()), ")");
      }
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(names.Display(session.server_id()) + ":");
      line.Append(text);
      line.Add(OneLine(session.caller().issuer()), kDim);
      return line.str();
    }
    case v1::Event::kTask: {
      const v1::TaskStatus& task = event.task();
      std::string text = absl::StrCat(" task ", OneLine(task.task_id()), " ",
                                      task.status());
      if (!task.method().empty()) {
        absl::StrAppend(&text, " (", task.method());
        if (!task.target().empty()) {
          absl::StrAppend(&text, " ", OneLine(task.target()));
        }
        absl::StrAppend(&text, ")");
      }
      if (task.input_keys_size() > 0) {
        absl::StrAppend(&text, " asks ",
                        OneLine(absl::StrJoin(task.input_keys(), ", ")));
      }
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(names.Display(task.server_id()) + ":");
      line.Append(text);
      if (!task.status_message().empty()) {
        line.Add(OneLine(task.status_message()), kDim);
      }
      return line.str();
    }
    case v1::Event::kResourceUpdated: {
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(names.Display(event.resource_updated().server_id()) + ":");
      line.Append(absl::StrCat(" resource updated ",
                               OneLine(event.resource_updated().uri())));
      return line.str();
    }
    case v1::Event::kOauth: {
      const v1::OAuthFlowEvent& oauth = event.oauth();
      const std::string server = oauth.server_name().empty()
                                     ? names.Display(oauth.server_id())
                                     : oauth.server_name();
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(server + ":");
      line.Append(" oauth");
      if (oauth.has_transition()) {
        const v1::OAuthFlowTransition& t = oauth.transition();
        if (!t.error().empty()) {
          line.Add(absl::StrCat(FlowStateName(t.from()), " failed: ",
                                OneLine(t.error())),
                   kRed);
          line.Add(OneLine(t.hint()), kDim);
        } else if (t.cause() == "started") {
          line.Add(absl::StrCat("flow started at ", FlowStateName(t.to())));
        } else if (t.cause() == "refresh") {
          line.Add("tokens refreshed", kGreen);
        } else if (t.from() == t.to()) {
          line.Add(FlowStateName(t.to()));
        } else {
          line.Add(absl::StrCat(FlowStateName(t.from()), " → ",
                                FlowStateName(t.to())),
                   t.to() == v1::COMPLETE ? kGreen : "");
        }
      } else if (oauth.has_exchange()) {
        const v1::OAuthHttpExchange& ex = oauth.exchange();
        const bool failed = !ex.error().empty() || ex.status() >= 400;
        line.Add(absl::StrCat("[", FlowStateName(ex.step()), "]"), kDim);
        line.Add(ex.method().empty() ? std::string("GET") : ex.method());
        line.Add(OneLine(ex.url()));
        line.Add(ex.error().empty() ? absl::StrCat(ex.status())
                                    : OneLine(ex.error()),
                 failed ? kRed : kGreen);
        line.Add(absl::StrCat("(", FormatMilliseconds(ex.duration_ms()), ")"),
                 kDim);
      } else if (oauth.has_step()) {
        const v1::OAuthFlowStep& step = oauth.step();
        line.Add(absl::StrCat("[", FlowStateName(step.state()), "]"), kDim);
        line.Add(OneLine(step.message()), step.error().empty() ? "" : kRed);
      }
      return line.str();
    }
    case v1::Event::kDropped: {
      const uint64_t count = event.dropped().count();
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(absl::StrCat("… ", count, count == 1 ? " event" : " events",
                            " dropped (reader too slow)"),
               kYellow);
      return line.str();
    }
    default: {
      LineBuilder line(options.color);
      line.Add(Time(timestamp, options));
      line.Add(absl::StrCat("(event ", event.sequence(), ")"));
      return line.str();
    }
  }
}

}  // namespace inspector::cli
