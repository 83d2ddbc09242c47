#include "clients/cli/respond_args.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cli/answer_forms.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/json_values.h"
#include "clients/cli/mcp_args.h"
#include "clients/cli/pending_views.h"
#include "common/mcp/client_answers.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

using nlohmann::json;

constexpr char kAnswerOptions[] =
    "--json, --accept-defaults, KEY=VALUE, --decline, --cancel, --reject "
    "REASON or --text";

constexpr char kNothingSentHint[] =
    "checked before sending: nothing was sent; `inspectorctl pending -o json` "
    "shows the request";

// The request's kind, from `kind` or else its method.
v1::PendingKind KindOf(const v1::PendingRequest& item) {
  if (item.kind() != v1::PENDING_KIND_UNSPECIFIED) return item.kind();
  if (item.method() == "sampling/createMessage") return v1::SAMPLING;
  if (item.method() == "elicitation/create") return v1::ELICITATION;
  if (item.method() == "roots/list") return v1::ROOTS;
  return v1::PENDING_KIND_UNSPECIFIED;
}

// A usage error unless `item` is unknown or of kind `wanted`.
absl::Status RequireKind(const v1::PendingRequest* item, v1::PendingKind wanted,
                         const char* option, const char* instead) {
  if (item == nullptr) return absl::OkStatus();
  const v1::PendingKind kind = KindOf(*item);
  if (kind == wanted || kind == v1::PENDING_KIND_UNSPECIFIED) {
    return absl::OkStatus();
  }
  return UsageError(
      absl::StrCat(option, " answers ", PendingKindName(wanted), " requests; ",
                   item->id(), " is a ", PendingKindName(kind), " request (",
                   item->method(), ")"),
      instead);
}

template <typename T>
absl::StatusOr<T> Checked(absl::StatusOr<T> result) {
  if (!result.ok()) return WithHint(result.status(), kNothingSentHint);
  return result;
}

json Params(const v1::PendingRequest& item) {
  return StructToJson(item.params());
}

absl::StatusOr<json> CheckResult(const v1::PendingRequest* item, json result,
                                 bool apply_defaults) {
  if (item == nullptr) return result;
  switch (KindOf(*item)) {
    case v1::ELICITATION:
      return Checked(mcp::ValidateElicitationResult(
          Params(*item), std::move(result), apply_defaults));
    case v1::SAMPLING:
      return Checked(
          mcp::ValidateSamplingResult(Params(*item), std::move(result)));
    default:
      return result;
  }
}

}  // namespace

absl::StatusOr<AnswerMode> ChooseAnswerMode(const RespondOptions& options,
                                            bool stdin_is_terminal) {
  std::vector<std::string> given;
  if (options.json.has_value()) given.push_back("--json");
  if (!options.fields.empty()) given.push_back("KEY=VALUE");
  if (options.decline) given.push_back("--decline");
  if (options.cancel) given.push_back("--cancel");
  if (options.reject.has_value()) given.push_back("--reject");
  if (options.text.has_value()) given.push_back("--text");
  if (options.interactive) given.push_back("--interactive");
  // --accept-defaults completes --json or KEY=VALUE, or stands alone.
  const bool with_defaults_only =
      options.accept_defaults &&
      (given.empty() || (given.size() == 1 &&
                         (given[0] == "--json" || given[0] == "KEY=VALUE")));
  if (options.accept_defaults && !with_defaults_only) {
    given.push_back("--accept-defaults");
  }
  if (given.size() > 1) {
    return UsageError(
        absl::StrCat("give one answer, not ", absl::StrJoin(given, " and ")),
        "--accept-defaults may go with --json or KEY=VALUE; the other "
        "answer options stand alone");
  }
  AnswerMode mode;
  if (options.json.has_value()) {
    mode = AnswerMode::kJson;
  } else if (!options.fields.empty() || options.accept_defaults) {
    mode = AnswerMode::kFields;
  } else if (options.decline) {
    mode = AnswerMode::kDecline;
  } else if (options.cancel) {
    mode = AnswerMode::kCancel;
  } else if (options.reject.has_value()) {
    mode = AnswerMode::kReject;
  } else if (options.text.has_value()) {
    mode = AnswerMode::kText;
  } else if (options.interactive || stdin_is_terminal) {
    mode = AnswerMode::kInteractive;
  } else {
    return UsageError(
        "no answer given, and stdin is not a terminal for the interactive "
        "form",
        absl::StrCat("give one of ", kAnswerOptions,
                     "; or run it in a terminal (or with --interactive)"));
  }
  if (options.model.has_value() && mode != AnswerMode::kText &&
      mode != AnswerMode::kInteractive) {
    return UsageError("--model goes with --text (or the interactive reply)",
                      "for example: respond ID --text Paris --model my-model");
  }
  return mode;
}

