#include "gateway/path_template.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/http/percent_decoding.h"

namespace inspector::gateway {
namespace {

// Characters a template literal may hold as they are (RFC 3986 pchar less
// the ones the template grammar uses: ':' '=' and, implicitly, '/').
bool IsLiteralChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
      (c >= '0' && c <= '9')) {
    return true;
  }
  switch (c) {
    case '-':
    case '.':
    case '_':
    case '~':
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '+':
    case ',':
    case ';':
    case '@':
      return true;
    default:
      return false;
  }
}

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }

// Whether `raw` decodes to exactly `decoded`; the common case (no escapes)
// needs no copy.
bool DecodedEquals(std::string_view raw, std::string_view decoded) {
  if (raw.find('%') == std::string_view::npos) return raw == decoded;
  std::string buffer;
  return http::AppendPercentDecoded(raw, &buffer) && buffer == decoded;
}

void AppendEncodedLiteral(std::string_view literal, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char c : literal) {
    if (IsLiteralChar(c)) {
      out->push_back(c);
    } else {
      unsigned char u = static_cast<unsigned char>(c);
      out->push_back('%');
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    }
  }
}

std::string DescribeChar(std::string_view text, size_t pos) {
  if (pos >= text.size()) return "end of template";
  unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c >= 0x20 && c < 0x7f)
    return absl::StrCat("character '", std::string(1, static_cast<char>(c)),
                        "'");
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "\\x%02X", c);
  return absl::StrCat("byte ", buffer);
}

}  // namespace

bool PercentDecode(std::string_view in, std::string* out) {
  return http::PercentDecode(in, out);
}

// Recursive-descent parser for the template grammar above. Positions in
// error messages are 0-based offsets into the template text.
class TemplateParser {
 public:
  explicit TemplateParser(std::string_view text) : text_(text) {}

  absl::Status Run(PathTemplate* out) {
    out_ = out;
    if (text_.empty() || text_[0] != '/') {
      return Fail(0, "a path template must start with '/'");
    }
    pos_ = 1;
    if (AtEnd()) {  // "/" alone: the root path.
      out_->valid_ = true;
      return absl::OkStatus();
    }
    if (absl::Status s = ParseSegments(false); !s.ok()) return s;
    if (!AtEnd() && Peek() == ':') {
      ++pos_;
      size_t verb_pos = pos_;
      if (absl::Status s = ParseLiteral(&out_->verb_); !s.ok()) return s;
      if (out_->verb_.empty())
        return Fail(verb_pos, "the verb after ':' is empty");
    }
    if (!AtEnd()) {
      char c = Peek();
      if (c == '}') return Fail(pos_, "unbalanced '}'");
      if (!out_->verb_.empty())
        return Fail(pos_, "the verb must be the last part of the template");
      return Fail(pos_, "unexpected");
    }
    // `**` matches the rest of the path, so nothing may follow it.
    for (size_t i = 0; i < out_->segments_.size(); ++i) {
      if (out_->segments_[i].kind == PathTemplate::Kind::kMulti &&
          i + 1 != out_->segments_.size()) {
        return Fail(multi_pos_, "'**' must be the last segment");
      }
    }
    out_->ends_with_multi_ =
        !out_->segments_.empty() &&
        out_->segments_.back().kind == PathTemplate::Kind::kMulti;
    for (auto& variable : out_->variables_) {
      if (out_->ends_with_multi_ &&
          variable.end == static_cast<int>(out_->segments_.size())) {
        variable.end = -1;
      }
    }
    out_->valid_ = true;
    return absl::OkStatus();
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }

