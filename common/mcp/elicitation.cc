// Elicitation answers (client_answers.h): the form a requestedSchema
// describes (DescribeElicitationForm), the checks on each field's value
// (type, enum, lengths, pattern, format, bounds, items) behind
// ValidateElicitationResult, and the reading of one field typed at a
// terminal (ParseFieldInput).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "common/mcp/answer_checks.h"
#include "common/mcp/client_answers.h"
#include "common/rfc3339.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inspector::mcp {
namespace {

using internal::CodePoints;
using internal::Invalid;
using internal::IsAscii;
using internal::IsEmail;
using internal::IsUri;
using internal::JsonTypeName;
using internal::kMaxExactInteger;
using internal::kPatternValueLimit;
using internal::Quote;
using nlohmann::json;

// ---- schema ----------------------------------------------------------------

// A form field plus what validation needs beyond the prompt's view.
struct Field {
  FormField form;
  // The rule a wrong choice breaks: "enum" for `enum` lists, "const" for
  // oneOf/anyOf lists of {const, title}.
  std::string choice_rule;
};

std::string PropertyPath(const std::string& name) {
  return absl::StrCat("requestedSchema.properties.", name);
}

absl::Status SchemaError(const std::string& where, std::string_view problem,
                         std::string rule = "schema") {
  std::string message = absl::StrCat("the request's ", where, " ",
                                     AbslView(problem), " (", rule, ")");
  return Invalid(std::move(message), where, std::move(rule));
}

absl::StatusOr<std::optional<int64_t>> NonNegativeInteger(
    const json& schema, const char* key, const std::string& where) {
  auto it = schema.find(key);
  if (it == schema.end()) return std::optional<int64_t>();
  if (!it->is_number() || it->get<double>() < 0 ||
      std::floor(it->get<double>()) != it->get<double>() ||
      it->get<double>() > kMaxExactInteger) {
    return SchemaError(absl::StrCat(where, ".", key),
                       "must be a non-negative integer");
  }
  return std::optional<int64_t>(static_cast<int64_t>(it->get<double>()));
}

absl::StatusOr<std::optional<double>> SchemaNumber(const json& schema,
                                                   const char* key,
                                                   const std::string& where) {
  auto it = schema.find(key);
  if (it == schema.end()) return std::optional<double>();
  if (!it->is_number()) {
    return SchemaError(absl::StrCat(where, ".", key), "must be a number");
  }
  return std::optional<double>(it->get<double>());
}

absl::StatusOr<std::string> SchemaString(const json& schema, const char* key,
                                         const std::string& where) {
  auto it = schema.find(key);
  if (it == schema.end()) return std::string();
  if (!it->is_string()) {
    return SchemaError(absl::StrCat(where, ".", key), "must be a string");
  }
  return it->get<std::string>();
}

// Choices from a list of {const, title} objects (oneOf / anyOf).
absl::StatusOr<std::vector<FormChoice>> TitledChoices(
    const json& list, const std::string& where) {
  if (!list.is_array() || list.empty()) {
    return SchemaError(where, "must be a non-empty array of {const, title}");
  }
  std::vector<FormChoice> choices;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& option = list[i];
    const std::string at = absl::StrCat(where, "[", i, "]");
    if (!option.is_object()) {
      return SchemaError(at, "must be an object {const, title}");
    }
    auto value = option.find("const");
    if (value == option.end() || !value->is_string()) {
      return SchemaError(at, "must have a string `const`");
    }
    FormChoice choice;
    choice.value = *value;
    auto title = option.find("title");
    choice.label = title != option.end() && title->is_string()
                       ? title->get<std::string>()
                       : value->get<std::string>();
    choices.push_back(std::move(choice));
  }
  return choices;
}

