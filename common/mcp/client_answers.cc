#include "common/mcp/client_answers.h"

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
#include "common/rfc3339.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inspector::mcp {
namespace {

using nlohmann::json;

// Values quoted in messages are cut to this many bytes (plus "…").
constexpr size_t kQuoteLimit = 60;
// Larger values are not matched against `pattern` (std::regex recurses per
// character and can exhaust the stack on long input).
constexpr size_t kPatternValueLimit = 1024;
// The largest integer a double holds exactly (numbers travel as doubles in
// protobuf Structs).
constexpr double kMaxExactInteger = 9007199254740992.0;

absl::Status Invalid(std::string message, std::string field, std::string rule) {
  return Error(v1::INVALID_REQUEST, message,
               {{"field", std::move(field)}, {"rule", std::move(rule)}});
}

// `value` as compact JSON for a message, cut to kQuoteLimit bytes at a
// UTF-8 boundary.
std::string Quote(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() <= kQuoteLimit) return text;
  size_t cut = kQuoteLimit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return text.substr(0, cut) + "…";
}

std::string JsonTypeName(const json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

// Number of Unicode code points in UTF-8 `text` (JSON Schema's lengths
// count characters, not bytes). Invalid bytes count one each.
int64_t CodePoints(std::string_view text) {
  int64_t count = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++count;
  }
  return count;
}

bool IsAscii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x80;
  });
}

// ---- formats ---------------------------------------------------------------

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

// An absolute URI (RFC 3986): scheme ":" followed by URI characters only,
// with well-formed percent escapes. IRIs (raw non-ASCII) are refused.
bool IsUri(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  if (!absl::ascii_isalpha(static_cast<unsigned char>(text[0]))) return false;
  for (size_t i = 1; i < colon; ++i) {
    const char c = text[i];
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '+' &&
        c != '-' && c != '.') {
      return false;
    }
  }
  static constexpr std::string_view kAllowed = "-._~:/?#[]@!$&'()*+,;=";
  for (size_t i = colon + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return false;  // fewer than two hex digits
      if (!IsHex(text[i + 1]) || !IsHex(text[i + 2])) return false;
      i += 2;
      continue;
    }
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) continue;
    if (kAllowed.find(c) != std::string_view::npos) continue;
    return false;
  }
  return true;
}

// An RFC 5321 mailbox as forms check it: local@domain, one "@", no blanks
// or control characters, a dot-atom local part (or a quoted one), and a
// domain of letter/digit/hyphen labels (non-ASCII allowed for IDNs) or an
// address literal in brackets.
bool IsEmail(std::string_view text) {
  const size_t at = text.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == text.size()) {
    return false;
  }
  std::string_view local = text.substr(0, at), domain = text.substr(at + 1);
  if (local.size() > 64 || domain.size() > 255) return false;
  auto has_blank = [](std::string_view part) {
    return std::any_of(part.begin(), part.end(), [](char ch) {
      const auto c = static_cast<unsigned char>(ch);
      return c <= 0x20 || c == 0x7F;
    });
  };
  if (has_blank(domain)) return false;
  if (local.size() >= 2 && local.front() == '"' && local.back() == '"') {
    // Quoted local part: anything printable but a bare quote.
    std::string_view inner = local.substr(1, local.size() - 2);
    for (size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '\\') {
        ++i;
        continue;
      }
      if (inner[i] == '"' || static_cast<unsigned char>(inner[i]) < 0x20) {
        return false;
      }
    }
  } else {
    if (has_blank(local)) return false;
    if (local.find('@') != std::string_view::npos) return false;
    if (local.front() == '.' || local.back() == '.' ||
        local.find("..") != std::string_view::npos) {
      return false;
    }
    static constexpr std::string_view kSpecials = "()<>[]:;\\,\"";
    for (char c : local) {
      if (kSpecials.find(c) != std::string_view::npos) return false;
    }
  }
  if (domain.front() == '[') return domain.back() == ']' && domain.size() > 2;
  for (absl::string_view label : absl::StrSplit(AbslView(domain), '.')) {
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    for (unsigned char c : label) {
      if (!absl::ascii_isalnum(c) && c != '-' && c < 0x80) return false;
    }
  }
  return true;
}

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

// ---- sampling --------------------------------------------------------------

bool IsBase64(const std::string& text) {
  if (text.size() % 4 != 0) return false;
  size_t padding = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0) return false;  // data after padding
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '+' &&
        c != '/') {
      return false;
    }
  }
  return padding <= 2;
}

