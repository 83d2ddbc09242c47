#include "clients/cli/tool_lint.h"

#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace inspector::cli {
namespace {

using json = nlohmann::json;
using Pointer = json::json_pointer;

// JSON Schema keywords that common MCP clients drop, flatten or refuse
// (function-calling APIs accept a subset of JSON Schema): a schema that
// relies on them reaches the model as something else, or not at all.
constexpr std::string_view kDroppedKeywords[] = {
    "$ref",      "$defs",       "definitions",     "oneOf",
    "anyOf",     "allOf",       "not",             "if",
    "then",      "else",        "patternProperties", "dependentSchemas",
    "dependentRequired", "unevaluatedProperties", "prefixItems",
    "$dynamicRef",
};

// Keywords whose value is a schema, an array of schemas or a map of them:
// where the walk goes on.
constexpr std::string_view kSchemaMaps[] = {"properties", "$defs",
                                            "definitions",
                                            "patternProperties",
                                            "dependentSchemas"};
constexpr std::string_view kSchemaLists[] = {"oneOf", "anyOf", "allOf",
                                             "prefixItems"};
constexpr std::string_view kSchemaValues[] = {
    "items", "additionalProperties", "not", "if", "then", "else",
    "unevaluatedProperties", "contains"};

bool ValidToolName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                    c == '.';
    if (!ok) return false;
  }
  return true;
}

class ToolLinter {
 public:
  ToolLinter(const std::string& server, const json& tool,
             std::vector<LintFinding>* out)
      : server_(server), out_(out) {
    if (tool.is_object() && tool.contains("name") &&
        tool["name"].is_string()) {
      name_ = tool["name"].get<std::string>();
    }
  }

  void Lint(const json& tool) {
    if (!ValidToolName(name_)) {
      Add(LintSeverity::kError, "name-format", "",
          absl::StrCat("the name \"", name_,
                       "\" is not 1 to 128 of A-Z a-z 0-9 _ - . (SEP-986); "
                       "clients may refuse or rename it"));
    } else if (name_.front() == '-' || name_.front() == '.' ||
               name_.back() == '-' || name_.back() == '.') {
      Add(LintSeverity::kWarning, "name-edge", "",
          "the name starts or ends with - or ., which some clients' "
          "namespacing breaks on");
    }
    const json* description = Member(tool, "description");
    if (description == nullptr || !description->is_string() ||
        description->get<std::string>().empty()) {
      Add(LintSeverity::kWarning, "description-missing", "/description",
          "no description: a model chooses tools by their description");
    }
    const json* input = Member(tool, "inputSchema");
    if (input == nullptr || !input->is_object() ||
        !IsType(*input, "object")) {
      Add(LintSeverity::kError, "input-schema-type", "/inputSchema",
          "inputSchema must be a JSON Schema of type \"object\"");
    }
    if (input != nullptr && input->is_object()) {
      Pointer at("/inputSchema");
      WalkSchema(*input, at, /*top=*/true);
    }
    const json* output = Member(tool, "outputSchema");
    if (output != nullptr) {
      if (!output->is_object() || !IsType(*output, "object")) {
        Add(LintSeverity::kError, "output-schema-type", "/outputSchema",
            "outputSchema must be a JSON Schema of type \"object\"");
      } else {
        Pointer at("/outputSchema");
        WalkSchema(*output, at, /*top=*/true);
      }
    }
  }

  // The recorded results of this tool against its output schema.
  void CheckResults(const json& tool, const std::vector<RecordedResult>& all) {
    const json* output = Member(tool, "outputSchema");
    if (output == nullptr || !output->is_object()) return;
    int index = 0;
    for (const RecordedResult& recorded : all) {
      if (recorded.tool != name_) continue;
      ++index;
      const json& result = recorded.result;
      if (!result.is_object()) continue;
      const json* is_error = Member(result, "isError");
      if (is_error != nullptr && is_error->is_boolean() &&
          is_error->get<bool>()) {
        continue;  // an error result need not be structured
      }
      const json* structured = Member(result, "structuredContent");
      const std::string which = absl::StrCat("recorded call ", index);
      if (structured == nullptr) {
        Add(LintSeverity::kError, "output-missing", "/structuredContent",
            absl::StrCat(which,
                         ": the tool declares an outputSchema but its result "
                         "has no structuredContent"));
        continue;
      }
      for (const std::string& problem :
           SchemaMismatches(*output, *structured)) {
        Add(LintSeverity::kError, "output-mismatch", "/structuredContent",
            absl::StrCat(which, ": structuredContent does not satisfy the "
                                "outputSchema: ",
                         problem));
      }
    }
  }

