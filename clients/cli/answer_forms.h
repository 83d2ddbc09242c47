// Answers to elicitation and sampling requests typed by a person: the
// KEY=VALUE words of `inspectorctl respond ID k=v...` typed by the form's
// fields, and the interactive terminal form (elicitation) or reply prompt
// (sampling) of `respond` without an answer option.
//
// The form reads whole lines from an istream and writes prompts to an
// ostream, so tests feed it from a string. Every answer is checked with the
// same rules inspectord applies (common/mcp/client_answers.h) before it is
// returned: a field is asked again until its value passes, and the whole
// answer is checked before the person confirms it. Not thread-safe (the
// streams are the caller's).
#ifndef INSPECTOR_CLIENTS_CLI_ANSWER_FORMS_H_
#define INSPECTOR_CLIENTS_CLI_ANSWER_FORMS_H_

#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/mcp/client_answers.h"

namespace inspector::cli {

// Elicitation content from KEY=VALUE words, later keys replacing earlier
// ones. KEY=VALUE is parsed by the field's type (mcp::ParseFieldInput:
// numbers, booleans as true/false/yes/no, a choice by value, label or
// number, a multi-select as comma-separated choices or a JSON array);
// KEY:=JSON is taken as JSON. A key the form does not have is kept (as JSON
// when VALUE parses, else as a string) so that validation names it.
// Errors: usage errors for words without "=", INVALID_REQUEST from
// ParseFieldInput for values the field refuses.
absl::StatusOr<nlohmann::json> ContentFromAssignments(
    const std::vector<mcp::FormField>& fields,
    const std::vector<std::string>& assignments);

// The lines shown before a field's prompt: title, name and whether it is
// required; the description; what is expected (type, limits, format) and
// the numbered choices. Each line ends in "\n"; text is made safe for the
// terminal.
std::string RenderField(const mcp::FormField& field);

// The prompt of a field, without a newline: "age [30]: ", "nickname (Enter
// skips): ", "subscribe (y/n) [no]: ". `current` is the value Enter keeps
// (the schema's default, or the answer being edited).
std::string FieldPrompt(const mcp::FormField& field,
                        const std::optional<nlohmann::json>& current);

// A field's value as the form shows it: choices by label, strings as they
// are, lists comma-separated.
std::string DisplayValue(const mcp::FormField& field,
                         const nlohmann::json& value);

// Who asks, for the form's first line.
struct RequestHeader {
  std::string server;  // display name
  std::string id;      // pending request id
};

// Asks for an answer to the elicitation request with `params`: shows the
// message, offers to decline or cancel, asks each field (Enter keeps the
// default shown in brackets; choices are numbered; multi-select takes
// comma-separated numbers), then shows the answer and asks to send, edit,
// decline or cancel. URL-mode requests show the URL and its host and ask
// accept / decline / cancel. A form whose schema breaks the rules can only
// be declined or cancelled. Returns the ElicitResult to send, validated.
// End of input before a choice is made gives a CANCELLED local error:
// nothing is to be sent.
absl::StatusOr<nlohmann::json> RunElicitationForm(const nlohmann::json& params,
                                                  const RequestHeader& header,
                                                  std::istream& in,
                                                  std::ostream& out);

// Shows a sampling request's messages and reads one line typed as the
// assistant's reply; returns the CreateMessageResult (SamplingTextResult
// with `model`), validated. End of input: CANCELLED local error.
absl::StatusOr<nlohmann::json> RunSamplingPrompt(const nlohmann::json& params,
                                                 const RequestHeader& header,
                                                 std::string_view model,
                                                 std::istream& in,
                                                 std::ostream& out);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_ANSWER_FORMS_H_