absl::Status SamplingError(const std::string& field, std::string_view problem,
                           std::string rule) {
  std::string message = absl::StrCat("sampling result: ", field, " ",
                                     AbslView(problem), " (", rule, ")");
  return Invalid(std::move(message), field, std::move(rule));
}

absl::Status RequireString(const json& object, const char* key,
                           const std::string& where, bool non_empty) {
  const std::string field = absl::StrCat(where, ".", key);
  auto it = object.find(key);
  if (it == object.end()) return SamplingError(field, "is missing", "required");
  if (!it->is_string()) {
    return SamplingError(
        field, absl::StrCat("must be a string, got ", JsonTypeName(*it)),
        "type");
  }
  if (non_empty && it->get_ref<const std::string&>().empty()) {
    return SamplingError(field, "must not be empty", "minLength");
  }
  return absl::OkStatus();
}

absl::Status CheckMediaBlock(const json& block, const std::string& where) {
  RETURN_IF_ERROR(RequireString(block, "data", where, /*non_empty=*/false));
  RETURN_IF_ERROR(RequireString(block, "mimeType", where, /*non_empty=*/true));
  if (!IsBase64(block["data"].get<std::string>())) {
    return SamplingError(absl::StrCat(where, ".data"), "must be base64",
                         "format");
  }
  return absl::OkStatus();
}

// The content blocks a tool result may hold (CallToolResult.content).
absl::Status CheckToolResultItem(const json& block, const std::string& where) {
  if (!block.is_object()) {
    return SamplingError(where, "must be a content block object", "type");
  }
  RETURN_IF_ERROR(RequireString(block, "type", where, /*non_empty=*/true));
  const std::string type = block["type"].get<std::string>();
  if (type == "text") return RequireString(block, "text", where, false);
  if (type == "image" || type == "audio") return CheckMediaBlock(block, where);
  if (type == "resource_link") {
    RETURN_IF_ERROR(RequireString(block, "uri", where, true));
    return RequireString(block, "name", where, false);
  }
  if (type == "resource") {
    auto resource = block.find("resource");
    if (resource == block.end() || !resource->is_object()) {
      return SamplingError(absl::StrCat(where, ".resource"),
                           "must be an object", "required");
    }
    return RequireString(*resource, "uri", absl::StrCat(where, ".resource"),
                         true);
  }
  return SamplingError(absl::StrCat(where, ".type"),
                       absl::StrCat("is \"", type,
                                    "\"; expected text, image, audio, "
                                    "resource_link or resource"),
                       "enum");
}

struct SamplingContext {
  bool tools_offered = false;
  bool tools_forbidden = false;  // toolChoice.mode "none"
  std::set<std::string> tool_names;
  std::string role;
};