 private:
  static const json* Member(const json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  static bool IsType(const json& schema, std::string_view type) {
    const json* t = Member(schema, "type");
    return t != nullptr && t->is_string() && t->get<std::string>() == type;
  }

  void WalkSchema(const json& schema, const Pointer& at, bool top) {
    if (!schema.is_object()) return;
    for (std::string_view keyword : kDroppedKeywords) {
      if (schema.contains(std::string(keyword))) {
        Add(LintSeverity::kWarning, "schema-keyword",
            (at / std::string(keyword)).to_string(),
            absl::StrCat("\"", std::string(keyword),
                         "\" is dropped or refused by common clients; "
                         "inline it or describe the choice in plain "
                         "properties"));
      }
    }
    if (const json* values = Member(schema, "enum");
        values != nullptr && values->is_array() &&
        values->size() > kHugeEnum) {
      Add(LintSeverity::kWarning, "enum-huge", (at / "enum").to_string(),
          absl::StrCat("an enum of ", values->size(),
                       " values (more than ", kHugeEnum,
                       ") costs every prompt that lists this tool"));
    }
    const json* properties = Member(schema, "properties");
    if (const json* required = Member(schema, "required");
        required != nullptr && required->is_array()) {
      for (const json& name : *required) {
        if (!name.is_string()) continue;
        if (properties == nullptr || !properties->is_object() ||
            !properties->contains(name.get<std::string>())) {
          Add(LintSeverity::kWarning, "required-unknown",
              (at / "required").to_string(),
              absl::StrCat("\"", name.get<std::string>(),
                           "\" is required but not among the properties"));
        }
      }
    }
    if (top && properties != nullptr && properties->is_object() &&
        at.to_string() == "/inputSchema") {
      for (const auto& [name, property] : properties->items()) {
        const json* description = Member(property, "description");
        if (description == nullptr || !description->is_string() ||
            description->get<std::string>().empty()) {
          Add(LintSeverity::kWarning, "argument-description-missing",
              (at / "properties" / name).to_string(),
              absl::StrCat("the argument \"", name,
                           "\" has no description"));
        }
      }
    }
    for (std::string_view key : kSchemaMaps) {
      const json* map = Member(schema, std::string(key).c_str());
      if (map == nullptr || !map->is_object()) continue;
      for (const auto& [name, sub] : map->items()) {
        WalkSchema(sub, at / std::string(key) / name, false);
      }
    }
    for (std::string_view key : kSchemaLists) {
      const json* list = Member(schema, std::string(key).c_str());
      if (list == nullptr || !list->is_array()) continue;
      for (size_t i = 0; i < list->size(); ++i) {
        WalkSchema((*list)[i], at / std::string(key) / i, false);
      }
    }
    for (std::string_view key : kSchemaValues) {
      const json* sub = Member(schema, std::string(key).c_str());
      if (sub != nullptr) WalkSchema(*sub, at / std::string(key), false);
    }
  }

  void Add(LintSeverity severity, std::string code, std::string path,
           std::string message) {
    out_->push_back({severity, std::move(code), server_, name_,
                     std::move(path), std::move(message)});
  }

  const std::string& server_;
  std::string name_;
  std::vector<LintFinding>* out_;
};

std::string TypeOf(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float: {
      const double d = value.get<double>();
      return std::floor(d) == d ? "integer" : "number";
    }
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "unknown";
  }
}

bool HasType(const json& value, const std::string& type) {
  const std::string actual = TypeOf(value);
  return actual == type || (type == "number" && actual == "integer");
}