  absl::Status Fail(size_t pos, std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid path template \"", std::string(text_),
                     "\": ", std::string(what), " at position ", pos, " (",
                     DescribeChar(text_, pos), ")"));
  }

  absl::Status ParseSegments(bool in_variable) {
    while (true) {
      if (absl::Status s = ParseSegment(in_variable); !s.ok()) return s;
      if (AtEnd() || Peek() != '/') return absl::OkStatus();
      ++pos_;
    }
  }

  absl::Status ParseSegment(bool in_variable) {
    if (AtEnd() || Peek() == '/') return Fail(pos_, "empty segment");
    char c = Peek();
    if (c == '*') {
      size_t start = pos_;
      ++pos_;
      PathTemplate::Kind kind = PathTemplate::Kind::kSingle;
      if (!AtEnd() && Peek() == '*') {
        ++pos_;
        kind = PathTemplate::Kind::kMulti;
        if (!saw_multi_) multi_pos_ = start;
        saw_multi_ = true;
      }
      if (!AtEnd() && Peek() == '*') return Fail(pos_, "too many '*'");
      out_->segments_.push_back({kind, {}});
      return absl::OkStatus();
    }
    if (c == '{') {
      if (in_variable) return Fail(pos_, "variables cannot be nested");
      return ParseVariable();
    }
    if (c == '}') {
      return Fail(pos_,
                  in_variable ? "empty variable pattern" : "unbalanced '}'");
    }
    if (c == ':') return Fail(pos_, "empty segment before the verb");
    if (!IsLiteralChar(c) && c != '%') return Fail(pos_, "unexpected");
    std::string literal;
    if (absl::Status s = ParseLiteral(&literal); !s.ok()) return s;
    out_->segments_.push_back(
        {PathTemplate::Kind::kLiteral, std::move(literal)});
    return absl::OkStatus();
  }

  // Reads literal characters (decoding %XX) up to the first other one.
  absl::Status ParseLiteral(std::string* out) {
    out->clear();
    while (!AtEnd()) {
      char c = Peek();
      if (c == '%') {
        if (pos_ + 2 >= text_.size() || http::HexDigitValue(text_[pos_ + 1]) < 0 ||
            http::HexDigitValue(text_[pos_ + 2]) < 0) {
          return Fail(pos_, "malformed percent escape");
        }
        out->push_back(static_cast<char>(http::HexDigitValue(text_[pos_ + 1]) * 16 +
                                         http::HexDigitValue(text_[pos_ + 2])));
        pos_ += 3;
        continue;
      }
      if (!IsLiteralChar(c)) break;
      out->push_back(c);
      ++pos_;
    }
    return absl::OkStatus();
  }

  absl::Status ParseVariable() {
    size_t open = pos_;
    ++pos_;  // '{'
    std::string field_path;
    while (true) {
      if (AtEnd() || !IsIdentStart(Peek())) {
        return Fail(pos_, "expected a field name");
      }
      while (!AtEnd() && IsIdentChar(Peek()))
        field_path.push_back(text_[pos_++]);
      if (!AtEnd() && Peek() == '.') {
        field_path.push_back('.');
        ++pos_;
        continue;
      }
      break;
    }
    for (const auto& variable : out_->variables_) {
      if (variable.field_path == field_path) {
        return Fail(open,
                    absl::StrCat("duplicate variable '", field_path, "'"));
      }
    }
    int start = static_cast<int>(out_->segments_.size());
    if (!AtEnd() && Peek() == '=') {
      ++pos_;
      if (absl::Status s = ParseSegments(true); !s.ok()) return s;
    } else {
      out_->segments_.push_back({PathTemplate::Kind::kSingle, {}});
    }
    if (AtEnd()) return Fail(open, "unbalanced '{'");
    if (Peek() == '{') return Fail(pos_, "variables cannot be nested");
    if (Peek() != '}') return Fail(pos_, "expected '}'");
    ++pos_;
    out_->variables_.push_back({std::move(field_path), start,
                                static_cast<int>(out_->segments_.size())});
    return absl::OkStatus();
  }

  std::string_view text_;
  size_t pos_ = 0;
  PathTemplate* out_ = nullptr;
  bool saw_multi_ = false;
  size_t multi_pos_ = 0;
};

std::optional<RequestPath> RequestPath::Split(std::string_view path) {
  if (path.empty() || path[0] != '/') return std::nullopt;
  RequestPath result;
  if (path.size() == 1) return result;
  size_t start = 1;
  while (true) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      result.segments_.push_back(path.substr(start));
      break;
    }
    result.segments_.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return result;
}

absl::StatusOr<PathTemplate> PathTemplate::Parse(std::string_view text) {
  PathTemplate result;
  TemplateParser parser(text);
  if (absl::Status s = parser.Run(&result); !s.ok()) return s;
  return result;
}

std::optional<PathBindings> PathTemplate::Match(std::string_view path) const {
  std::optional<RequestPath> split = RequestPath::Split(path);
  if (!split) return std::nullopt;
  return Match(*split);
}

