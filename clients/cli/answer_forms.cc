#include "clients/cli/answer_forms.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/pending_views.h"
#include "clients/cli/text.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inspector::cli {
namespace {

using mcp::FormChoice;
using mcp::FormField;
using nlohmann::json;

std::string MessageOf(const absl::Status& status) {
  return SanitizeForTerminal(std::string(status.message()));
}

absl::Status EndOfInput() {
  return LocalError(v1::CANCELLED,
                    "the input ended before an answer was chosen; nothing "
                    "was sent",
                    "answer again, or tell the server no with `--decline` "
                    "or `--cancel`");
}

// Reads one line without its line ending; false at end of input.
bool ReadLine(std::istream& in, std::string* line) {
  if (!std::getline(in, *line)) return false;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

bool IsBlank(std::string_view text) {
  return absl::StripAsciiWhitespace(AbslView(text)).empty();
}

// The first letter of an answer to a menu, lower case; 0 for blank.
char MenuChoice(const std::string& line) {
  absl::string_view word = absl::StripAsciiWhitespace(line);
  if (word.empty()) return 0;
  return absl::ascii_tolower(static_cast<unsigned char>(word[0]));
}

std::string Indented(std::string_view text, std::string_view indent) {
  std::string out;
  const std::string safe = SanitizeText(text);
  for (absl::string_view line : absl::StrSplit(safe, '\n')) {
    absl::StrAppend(&out, AbslView(indent), line, "\n");
  }
  return out;
}

std::string FormatLimit(double value) {
  if (std::floor(value) == value && std::fabs(value) < 9007199254740992.0) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return json(value).dump();
}

std::string Characters(int64_t n) {
  return absl::StrCat(n, n == 1 ? " character" : " characters");
}

// What a field expects, on one line ("text, 2 to 40 characters").
std::string Expectation(const FormField& field) {
  std::vector<std::string> parts;
  if (field.multi_select) {
    parts.push_back("choose any: numbers or names, separated by commas");
    if (field.min_items && field.max_items) {
      parts.push_back(absl::StrCat(*field.min_items, " to ", *field.max_items));
    } else if (field.min_items) {
      parts.push_back(absl::StrCat("at least ", *field.min_items));
    } else if (field.max_items) {
      parts.push_back(absl::StrCat("at most ", *field.max_items));
    }
  } else if (!field.choices.empty()) {
    parts.push_back("choose one: its number or name");
  } else if (field.type == "boolean") {
    parts.push_back("yes or no");
  } else if (field.type == "number" || field.type == "integer") {
    parts.push_back(field.type == "integer" ? "whole number" : "number");
    if (field.minimum && field.maximum) {
      parts.push_back(absl::StrCat("from ", FormatLimit(*field.minimum), " to ",
                                   FormatLimit(*field.maximum)));
    } else if (field.minimum) {
      parts.push_back(absl::StrCat("at least ", FormatLimit(*field.minimum)));
    } else if (field.maximum) {
      parts.push_back(absl::StrCat("at most ", FormatLimit(*field.maximum)));
    }
  } else {
    if (field.format == "email") {
      parts.push_back("email address");
    } else if (field.format == "uri") {
      parts.push_back("URI");
    } else if (field.format == "date") {
      parts.push_back("date YYYY-MM-DD");
    } else if (field.format == "date-time") {
      parts.push_back("date and time YYYY-MM-DDTHH:MM:SSZ");
    } else {
      parts.push_back("text");
    }
    if (field.min_length && field.max_length) {
      parts.push_back(absl::StrCat(*field.min_length, " to ",
                                   Characters(*field.max_length)));
    } else if (field.min_length) {
      parts.push_back(absl::StrCat("at least ", Characters(*field.min_length)));
    } else if (field.max_length) {
      parts.push_back(absl::StrCat("at most ", Characters(*field.max_length)));
    }
    if (!field.pattern.empty()) {
      parts.push_back(absl::StrCat("matching ", field.pattern));
    }
  }
  return absl::StrJoin(parts, ", ");
}

const FormField* FindField(const std::vector<FormField>& fields,
                           const std::string& name) {
  for (const FormField& field : fields) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

// Asks for one field until the value passes its rules. nullopt: skipped
// (optional field, nothing typed, nothing to keep).
absl::StatusOr<std::optional<json>> AskField(const FormField& field,
                                             const std::optional<json>& current,
                                             std::istream& in,
                                             std::ostream& out) {
  out << RenderField(field);
  while (true) {
    out << FieldPrompt(field, current) << std::flush;
    std::string line;
    if (!ReadLine(in, &line)) return EndOfInput();
    if (IsBlank(line)) {
      if (current.has_value()) return current;
      if (!field.required) return std::optional<json>();
      out << "  a value is required\n";
      continue;
    }
    absl::StatusOr<json> value = mcp::ParseFieldInput(field, line);
    if (!value.ok()) {
      out << "  invalid: " << MessageOf(value.status()) << "\n";
      continue;
    }
    return std::optional<json>(*std::move(value));
  }
}

// Asks every field in turn; `answers` holds the values kept so far (and is
// what Enter keeps when editing).
absl::Status AskFields(const std::vector<FormField>& fields, json& answers,
                       std::istream& in, std::ostream& out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    const FormField& field = fields[i];
    std::optional<json> current;
    if (answers.contains(field.name)) {
      current = answers[field.name];
    } else if (field.default_value.has_value()) {
      current = field.default_value;
    }
    out << "\n[" << (i + 1) << "/" << fields.size() << "] ";
    ASSIGN_OR_RETURN(std::optional<json> value,
                     AskField(field, current, in, out));
    if (value.has_value()) {
      answers[field.name] = *std::move(value);
    } else {
      answers.erase(field.name);
    }
  }
  return absl::OkStatus();
}

// Asks "[d]ecline, [c]ancel" (and accept when `can_accept`) until one is
// chosen; returns the action.
absl::StatusOr<std::string> AskAction(std::string_view question,
                                      bool can_accept, char default_choice,
                                      std::istream& in, std::ostream& out) {
  while (true) {
    out << question << std::flush;
    std::string line;
    if (!ReadLine(in, &line)) return EndOfInput();
    char choice = MenuChoice(line);
    if (choice == 0) choice = default_choice;
    if (can_accept && (choice == 'a' || choice == 'y')) return "accept";
    if (choice == 'd') return "decline";
    if (choice == 'c') return "cancel";
    out << "  type " << (can_accept ? "a, " : "") << "d or c\n";
  }
}

std::string ParamString(const json& params, const char* key) {
  auto it = params.find(key);
  return it != params.end() && it->is_string() ? it->get<std::string>() : "";
}

absl::StatusOr<json> RunUrlForm(const json& params, std::istream& in,
                                std::ostream& out) {
  const std::string url = ParamString(params, "url");
  std::string host = url;
  if (size_t scheme = host.find("://"); scheme != std::string::npos) {
    host = host.substr(scheme + 3);
  }
  host = host.substr(0, host.find_first_of("/?#"));
  if (size_t at = host.rfind('@'); at != std::string::npos) {
    host = host.substr(at + 1);
  }
  out << "  URL:  " << SanitizeForTerminal(url) << "\n"
      << "  Host: " << SanitizeForTerminal(host) << "\n"
      << "Open it yourself if you agree; the server learns only your "
         "choice.\n";
  ASSIGN_OR_RETURN(std::string action,
                   AskAction("[a]ccept, [d]ecline or [c]ancel: ",
                             /*can_accept=*/true, 0, in, out));
  return mcp::ValidateElicitationResult(params, json{{"action", action}},
                                        false);
}

}  // namespace

absl::StatusOr<nlohmann::json> ContentFromAssignments(
    const std::vector<FormField>& fields,
    const std::vector<std::string>& assignments) {
  json content = json::object();
  for (const std::string& word : assignments) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0 || (eq == 1 && word[0] == ':')) {
      return UsageError(absl::StrCat("invalid field \"", word, "\""),
                        "expected KEY=VALUE (typed by the form's field) or "
                        "KEY:=JSON, for example name=Ada or age:=30");
    }
    std::string key = word.substr(0, eq);
    const std::string value = word.substr(eq + 1);
    bool force_json = false;
    if (key.back() == ':') {
      force_json = true;
      key.pop_back();
    }
    json parsed = json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (force_json) {
      if (parsed.is_discarded()) {
        return UsageError(
            absl::StrCat("the value of ", key, ":= is not valid JSON: ", value),
            "KEY:=VALUE takes JSON (age:=30, tags:='[\"a\"]'); use "
            "KEY=VALUE to have it typed by the form");
      }
      content[key] = std::move(parsed);
      continue;
    }
    const FormField* field = FindField(fields, key);
    if (field == nullptr) {
      content[key] = parsed.is_discarded() ? json(value) : std::move(parsed);
      continue;
    }
    ASSIGN_OR_RETURN(content[key], mcp::ParseFieldInput(*field, value));
  }
  return content;
}