// Choices from an `enum` list of strings, labelled by `enumNames` (legacy)
// when it has one name per value.
absl::StatusOr<std::vector<FormChoice>> EnumChoices(const json& list,
                                                    const json* names,
                                                    const std::string& where) {
  if (!list.is_array() || list.empty()) {
    return SchemaError(where, "must be a non-empty array of strings");
  }
  const bool use_names =
      names != nullptr && names->is_array() && names->size() == list.size() &&
      std::all_of(names->begin(), names->end(),
                  [](const json& n) { return n.is_string(); });
  std::vector<FormChoice> choices;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      return SchemaError(absl::StrCat(where, "[", i, "]"),
                         "must be a string (enum values are strings)");
    }
    FormChoice choice;
    choice.value = list[i];
    choice.label =
        use_names ? (*names)[i].get<std::string>() : list[i].get<std::string>();
    choices.push_back(std::move(choice));
  }
  return choices;
}

absl::StatusOr<Field> DescribeProperty(const std::string& name,
                                       const json& schema) {
  const std::string where = PropertyPath(name);
  if (!schema.is_object()) return SchemaError(where, "must be a schema object");
  Field field;
  FormField& form = field.form;
  form.name = name;
  ASSIGN_OR_RETURN(form.title, SchemaString(schema, "title", where));
  if (form.title.empty()) form.title = name;
  ASSIGN_OR_RETURN(form.description,
                   SchemaString(schema, "description", where));
  if (auto it = schema.find("default"); it != schema.end()) {
    form.default_value = *it;
  }

  std::string type;
  if (auto it = schema.find("type"); it != schema.end()) {
    if (!it->is_string()) {
      return SchemaError(absl::StrCat(where, ".type"),
                         "must be one type name (string, number, integer, "
                         "boolean or array)");
    }
    type = it->get<std::string>();
  } else if (schema.contains("enum") || schema.contains("oneOf") ||
             schema.contains("anyOf")) {
    type = "string";
  } else {
    return SchemaError(where, "has no type");
  }

  if (type == "object") {
    return SchemaError(where,
                       "is a nested object; elicitation schemas are flat "
                       "(primitive fields only)",
                       "flat");
  }
  if (type == "array") {
    form.type = "array";
    form.multi_select = true;
    auto items = schema.find("items");
    const std::string items_where = absl::StrCat(where, ".items");
    if (items == schema.end() || !items->is_object()) {
      return SchemaError(where,
                         "is an array without items; arrays are allowed only "
                         "as multi-select enums (items.enum or items.anyOf)",
                         "flat");
    }
    if (auto t = items->find("type");
        t != items->end() && !(t->is_string() && *t == "string")) {
      return SchemaError(absl::StrCat(items_where, ".type"),
                         "must be \"string\"; arrays are allowed only as "
                         "multi-select enums",
                         "flat");
    }
    if (auto e = items->find("enum"); e != items->end()) {
      ASSIGN_OR_RETURN(
          form.choices,
          EnumChoices(*e, nullptr, absl::StrCat(items_where, ".enum")));
      field.choice_rule = "enum";
    } else if (auto a = items->find("anyOf"); a != items->end()) {
      ASSIGN_OR_RETURN(form.choices,
                       TitledChoices(*a, absl::StrCat(items_where, ".anyOf")));
      field.choice_rule = "const";
    } else if (auto o = items->find("oneOf"); o != items->end()) {
      ASSIGN_OR_RETURN(form.choices,
                       TitledChoices(*o, absl::StrCat(items_where, ".oneOf")));
      field.choice_rule = "const";
    } else {
      return SchemaError(items_where,
                         "has neither enum nor anyOf; arrays are allowed "
                         "only as multi-select enums",
                         "flat");
    }
    ASSIGN_OR_RETURN(form.min_items,
                     NonNegativeInteger(schema, "minItems", where));
    ASSIGN_OR_RETURN(form.max_items,
                     NonNegativeInteger(schema, "maxItems", where));
    if (auto u = schema.find("uniqueItems"); u != schema.end()) {
      form.unique_items = u->is_boolean() && u->get<bool>();
    }
    return field;
  }
  if (type == "string") {
    form.type = "string";
    if (auto e = schema.find("enum"); e != schema.end()) {
      auto names = schema.find("enumNames");
      ASSIGN_OR_RETURN(
          form.choices,
          EnumChoices(*e, names == schema.end() ? nullptr : &*names,
                      absl::StrCat(where, ".enum")));
      field.choice_rule = "enum";
    } else if (auto o = schema.find("oneOf"); o != schema.end()) {
      ASSIGN_OR_RETURN(form.choices,
                       TitledChoices(*o, absl::StrCat(where, ".oneOf")));
      field.choice_rule = "const";
    } else if (auto a = schema.find("anyOf"); a != schema.end()) {
      ASSIGN_OR_RETURN(form.choices,
                       TitledChoices(*a, absl::StrCat(where, ".anyOf")));
      field.choice_rule = "const";
    }
    ASSIGN_OR_RETURN(form.min_length,
                     NonNegativeInteger(schema, "minLength", where));
    ASSIGN_OR_RETURN(form.max_length,
                     NonNegativeInteger(schema, "maxLength", where));
    ASSIGN_OR_RETURN(std::string format, SchemaString(schema, "format", where));
    // Other formats are annotations only (JSON Schema's default).
    if (format == "email" || format == "uri" || format == "date" ||
        format == "date-time") {
      form.format = format;
    }
    ASSIGN_OR_RETURN(form.pattern, SchemaString(schema, "pattern", where));
    return field;
  }
  if (type == "number" || type == "integer") {
    form.type = type;
    ASSIGN_OR_RETURN(form.minimum, SchemaNumber(schema, "minimum", where));
    ASSIGN_OR_RETURN(form.maximum, SchemaNumber(schema, "maximum", where));
    return field;
  }
  if (type == "boolean") {
    form.type = "boolean";
    return field;
  }
  return SchemaError(absl::StrCat(where, ".type"),
                     absl::StrCat("is \"", type,
                                  "\"; fields are string, number, integer, "
                                  "boolean or a multi-select array"));
}