std::optional<PathBindings> PathTemplate::Match(const RequestPath& path) const {
  PathBindings bindings;
  if (!MatchInto(path, &bindings)) return std::nullopt;
  return bindings;
}

bool PathTemplate::MatchInto(const RequestPath& path,
                             PathBindings* bindings) const {
  bindings->clear();
  if (!valid_) return false;
  const std::vector<std::string_view>& raw = path.segments();
  const size_t n = raw.size();
  std::string_view last = n > 0 ? raw[n - 1] : std::string_view();
  if (!verb_.empty()) {
    if (n == 0) return false;
    size_t colon = last.rfind(':');
    if (colon == std::string_view::npos) return false;
    if (!DecodedEquals(last.substr(colon + 1), verb_)) return false;
    last = last.substr(0, colon);
  }
  auto segment = [&](size_t i) { return i + 1 == n ? last : raw[i]; };

  const size_t fixed = segments_.size() - (ends_with_multi_ ? 1 : 0);
  if (ends_with_multi_ ? n < fixed : n != fixed) return false;
  std::string scratch;
  for (size_t i = 0; i < n; ++i) {
    std::string_view value = segment(i);
    if (i >= fixed) {
      // Covered by the trailing `**`: anything that decodes.
      if (value.find('%') != std::string_view::npos &&
          !PercentDecode(value, &scratch)) {
        return false;
      }
      continue;
    }
    const Segment& s = segments_[i];
    if (s.kind == Kind::kLiteral) {
      if (!DecodedEquals(value, s.literal)) return false;
    } else if (value.empty() || (value.find('%') != std::string_view::npos &&
                                 !PercentDecode(value, &scratch))) {
      // A path with a malformed escape matches nothing, bound or not.
      return false;
    }
  }
  bindings->reserve(variables_.size());
  for (const Variable& variable : variables_) {
    size_t end = variable.end < 0 ? n : static_cast<size_t>(variable.end);
    std::string value;
    for (size_t i = static_cast<size_t>(variable.start); i < end; ++i) {
      if (i > static_cast<size_t>(variable.start)) value.push_back('/');
      if (!http::AppendPercentDecoded(segment(i), &value)) {
        bindings->clear();
        return false;
      }
    }
    bindings->emplace_back(variable.field_path, std::move(value));
  }
  return true;
}

std::string PathTemplate::Canonical() const {
  std::string out;
  if (segments_.empty()) out = "/";
  for (const Segment& s : segments_) {
    out.push_back('/');
    switch (s.kind) {
      case Kind::kLiteral:
        AppendEncodedLiteral(s.literal, &out);
        break;
      case Kind::kSingle:
        out.push_back('*');
        break;
      case Kind::kMulti:
        out.append("**");
        break;
    }
  }
  if (!verb_.empty()) {
    out.push_back(':');
    AppendEncodedLiteral(verb_, &out);
  }
  return out;
}

int PathTemplate::CompareSpecificity(const PathTemplate& other) const {
  auto rank = [](Kind kind) {
    switch (kind) {
      case Kind::kLiteral:
        return 2;
      case Kind::kSingle:
        return 1;
      case Kind::kMulti:
        return 0;
    }
    return 0;
  };
  size_t common = std::min(segments_.size(), other.segments_.size());
  for (size_t i = 0; i < common; ++i) {
    int a = rank(segments_[i].kind);
    int b = rank(other.segments_[i].kind);
    if (a != b) return a < b ? -1 : 1;
  }
  // Equal so far and one template goes on: both can match one path only
  // when what follows is a `**` matching nothing, and then the template
  // that stops is the more specific one.
  if (segments_.size() != other.segments_.size()) {
    const PathTemplate& longer =
        segments_.size() > other.segments_.size() ? *this : other;
    bool longer_wins = longer.segments_[common].kind != Kind::kMulti;
    bool this_longer = &longer == this;
    return this_longer == longer_wins ? 1 : -1;
  }
  bool a_verb = !verb_.empty();
  bool b_verb = !other.verb_.empty();
  if (a_verb != b_verb) return a_verb ? 1 : -1;
  return 0;
}

const std::string* PathTemplate::first_literal() const {
  if (segments_.empty() || segments_[0].kind != Kind::kLiteral) return nullptr;
  return &segments_[0].literal;
}

}  // namespace inspector::gateway