std::string RenderField(const FormField& field) {
  std::string text = SanitizeForTerminal(field.title);
  if (field.title != field.name) {
    absl::StrAppend(&text, " (", SanitizeForTerminal(field.name), ")");
  }
  if (field.required) absl::StrAppend(&text, ", required");
  absl::StrAppend(&text, "\n");
  if (!IsBlank(field.description)) {
    absl::StrAppend(&text, Indented(field.description, "  "));
  }
  absl::StrAppend(&text, "  ", SanitizeForTerminal(Expectation(field)), "\n");
  for (size_t i = 0; i < field.choices.size(); ++i) {
    const FormChoice& choice = field.choices[i];
    absl::StrAppend(&text, "    ", i + 1, ") ",
                    SanitizeForTerminal(choice.label));
    if (choice.value.is_string() &&
        choice.value.get<std::string>() != choice.label) {
      absl::StrAppend(&text, " (",
                      SanitizeForTerminal(choice.value.get<std::string>()),
                      ")");
    }
    absl::StrAppend(&text, "\n");
  }
  return text;
}

std::string DisplayValue(const FormField& field, const json& value) {
  auto label = [&](const json& v) -> std::string {
    for (const FormChoice& choice : field.choices) {
      if (choice.value == v) return choice.label;
    }
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  if (value.is_array()) {
    std::vector<std::string> labels;
    for (const json& item : value) labels.push_back(label(item));
    return SanitizeForTerminal(absl::StrJoin(labels, ", "));
  }
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  return SanitizeForTerminal(label(value));
}

std::string FieldPrompt(const FormField& field,
                        const std::optional<json>& current) {
  std::string prompt = SanitizeForTerminal(field.name);
  if (field.type == "boolean") absl::StrAppend(&prompt, " (y/n)");
  if (current.has_value()) {
    absl::StrAppend(&prompt, " [", DisplayValue(field, *current), "]");
  } else if (!field.required) {
    absl::StrAppend(&prompt, " (Enter skips)");
  }
  return prompt + ": ";
}

absl::StatusOr<nlohmann::json> RunElicitationForm(const nlohmann::json& params,
                                                  const RequestHeader& header,
                                                  std::istream& in,
                                                  std::ostream& out) {
  const bool url_mode = ParamString(params, "mode") == "url";
  out << SanitizeForTerminal(header.server)
      << (url_mode ? " asks you to open a URL" : " asks for input")
      << " (elicitation/create, id " << SanitizeForTerminal(header.id) << "):\n"
      << Indented(ParamString(params, "message"), "  ");
  if (url_mode) return RunUrlForm(params, in, out);

  json schema = json::object();
  if (auto it = params.find("requestedSchema"); it != params.end()) {
    schema = *it;
  }
  absl::StatusOr<std::vector<FormField>> described =
      mcp::DescribeElicitationForm(schema);
  if (!described.ok()) {
    out << "The form cannot be filled in: " << MessageOf(described.status())
        << "\n";
    ASSIGN_OR_RETURN(std::string action,
                     AskAction("[d]ecline or [c]ancel: ", false, 0, in, out));
    return json{{"action", action}};
  }
  const std::vector<FormField>& fields = *described;
  out << "(" << fields.size() << (fields.size() == 1 ? " field" : " fields")
      << "; Enter keeps the value in brackets; Ctrl-C leaves without "
         "answering)\n";
  ASSIGN_OR_RETURN(std::string start,
                   AskAction("Fill it in? [Y]es, [d]ecline or [c]ancel: ", true,
                             'y', in, out));
  if (start != "accept") return json{{"action", start}};

  json answers = json::object();
  RETURN_IF_ERROR(AskFields(fields, answers, in, out));
  while (true) {
    absl::StatusOr<json> checked = mcp::ValidateElicitationResult(
        params, json{{"action", "accept"}, {"content", answers}}, false);
    if (!checked.ok()) {
      // A default the schema itself gets wrong, or a rule only the whole
      // answer can break: ask that field again.
      out << "  invalid: " << MessageOf(checked.status()) << "\n";
      const FormField* field =
          FindField(fields, GetErrorDetails(checked.status())["field"]);
      if (field == nullptr) return checked.status();
      answers.erase(field->name);
      out << "\n";
      ASSIGN_OR_RETURN(std::optional<json> value,
                       AskField(*field, std::nullopt, in, out));
      if (value.has_value()) answers[field->name] = *std::move(value);
      continue;
    }
    out << "\nAnswer:\n";
    size_t width = 0;
    for (const FormField& field : fields) {
      if ((*checked)["content"].contains(field.name)) {
        width = std::max(width, DisplayWidth(field.name));
      }
    }
    bool any = false;
    for (const FormField& field : fields) {
      if (!(*checked)["content"].contains(field.name)) continue;
      any = true;
      out << "  " << SanitizeForTerminal(field.name) << ":"
          << std::string(width - DisplayWidth(field.name) + 1, ' ')
          << DisplayValue(field, (*checked)["content"][field.name]) << "\n";
    }
    if (!any) out << "  (no values)\n";
    while (true) {
      out << "Send it? [Y]es, [e]dit, [d]ecline or [c]ancel: " << std::flush;
      std::string line;
      if (!ReadLine(in, &line)) return EndOfInput();
      const char choice = MenuChoice(line);
      if (choice == 0 || choice == 'y') return *checked;
      if (choice == 'd') return json{{"action", "decline"}};
      if (choice == 'c') return json{{"action", "cancel"}};
      if (choice == 'e') break;
      out << "  type y, e, d or c\n";
    }
    RETURN_IF_ERROR(AskFields(fields, answers, in, out));
  }
}

absl::StatusOr<nlohmann::json> RunSamplingPrompt(const nlohmann::json& params,
                                                 const RequestHeader& header,
                                                 std::string_view model,
                                                 std::istream& in,
                                                 std::ostream& out) {
  out << SanitizeForTerminal(header.server)
      << " asks for a completion (sampling/createMessage, id "
      << SanitizeForTerminal(header.id) << "):\n";
  if (std::string system = ParamString(params, "systemPrompt");
      !system.empty()) {
    out << Indented(absl::StrCat("system: ", system), "  ");
  }
  if (auto messages = params.find("messages");
      messages != params.end() && messages->is_array()) {
    for (const json& message : *messages) {
      if (!message.is_object()) continue;
      std::string role = message.contains("role") && message["role"].is_string()
                             ? message["role"].get<std::string>()
                             : "?";
      json content = message.contains("content") ? message["content"] : json();
      std::vector<std::string> parts;
      for (const json& block :
           content.is_array() ? content : json::array({content})) {
        if (!block.is_object()) continue;
        const std::string type =
            block.contains("type") && block["type"].is_string()
                ? block["type"].get<std::string>()
                : "?";
        if (type == "text" && block.contains("text") &&
            block["text"].is_string()) {
          parts.push_back(block["text"].get<std::string>());
        } else {
          parts.push_back(absl::StrCat("[", type, "]"));
        }
      }
      out << Indented(absl::StrCat(role, ": ", absl::StrJoin(parts, " ")),
                      "  ");
    }
  }
  std::vector<std::string> notes;
  if (auto max = params.find("maxTokens");
      max != params.end() && max->is_number()) {
    notes.push_back(absl::StrCat("up to ", max->dump(), " tokens"));
  }
  if (auto tools = params.find("tools");
      tools != params.end() && tools->is_array() && !tools->empty()) {
    std::vector<std::string> names;
    for (const json& tool : *tools) {
      if (tool.is_object() && tool.contains("name") &&
          tool["name"].is_string()) {
        names.push_back(tool["name"].get<std::string>());
      }
    }
    notes.push_back(absl::StrCat("tools offered: ", absl::StrJoin(names, ", "),
                                 " (answer with --json to use them)"));
  }
  if (!notes.empty()) {
    out << "  (" << SanitizeForTerminal(absl::StrJoin(notes, "; ")) << ")\n";
  }
  out << "Type the assistant's reply on one line; it is sent as model \""
      << SanitizeForTerminal(model)
      << "\" (Ctrl-C leaves without answering).\n";
  while (true) {
    out << "reply: " << std::flush;
    std::string line;
    if (!ReadLine(in, &line)) return EndOfInput();
    if (IsBlank(line)) {
      out << "  the reply is empty; type some text, or leave with Ctrl-C "
             "and use --reject\n";
      continue;
    }
    return mcp::ValidateSamplingResult(params, SamplingTextResult(line, model));
  }
}

}  // namespace inspector::cli