absl::StatusOr<std::vector<Field>> DescribeFields(const json& schema) {
  if (!schema.is_object()) {
    return SchemaError("requestedSchema", "must be a JSON object schema");
  }
  if (auto type = schema.find("type");
      type != schema.end() && !(type->is_string() && *type == "object")) {
    return SchemaError("requestedSchema.type", "must be \"object\"");
  }
  std::vector<Field> fields;
  auto properties = schema.find("properties");
  if (properties != schema.end() && !properties->is_object()) {
    return SchemaError("requestedSchema.properties", "must be an object");
  }
  std::vector<std::string> required;
  if (auto it = schema.find("required"); it != schema.end()) {
    if (!it->is_array()) {
      return SchemaError("requestedSchema.required",
                         "must be an array of field names");
    }
    for (const json& name : *it) {
      if (!name.is_string()) {
        return SchemaError("requestedSchema.required",
                           "must be an array of field names");
      }
      const std::string n = name.get<std::string>();
      if (properties == schema.end() || !properties->contains(n)) {
        return SchemaError(
            "requestedSchema.required",
            absl::StrCat("names \"", n, "\", which is not a property"));
      }
      if (std::find(required.begin(), required.end(), n) == required.end()) {
        required.push_back(n);
      }
    }
  }
  if (properties == schema.end()) return fields;
  // Required fields first, in their listed order; then the rest by name
  // (json objects iterate sorted).
  for (const std::string& name : required) {
    ASSIGN_OR_RETURN(Field field, DescribeProperty(name, (*properties)[name]));
    field.form.required = true;
    fields.push_back(std::move(field));
  }
  for (const auto& [name, property] : properties->items()) {
    if (std::find(required.begin(), required.end(), name) != required.end()) {
      continue;
    }
    ASSIGN_OR_RETURN(Field field, DescribeProperty(name, property));
    fields.push_back(std::move(field));
  }
  return fields;
}

