#include "common/jsonc.h"

#include <algorithm>
#include <exception>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inspector {
namespace {

using Json = nlohmann::ordered_json;

struct Position {
  size_t line = 1;
  size_t column = 1;
};

// Line and column (1-based, in bytes) of `offset` in `text`.
Position PositionOf(std::string_view text, size_t offset) {
  Position pos;
  offset = std::min(offset, text.size());
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

absl::Status SyntaxError(std::string_view text, size_t offset,
                         std::string_view what) {
  Position pos = PositionOf(text, offset);
  return Error(v1::INVALID_REQUEST,
               absl::StrCat("not valid JSON at line ", pos.line, ", column ",
                            pos.column, ": ", AbslView(what)),
               {{"line", absl::StrCat(pos.line)},
                {"column", absl::StrCat(pos.column)},
                {"offset", absl::StrCat(offset)}});
}

// Index of the next character of `s` at or after `i` that is neither
// whitespace nor inside a comment; s.size() if there is none.
size_t SkipBlank(std::string_view s, size_t i) {
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      size_t end = s.find('\n', i);
      i = end == std::string_view::npos ? s.size() : end + 1;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
    } else {
      break;
    }
  }
  return i;
}

// Copies `content` with trailing commas (JSONC) blanked out, so that offsets
// stay the same, and checks the nesting depth.
absl::StatusOr<std::string> PrepareJsonc(std::string_view content,
                                         int max_depth) {
  std::string out(content);
  int depth = 0;
  char last = 0;  // the last significant character
  for (size_t i = 0; i < content.size(); ++i) {
    char c = content[i];
    if (c == '"') {
      for (++i; i < content.size() && content[i] != '"'; ++i) {
        if (content[i] == '\\') ++i;
      }
      last = '"';
      continue;  // the parser reports unterminated strings
    }
    if (c == '/' && i + 1 < content.size() &&
        (content[i + 1] == '/' || content[i + 1] == '*')) {
      i = SkipBlank(content, i) - 1;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    char previous = last;
    last = c;
    if (c == '{' || c == '[') {
      if (++depth > max_depth) {
        return SyntaxError(
            content, i,
            absl::StrCat("nested deeper than ", max_depth, " levels"));
      }
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == ',' && previous != ',' && previous != '{' &&
               previous != '[' && previous != 0) {
      // A comma right before a closing bracket: JSONC's trailing comma.
      size_t next = SkipBlank(content, i + 1);
      if (next < content.size() &&
          (content[next] == '}' || content[next] == ']')) {
        out[i] = ' ';
      }
    }
  }
  return out;
}

struct DuplicateKeyError {
  std::string container;  // JSON path of the object, "" for the top level
  std::string key;
};

struct Frame {
  bool object = false;
  std::unordered_set<std::string> keys;
  std::string key;  // object: the current key
  long index = -1;  // array: the current element
};

std::string ContainerPath(const std::vector<Frame>& frames) {
  std::string path;
  for (size_t i = 0; i + 1 < frames.size(); ++i) {
    if (frames[i].object) {
      if (!path.empty()) path += '.';
      path += frames[i].key;
    } else {
      absl::StrAppend(&path, "[", frames[i].index, "]");
    }
  }
  return path;
}

}  // namespace

absl::Status DuplicateJsoncKeyError(std::string_view container,
                                    std::string_view key) {
  std::string where =
      container.empty() ? "the top level" : std::string(container);
  return Error(
      v1::INVALID_REQUEST,
      absl::StrCat("duplicate key \"", AbslView(key), "\" in ", where,
                   "; each key may appear once"),
      {{"field", container.empty()
                     ? std::string(key)
                     : absl::StrCat(AbslView(container), ".", AbslView(key))}});
}

bool IsBlankJsonc(std::string_view content) {
  return SkipBlank(content, 0) == content.size();
}

absl::StatusOr<Json> ParseJsonc(std::string_view content,
                                const JsoncOptions& options) {
  ASSIGN_OR_RETURN(std::string text, PrepareJsonc(content, options.max_depth));
  std::vector<Frame> frames;
  Json::parser_callback_t callback = [&frames](int, Json::parse_event_t event,
                                               Json& parsed) {
    auto element = [&frames] {
      if (!frames.empty() && !frames.back().object) ++frames.back().index;
    };
    switch (event) {
      case Json::parse_event_t::object_start:
        element();
        frames.emplace_back();
        frames.back().object = true;
        break;
      case Json::parse_event_t::array_start:
        element();
        frames.emplace_back();
        break;
      case Json::parse_event_t::key: {
        const std::string& key = parsed.get_ref<const std::string&>();
        if (!frames.back().keys.insert(key).second) {
          throw DuplicateKeyError{ContainerPath(frames), key};
        }
        frames.back().key = key;
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        frames.pop_back();
        break;
      case Json::parse_event_t::value:
        element();
        break;
    }
    return true;
  };
  try {
    return Json::parse(text, callback, /*allow_exceptions=*/true,
                       /*ignore_comments=*/true);
  } catch (const Json::parse_error& e) {
    std::string_view what = e.what();
    size_t colon = what.find(": ");
    std::string_view reason =
        colon == std::string_view::npos ? what : what.substr(colon + 2);
    size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    if (absl::StrContains(AbslView(reason), "end of input") ||
        offset >= content.size()) {
      Position pos = PositionOf(content, content.size());
      return Error(
          v1::INVALID_REQUEST,
          absl::StrCat(options.subject, " ends too early (truncated?) at line ",
                       pos.line, ", column ", pos.column, ": ",
                       AbslView(reason)),
          {{"line", absl::StrCat(pos.line)},
           {"column", absl::StrCat(pos.column)},
           {"offset", absl::StrCat(content.size())}});
    }
    return SyntaxError(content, offset, reason);
  } catch (const DuplicateKeyError& e) {
    if (options.duplicate_key_error) {
      return options.duplicate_key_error(e.container, e.key);
    }
    return DuplicateJsoncKeyError(e.container, e.key);
  } catch (const std::exception& e) {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("not valid JSON: ", e.what()));
  }
}

}  // namespace inspector