absl::StatusOr<Answer> BuildAnswer(AnswerMode mode,
                                   const RespondOptions& options,
                                   const v1::PendingRequest* item) {
  Answer answer;
  switch (mode) {
    case AnswerMode::kDecline:
    case AnswerMode::kCancel: {
      const bool decline = mode == AnswerMode::kDecline;
      RETURN_IF_ERROR(RequireKind(item, v1::ELICITATION,
                                  decline ? "--decline" : "--cancel",
                                  "use --reject REASON to answer with an "
                                  "error"));
      answer.reject = true;
      answer.action =
          decline ? v1::REJECT_ACTION_DECLINE : v1::REJECT_ACTION_CANCEL;
      return answer;
    }
    case AnswerMode::kReject:
      answer.reject = true;
      answer.action = v1::REJECT_ACTION_ERROR;
      answer.reason = options.reject.value_or("");
      return answer;
    case AnswerMode::kText: {
      RETURN_IF_ERROR(RequireKind(item, v1::SAMPLING, "--text",
                                  "answer elicitations with KEY=VALUE, "
                                  "--accept-defaults or --json"));
      ASSIGN_OR_RETURN(
          answer.result,
          CheckResult(item,
                      SamplingTextResult(*options.text, SamplingModel(options)),
                      false));
      return answer;
    }
    case AnswerMode::kJson: {
      const std::string& text = *options.json;
      json result = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (result.is_discarded()) {
        return UsageError("--json is not valid JSON",
                          "give the result object, for example --json "
                          "'{\"action\":\"accept\",\"content\":{\"name\":"
                          "\"Ada\"}}'");
      }
      if (!result.is_object()) {
        return UsageError(absl::StrCat("--json must be a JSON object, not ",
                                       result.type_name()));
      }
      answer.apply_defaults = options.accept_defaults;
      ASSIGN_OR_RETURN(answer.result, CheckResult(item, std::move(result),
                                                  options.accept_defaults));
      return answer;
    }
    case AnswerMode::kFields: {
      RETURN_IF_ERROR(RequireKind(
          item, v1::ELICITATION,
          options.fields.empty() ? "--accept-defaults" : "KEY=VALUE",
          "answer sampling with --text or --json"));
      json content = json::object();
      if (item != nullptr) {
        const json params = Params(*item);
        std::vector<mcp::FormField> fields;
        if (!(params.contains("mode") && params["mode"] == "url")) {
          json schema = params.contains("requestedSchema")
                            ? params["requestedSchema"]
                            : json::object();
          ASSIGN_OR_RETURN(fields,
                           Checked(mcp::DescribeElicitationForm(schema)));
        }
        absl::StatusOr<json> parsed =
            ContentFromAssignments(fields, options.fields);
        if (!parsed.ok()) {
          // Usage errors keep their own hint; refused values get ours.
          if (!HasErrorInfo(parsed.status())) return parsed.status();
          return WithHint(parsed.status(), kNothingSentHint);
        }
        content = *std::move(parsed);
      } else {
        ASSIGN_OR_RETURN(google::protobuf::Struct arguments,
                         BuildToolArguments("", options.fields));
        content = StructToJson(arguments);
      }
      json result = {{"action", "accept"}};
      // A URL-mode request takes no content; --accept-defaults there just
      // accepts.
      if (!content.empty() || item == nullptr ||
          !(Params(*item).contains("mode") && Params(*item)["mode"] == "url")) {
        result["content"] = std::move(content);
      }
      answer.apply_defaults = options.accept_defaults;
      ASSIGN_OR_RETURN(answer.result, CheckResult(item, std::move(result),
                                                  options.accept_defaults));
      return answer;
    }
    case AnswerMode::kInteractive:
      break;
  }
  return UsageError("the interactive form needs a terminal");
}

Answer AnswerFromElicitResult(const nlohmann::json& result) {
  Answer answer;
  const std::string action =
      result.contains("action") && result["action"].is_string()
          ? result["action"].get<std::string>()
          : "accept";
  if (action == "decline" || action == "cancel") {
    answer.reject = true;
    answer.action = action == "decline" ? v1::REJECT_ACTION_DECLINE
                                        : v1::REJECT_ACTION_CANCEL;
    return answer;
  }
  answer.result = result;
  return answer;
}

std::string SamplingModel(const RespondOptions& options) {
  return options.model.value_or(kDefaultSamplingModel);
}

}  // namespace inspector::cli