// ---- values ----------------------------------------------------------------

std::string FormatNumber(double value) {
  if (std::floor(value) == value && std::fabs(value) < kMaxExactInteger) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return json(value).dump();
}

std::string ChoiceList(const FormField& form) {
  std::vector<std::string> items;
  for (const FormChoice& choice : form.choices) {
    std::string item = Quote(choice.value);
    if (choice.value.is_string() &&
        choice.label != choice.value.get<std::string>()) {
      absl::StrAppend(&item, " (", choice.label, ")");
    }
    items.push_back(std::move(item));
  }
  return absl::StrJoin(items, ", ");
}

// The start of a message about `form`'s value: `field "age": ` or, for a
// value that came from the schema, `field "age": the schema's default 7 `.
std::string Subject(const FormField& form) {
  return absl::StrCat("field \"", form.name, "\"");
}

absl::Status ValueError(const FormField& form, bool from_default,
                        const json& value, std::string_view problem,
                        std::string rule) {
  std::string message = Subject(form);
  if (from_default) {
    absl::StrAppend(&message, ": the schema's default ", Quote(value));
  }
  absl::StrAppend(&message, ": ", AbslView(problem), " (", rule, ")");
  return Invalid(std::move(message), form.name, std::move(rule));
}

bool IsChoice(const FormField& form, const json& value) {
  return std::any_of(form.choices.begin(), form.choices.end(),
                     [&](const FormChoice& c) { return c.value == value; });
}

bool PatternMismatch(const std::string& pattern, const std::string& value) {
  if (pattern.empty() || !IsAscii(pattern) || !IsAscii(value) ||
      value.size() > kPatternValueLimit) {
    return false;
  }
  try {
    const std::regex re(pattern, std::regex::ECMAScript);
    return !std::regex_search(value, re);
  } catch (const std::regex_error&) {
    // A pattern std::regex cannot compile or run is left to the server.
    return false;
  }
}

absl::Status CheckString(const Field& field, bool from_default, json& value) {
  const FormField& form = field.form;
  if (!value.is_string()) {
    return ValueError(
        form, from_default, value,
        absl::StrCat("must be a string, got ", JsonTypeName(value)), "type");
  }
  const std::string& text = value.get_ref<const std::string&>();
  if (!form.choices.empty()) {
    if (!IsChoice(form, value)) {
      return ValueError(
          form, from_default, value,
          absl::StrCat(Quote(value), " is not one of ", ChoiceList(form)),
          field.choice_rule);
    }
    return absl::OkStatus();
  }
  const int64_t length = CodePoints(text);
  if (form.min_length && length < *form.min_length) {
    return ValueError(form, from_default, value,
                      absl::StrCat("must be at least ", *form.min_length,
                                   " characters long, got ", length),
                      "minLength");
  }
  if (form.max_length && length > *form.max_length) {
    return ValueError(form, from_default, value,
                      absl::StrCat("must be at most ", *form.max_length,
                                   " characters long, got ", length),
                      "maxLength");
  }
  if (PatternMismatch(form.pattern, text)) {
    return ValueError(
        form, from_default, value,
        absl::StrCat(Quote(value), " does not match ", form.pattern),
        "pattern");
  }
  bool ok = true;
  std::string what;
  if (form.format == "email") {
    ok = IsEmail(text);
    what = "an email address such as name@example.com";
  } else if (form.format == "uri") {
    ok = IsUri(text);
    what = "an absolute URI such as https://example.com/page";
  } else if (form.format == "date") {
    ok = IsRfc3339FullDate(text);
    what = "a date YYYY-MM-DD";
  } else if (form.format == "date-time") {
    ok = IsRfc3339DateTime(text);
    what = "an RFC 3339 date-time such as 2025-06-01T12:00:00Z";
  }
  if (!ok) {
    return ValueError(form, from_default, value,
                      absl::StrCat(Quote(value), " is not ", what), "format");
  }
  return absl::OkStatus();
}