void Mismatches(const json& schema, const json& value, const Pointer& at,
                std::vector<std::string>* out) {
  if (!schema.is_object()) return;
  auto where = [&at] {
    const std::string p = at.to_string();
    return p.empty() ? std::string("(the value)") : p;
  };
  if (auto t = schema.find("type"); t != schema.end()) {
    std::vector<std::string> types;
    if (t->is_string()) types.push_back(t->get<std::string>());
    if (t->is_array()) {
      for (const json& one : *t) {
        if (one.is_string()) types.push_back(one.get<std::string>());
      }
    }
    bool ok = types.empty();
    for (const std::string& type : types) ok = ok || HasType(value, type);
    if (!ok) {
      out->push_back(absl::StrCat(where(), ": is ", TypeOf(value),
                                  ", the schema wants ",
                                  absl::StrJoin(types, " or ")));
      return;
    }
  }
  if (auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
    bool found = false;
    for (const json& one : *e) found = found || one == value;
    if (!found) {
      out->push_back(absl::StrCat(where(), ": ", value.dump(),
                                  " is not one of the enum's values"));
    }
  }
  if (auto c = schema.find("const"); c != schema.end() && *c != value) {
    out->push_back(absl::StrCat(where(), ": ", value.dump(), " is not ",
                                c->dump()));
  }
  if (value.is_object()) {
    if (auto r = schema.find("required"); r != schema.end() && r->is_array()) {
      for (const json& name : *r) {
        if (name.is_string() && !value.contains(name.get<std::string>())) {
          out->push_back(absl::StrCat(where(), ": lacks the required \"",
                                      name.get<std::string>(), "\""));
        }
      }
    }
    const auto properties = schema.find("properties");
    const auto additional = schema.find("additionalProperties");
    for (const auto& [key, member] : value.items()) {
      if (properties != schema.end() && properties->is_object() &&
          properties->contains(key)) {
        Mismatches((*properties)[key], member, at / key, out);
      } else if (additional != schema.end()) {
        if (additional->is_boolean() && !additional->get<bool>()) {
          out->push_back(absl::StrCat((at / key).to_string(),
                                      ": is not allowed (additionalProperties "
                                      "is false)"));
        } else if (additional->is_object()) {
          Mismatches(*additional, member, at / key, out);
        }
      }
    }
  }
  if (value.is_array()) {
    if (auto items = schema.find("items");
        items != schema.end() && items->is_object()) {
      for (size_t i = 0; i < value.size(); ++i) {
        Mismatches(*items, value[i], at / i, out);
      }
    }
    if (auto n = schema.find("minItems");
        n != schema.end() && n->is_number() && value.size() < n->get<double>()) {
      out->push_back(absl::StrCat(where(), ": has ", value.size(),
                                  " items, fewer than ", n->dump()));
    }
    if (auto n = schema.find("maxItems");
        n != schema.end() && n->is_number() && value.size() > n->get<double>()) {
      out->push_back(absl::StrCat(where(), ": has ", value.size(),
                                  " items, more than ", n->dump()));
    }
  }
  if (value.is_number()) {
    const double d = value.get<double>();
    if (auto n = schema.find("minimum");
        n != schema.end() && n->is_number() && d < n->get<double>()) {
      out->push_back(absl::StrCat(where(), ": ", value.dump(),
                                  " is below the minimum ", n->dump()));
    }
    if (auto n = schema.find("maximum");
        n != schema.end() && n->is_number() && d > n->get<double>()) {
      out->push_back(absl::StrCat(where(), ": ", value.dump(),
                                  " is above the maximum ", n->dump()));
    }
  }
  if (value.is_string()) {
    // Lengths in characters (code points), as JSON Schema counts them.
    size_t length = 0;
    for (unsigned char c : value.get_ref<const std::string&>()) {
      if ((c & 0xC0) != 0x80) ++length;
    }
    if (auto n = schema.find("minLength");
        n != schema.end() && n->is_number() && length < n->get<double>()) {
      out->push_back(absl::StrCat(where(), ": is shorter than ", n->dump(),
                                  " characters"));
    }
    if (auto n = schema.find("maxLength");
        n != schema.end() && n->is_number() && length > n->get<double>()) {
      out->push_back(absl::StrCat(where(), ": is longer than ", n->dump(),
                                  " characters"));
    }
  }
}

}  // namespace

std::vector<std::string> SchemaMismatches(const json& schema,
                                          const json& value) {
  std::vector<std::string> out;
  Mismatches(schema, value, Pointer(), &out);
  return out;
}

std::vector<LintFinding> LintTools(const std::vector<ServerTools>& servers) {
  std::vector<LintFinding> findings;
  std::map<std::string, std::set<std::string>> offered_by;  // tool -> servers
  for (const ServerTools& server : servers) {
    for (const json& tool : server.tools) {
      ToolLinter linter(server.server, tool, &findings);
      linter.Lint(tool);
      linter.CheckResults(tool, server.results);
      if (tool.is_object() && tool.contains("name") &&
          tool["name"].is_string()) {
        offered_by[tool["name"].get<std::string>()].insert(server.server);
      }
    }
  }
  for (const auto& [tool, names] : offered_by) {
    if (names.size() < 2) continue;
    LintFinding finding;
    finding.severity = LintSeverity::kWarning;
    finding.code = "name-duplicate";
    finding.tool = tool;
    finding.message =
        absl::StrCat("offered by ", absl::StrJoin(names, ", "),
                     ": a client connected to both sees two tools of this "
                     "name");
    findings.push_back(std::move(finding));
  }
  return findings;
}

std::string LintSeverityName(LintSeverity severity) {
  return severity == LintSeverity::kError ? "error" : "warning";
}

}  // namespace inspector::cli
