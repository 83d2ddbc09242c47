// Fuzz target for the google.api.http path template parser and matcher
// (gateway/path_template.h).
//
// Input: a template, a newline, then request paths one per line.
// Properties: Parse and Match never crash; a template that parses has a
// canonical form that parses again to the same canonical form and the same
// variables; a match binds exactly the template's variables, in order; a
// template matches the same paths as its canonical form once variable names
// are set aside.
//
// Built by tests/fuzz/CMakeLists.txt: with clang, a libFuzzer binary
// (path_template_fuzzer -max_total_time=60 CORPUS_DIR); with any compiler,
// a replay test over tests/fuzz/corpus/path_template.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gateway/path_template.h"

using inspector::gateway::PathBindings;
using inspector::gateway::PathTemplate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t newline = input.find('\n');
  std::string_view text = input.substr(0, newline);
  std::string_view rest = newline == std::string_view::npos
                              ? std::string_view()
                              : input.substr(newline + 1);

  auto parsed = PathTemplate::Parse(text);
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) std::abort();
    // Still exercise the matcher of an unparsed (empty) template.
    if (PathTemplate().Match(rest)) std::abort();
    return 0;
  }
  const PathTemplate& path_template = *parsed;
  std::string canonical = path_template.Canonical();
  auto reparsed = PathTemplate::Parse(canonical);
  if (!reparsed.ok() || reparsed->Canonical() != canonical ||
      reparsed->verb() != path_template.verb() ||
      path_template.CompareSpecificity(*reparsed) != 0) {
    std::abort();
  }

  while (true) {
    size_t end = rest.find('\n');
    std::string_view path = rest.substr(0, end);
    std::optional<PathBindings> bindings = path_template.Match(path);
    if (bindings) {
      const auto& variables = path_template.variables();
      if (bindings->size() != variables.size()) std::abort();
      for (size_t i = 0; i < variables.size(); ++i) {
        if ((*bindings)[i].first != variables[i].field_path) std::abort();
      }
    }
    // The canonical template has no variables but the same shape.
    if (bindings.has_value() != reparsed->Match(path).has_value()) std::abort();
    if (end == std::string_view::npos) break;
    rest = rest.substr(end + 1);
  }
  return 0;
}