absl::Status CheckNumber(const Field& field, bool from_default, json& value) {
  const FormField& form = field.form;
  const bool integer = form.type == "integer";
  if (!value.is_number()) {
    return ValueError(
        form, from_default, value,
        absl::StrCat("must be ", integer ? "an integer" : "a number", ", got ",
                     JsonTypeName(value)),
        "type");
  }
  const double number = value.get<double>();
  if (integer) {
    if (!value.is_number_integer() && (std::floor(number) != number ||
                                       std::fabs(number) > kMaxExactInteger)) {
      return ValueError(
          form, from_default, value,
          absl::StrCat("must be a whole number, got ", Quote(value)),
          "integer");
    }
    // Structs carry every number as a double: send 3, not 3.0.
    if (!value.is_number_integer()) value = static_cast<int64_t>(number);
  }
  if (form.minimum && number < *form.minimum) {
    return ValueError(
        form, from_default, value,
        absl::StrCat("must be at least ", FormatNumber(*form.minimum), ", got ",
                     Quote(value)),
        "minimum");
  }
  if (form.maximum && number > *form.maximum) {
    return ValueError(
        form, from_default, value,
        absl::StrCat("must be at most ", FormatNumber(*form.maximum), ", got ",
                     Quote(value)),
        "maximum");
  }
  return absl::OkStatus();
}