absl::Status CheckSamplingBlock(const json& block, const std::string& where,
                                const SamplingContext& context) {
  if (!block.is_object()) {
    return SamplingError(where, "must be a content block object", "type");
  }
  RETURN_IF_ERROR(RequireString(block, "type", where, /*non_empty=*/true));
  const std::string type = block["type"].get<std::string>();
  if (type == "text") return RequireString(block, "text", where, false);
  if (type == "image" || type == "audio") return CheckMediaBlock(block, where);
  if (type == "tool_use" || type == "tool_result") {
    if (!context.tools_offered) {
      return SamplingError(absl::StrCat(where, ".type"),
                           absl::StrCat("is \"", type,
                                        "\", but the request offered no "
                                        "tools"),
                           "enum");
    }
  }
  if (type == "tool_use") {
    if (context.tools_forbidden) {
      return SamplingError(absl::StrCat(where, ".type"),
                           "is \"tool_use\", but the request's toolChoice "
                           "mode is \"none\"",
                           "toolChoice");
    }
    if (context.role != "assistant") {
      return SamplingError(
          where, "is a tool_use; only the assistant uses tools", "role");
    }
    RETURN_IF_ERROR(RequireString(block, "id", where, true));
    RETURN_IF_ERROR(RequireString(block, "name", where, true));
    const std::string name = block["name"].get<std::string>();
    if (context.tool_names.count(name) == 0) {
      return SamplingError(
          absl::StrCat(where, ".name"),
          absl::StrCat("is \"", name,
                       "\", which is not one of the offered "
                       "tools: ",
                       absl::StrJoin(context.tool_names, ", ")),
          "enum");
    }
    auto input = block.find("input");
    if (input == block.end() || !input->is_object()) {
      return SamplingError(absl::StrCat(where, ".input"),
                           "must be an object of tool arguments",
                           input == block.end() ? "required" : "type");
    }
    return absl::OkStatus();
  }
  if (type == "tool_result") {
    if (context.role != "user") {
      return SamplingError(
          where, "is a tool_result; tool results come from the user", "role");
    }
    RETURN_IF_ERROR(RequireString(block, "toolUseId", where, true));
    auto content = block.find("content");
    if (content == block.end() || !content->is_array()) {
      return SamplingError(absl::StrCat(where, ".content"),
                           "must be an array of content blocks",
                           content == block.end() ? "required" : "type");
    }
    for (size_t i = 0; i < content->size(); ++i) {
      RETURN_IF_ERROR(CheckToolResultItem(
          (*content)[i], absl::StrCat(where, ".content[", i, "]")));
    }
    if (auto s = block.find("structuredContent");
        s != block.end() && !s->is_object()) {
      return SamplingError(absl::StrCat(where, ".structuredContent"),
                           "must be an object", "type");
    }
    if (auto e = block.find("isError"); e != block.end() && !e->is_boolean()) {
      return SamplingError(absl::StrCat(where, ".isError"),
                           "must be true or false", "type");
    }
    return absl::OkStatus();
  }
  return SamplingError(
      absl::StrCat(where, ".type"),
      absl::StrCat("is \"", type, "\"; expected text, image or audio",
                   context.tools_offered ? ", tool_use or tool_result" : ""),
      "enum");
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

absl::StatusOr<nlohmann::json> ValidateSamplingResult(
    const nlohmann::json& request_params, nlohmann::json result) {
  if (!result.is_object()) {
    return Invalid(absl::StrCat("sampling result: must be a JSON object, got ",
                                JsonTypeName(result), " (type)"),
                   "result", "type");
  }
  SamplingContext context;
  if (request_params.is_object()) {
    if (auto tools = request_params.find("tools");
        tools != request_params.end() && tools->is_array() && !tools->empty()) {
      context.tools_offered = true;
      for (const json& tool : *tools) {
        if (tool.is_object()) {
          auto name = tool.find("name");
          if (name != tool.end() && name->is_string()) {
            context.tool_names.insert(name->get<std::string>());
          }
        }
      }
    }
    if (auto choice = request_params.find("toolChoice");
        choice != request_params.end() && choice->is_object()) {
      auto mode = choice->find("mode");
      context.tools_forbidden =
          mode != choice->end() && mode->is_string() && *mode == "none";
    }
  }

  auto role = result.find("role");
  if (role == result.end()) {
    return SamplingError("role", "is missing", "required");
  }
  if (!role->is_string() || (*role != "assistant" && *role != "user")) {
    return SamplingError(
        "role",
        absl::StrCat(Quote(*role), " must be \"assistant\" or \"user\""),
        "enum");
  }
  context.role = role->get<std::string>();
  auto model = result.find("model");
  if (model == result.end()) {
    return SamplingError("model", "is missing", "required");
  }
  if (!model->is_string() || model->get_ref<const std::string&>().empty()) {
    return SamplingError("model", "must be a non-empty string naming the model",
                         "type");
  }
  if (auto stop = result.find("stopReason");
      stop != result.end() && !stop->is_string()) {
    return SamplingError(
        "stopReason",
        absl::StrCat("must be a string, got ", JsonTypeName(*stop)), "type");
  }
  auto content = result.find("content");
  if (content == result.end()) {
    return SamplingError("content", "is missing", "required");
  }
  if (content->is_array()) {
    if (!context.tools_offered) {
      return SamplingError("content",
                           "is a list of blocks, which is allowed only when "
                           "the request offered tools; give one block",
                           "type");
    }
    if (content->empty()) {
      return SamplingError("content", "must hold at least one block",
                           "minItems");
    }
    bool has_tool_result = false, has_other = false;
    for (size_t i = 0; i < content->size(); ++i) {
      const json& block = (*content)[i];
      RETURN_IF_ERROR(
          CheckSamplingBlock(block, absl::StrCat("content[", i, "]"), context));
      (block["type"] == "tool_result" ? has_tool_result : has_other) = true;
    }
    if (has_tool_result && has_other) {
      return SamplingError("content",
                           "mixes tool_result blocks with other blocks; a "
                           "message with tool results holds only tool results",
                           "tool_result");
    }
  } else {
    RETURN_IF_ERROR(CheckSamplingBlock(*content, "content", context));
  }

  json out = json::object();
  out["role"] = *role;
  out["content"] = *content;
  out["model"] = result["model"];
  if (auto stop = result.find("stopReason"); stop != result.end()) {
    out["stopReason"] = *stop;
  }
  if (auto meta = result.find("_meta"); meta != result.end()) {
    if (!meta->is_object()) {
      return SamplingError("_meta", "must be an object", "type");
    }
    out["_meta"] = *meta;
  }
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