absl::Status CheckArray(const Field& field, bool from_default, json& value) {
  const FormField& form = field.form;
  if (!value.is_array()) {
    return ValueError(
        form, from_default, value,
        absl::StrCat("must be a list of choices, got ", JsonTypeName(value)),
        "type");
  }
  for (const json& item : value) {
    if (!item.is_string()) {
      return ValueError(
          form, from_default, value,
          absl::StrCat("choices are strings, got ", JsonTypeName(item)),
          "type");
    }
    if (!IsChoice(form, item)) {
      return ValueError(
          form, from_default, value,
          absl::StrCat(Quote(item), " is not one of ", ChoiceList(form)),
          field.choice_rule);
    }
  }
  const int64_t count = static_cast<int64_t>(value.size());
  if (form.min_items && count < *form.min_items) {
    return ValueError(
        form, from_default, value,
        absl::StrCat("needs at least ", *form.min_items,
                     *form.min_items == 1 ? " choice" : " choices", ", got ",
                     count),
        "minItems");
  }
  if (form.max_items && count > *form.max_items) {
    return ValueError(
        form, from_default, value,
        absl::StrCat("allows at most ", *form.max_items,
                     *form.max_items == 1 ? " choice" : " choices", ", got ",
                     count),
        "maxItems");
  }
  if (form.unique_items) {
    std::set<std::string> seen;
    for (const json& item : value) {
      if (!seen.insert(item.get<std::string>()).second) {
        return ValueError(form, from_default, value,
                          absl::StrCat(Quote(item), " is chosen twice"),
                          "uniqueItems");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckValue(const Field& field, bool from_default, json& value) {
  const std::string& type = field.form.type;
  if (type == "string") return CheckString(field, from_default, value);
  if (type == "number" || type == "integer") {
    return CheckNumber(field, from_default, value);
  }
  if (type == "array") return CheckArray(field, from_default, value);
  if (!value.is_boolean()) {
    return ValueError(
        field.form, from_default, value,
        absl::StrCat("must be true or false, got ", JsonTypeName(value)),
        "type");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<FormField>> DescribeElicitationForm(
    const nlohmann::json& requested_schema) {
  ASSIGN_OR_RETURN(std::vector<Field> fields, DescribeFields(requested_schema));
  std::vector<FormField> forms;
  forms.reserve(fields.size());
  for (Field& field : fields) forms.push_back(std::move(field.form));
  return forms;
}

absl::StatusOr<nlohmann::json> ValidateElicitationResult(
    const nlohmann::json& request_params, nlohmann::json result,
    bool apply_defaults) {
  if (!request_params.is_object()) {
    return Invalid("the elicitation request's params are not an object (type)",
                   "params", "type");
  }
  std::string mode = "form";
  if (auto it = request_params.find("mode"); it != request_params.end()) {
    if (!it->is_string() || (*it != "form" && *it != "url")) {
      return Invalid(absl::StrCat("the elicitation request's mode ", Quote(*it),
                                  " is neither \"form\" nor \"url\" (enum)"),
                     "mode", "enum");
    }
    mode = it->get<std::string>();
  }
  if (!result.is_object()) {
    return Invalid(
        absl::StrCat("the answer (result) must be a JSON object, got ",
                     JsonTypeName(result), " (type)"),
        "result", "type");
  }
  if (!result.contains("action")) {
    // A bare content object.
    result = json{{"action", "accept"}, {"content", std::move(result)}};
  }
  const json& action_value = result["action"];
  if (!action_value.is_string() ||
      (action_value != "accept" && action_value != "decline" &&
       action_value != "cancel")) {
    return Invalid(absl::StrCat("action ", Quote(action_value),
                                " must be \"accept\", \"decline\" or "
                                "\"cancel\" (enum)"),
                   "action", "enum");
  }
  for (const auto& [key, value] : result.items()) {
    if (key != "action" && key != "content" && key != "_meta") {
      return Invalid(absl::StrCat("the answer has an unknown member \"", key,
                                  "\"; an ElicitResult has action, content "
                                  "and _meta (unknown field)"),
                     key, "unknown field");
    }
  }
  const std::string action = action_value.get<std::string>();
  json out = json::object();
  out["action"] = action;
  if (auto meta = result.find("_meta"); meta != result.end()) {
    if (!meta->is_object()) {
      return Invalid("_meta must be an object (type)", "_meta", "type");
    }
    out["_meta"] = *meta;
  }
  if (action != "accept") return out;

  json content = json::object();
  if (auto it = result.find("content"); it != result.end()) {
    if (!it->is_object()) {
      return Invalid(absl::StrCat("content must be an object of field "
                                  "values, got ",
                                  JsonTypeName(*it), " (type)"),
                     "content", "type");
    }
    content = *it;
  }
  if (mode == "url") {
    if (!content.empty()) {
      return Invalid(
          "a URL-mode elicitation is answered with an action "
          "only; content is not allowed (unknown field)",
          "content", "unknown field");
    }
    return out;
  }

  json schema = json::object();
  if (auto it = request_params.find("requestedSchema");
      it != request_params.end()) {
    schema = *it;
  }
  ASSIGN_OR_RETURN(std::vector<Field> fields, DescribeFields(schema));
  for (const auto& [key, value] : content.items()) {
    // A structured binding cannot be captured before C++20 (clang).
    const std::string& name = key;
    const bool known =
        std::any_of(fields.begin(), fields.end(),
                    [&](const Field& f) { return f.form.name == name; });
    if (!known) {
      std::vector<std::string> names;
      for (const Field& f : fields) names.push_back(f.form.name);
      return Invalid(
          absl::StrCat(
              "field \"", key, "\" is not in the form (unknown field)",
              names.empty()
                  ? "; the form has no fields"
                  : absl::StrCat("; fields: ", absl::StrJoin(names, ", "))),
          key, "unknown field");
    }
  }
  for (const Field& field : fields) {
    const std::string& name = field.form.name;
    bool from_default = false;
    if (!content.contains(name)) {
      if (apply_defaults && field.form.default_value.has_value()) {
        content[name] = *field.form.default_value;
        from_default = true;
      } else if (field.form.required) {
        return Invalid(absl::StrCat("field \"", name, "\" is required",
                                    field.form.default_value.has_value()
                                        ? " (required; its default applies "
                                          "only with apply_defaults)"
                                        : " (required)"),
                       name, "required");
      } else {
        continue;
      }
    }
    RETURN_IF_ERROR(CheckValue(field, from_default, content[name]));
  }
  out["content"] = std::move(content);
  return out;
}

absl::StatusOr<nlohmann::json> ParseFieldInput(const FormField& field,
                                               std::string_view text) {
  Field checked;
  checked.form = field;
  checked.choice_rule = "enum";
  const std::string trimmed(absl::StripAsciiWhitespace(AbslView(text)));
  auto invalid = [&](std::string_view problem, std::string rule) {
    return Invalid(absl::StrCat("field \"", field.name,
                                "\": ", AbslView(problem), " (", rule, ")"),
                   field.name, rule);
  };
  // A choice by value, label, or 1-based number.
  auto resolve = [&](const std::string& word) -> absl::StatusOr<json> {
    for (const FormChoice& c : field.choices) {
      if (c.value.is_string() && c.value.get<std::string>() == word) {
        return c.value;
      }
    }
    for (const FormChoice& c : field.choices) {
      if (c.label == word) return c.value;
    }
    for (const FormChoice& c : field.choices) {
      if (absl::EqualsIgnoreCase(c.label, word) ||
          (c.value.is_string() &&
           absl::EqualsIgnoreCase(c.value.get<std::string>(), word))) {
        return c.value;
      }
    }
    size_t number = 0;
    if (absl::SimpleAtoi(word, &number) && number >= 1 &&
        number <= field.choices.size()) {
      return field.choices[number - 1].value;
    }
    std::vector<std::string> listed;
    for (size_t i = 0; i < field.choices.size(); ++i) {
      listed.push_back(absl::StrCat(i + 1, ") ", field.choices[i].label));
    }
    return invalid(absl::StrCat(Quote(json(word)), " is not a choice; ",
                                absl::StrJoin(listed, ", ")),
                   "enum");
  };

  json value;
  if (field.multi_select) {
    value = json::array();
    if (!trimmed.empty() && trimmed[0] == '[') {
      json parsed = json::parse(trimmed, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_discarded() || !parsed.is_array()) {
        return invalid("is not a JSON array of choices", "type");
      }
      for (const json& item : parsed) {
        if (!item.is_string()) {
          return invalid("choices are strings", "type");
        }
        ASSIGN_OR_RETURN(json choice, resolve(item.get<std::string>()));
        value.push_back(std::move(choice));
      }
    } else {
      for (absl::string_view word : absl::StrSplit(trimmed, ',')) {
        const std::string w(absl::StripAsciiWhitespace(word));
        if (w.empty()) continue;
        ASSIGN_OR_RETURN(json choice, resolve(w));
        value.push_back(std::move(choice));
      }
    }
  } else if (!field.choices.empty()) {
    ASSIGN_OR_RETURN(value, resolve(trimmed));
  } else if (field.type == "boolean") {
    const std::string lower = absl::AsciiStrToLower(trimmed);
    if (lower == "true" || lower == "yes" || lower == "y" || lower == "1" ||
        lower == "on") {
      value = true;
    } else if (lower == "false" || lower == "no" || lower == "n" ||
               lower == "0" || lower == "off") {
      value = false;
    } else {
      return invalid(
          absl::StrCat(Quote(json(trimmed)), " is not true/false (yes/no)"),
          "type");
    }
  } else if (field.type == "number" || field.type == "integer") {
    double number = 0;
    if (!absl::SimpleAtod(trimmed, &number) || !std::isfinite(number)) {
      return invalid(
          absl::StrCat(Quote(json(trimmed)), " is not a ",
                       field.type == "integer" ? "whole number" : "number"),
          "type");
    }
    int64_t whole = 0;
    if (absl::SimpleAtoi(trimmed, &whole)) {
      value = whole;
    } else {
      value = number;
    }
  } else {
    // Strings are taken as typed (leading and trailing blanks included).
    value = std::string(text);
  }
  RETURN_IF_ERROR(CheckValue(checked, /*from_default=*/false, value));
  return value;
}

}  // namespace inspector::mcp
