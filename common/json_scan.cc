// Scanning a JSON object's members in its text (json_scan.h).
#include "common/json_scan.h"

namespace inspector::json_scan {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}

size_t SkipString(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

size_t SkipValue(std::string_view s, size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  const char c = s[i];
  if (c == '"') return SkipString(s, i);
  if (c == '{' || c == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char d = s[i];
      if (d == '"') {
        i = SkipString(s, i);
        if (i == std::string_view::npos) return i;
        continue;
      }
      if (d == '{' || d == '[') {
        ++depth;
      } else if ((d == '}' || d == ']') && --depth == 0) {
        return i + 1;
      }
      ++i;
    }
    return std::string_view::npos;
  }
  // A number, true, false or null: up to the next delimiter.
  const size_t start = i;
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' &&
         !IsSpace(s[i])) {
    ++i;
  }
  return i == start ? std::string_view::npos : i;
}

std::vector<Member> ScanObject(std::string_view s) {
  std::vector<Member> members;
  size_t i = SkipSpace(s, 0);
  if (i >= s.size() || s[i] != '{') return members;
  i = SkipSpace(s, i + 1);
  while (i < s.size() && s[i] == '"') {
    const size_t key_end = SkipString(s, i);
    if (key_end == std::string_view::npos) break;
    Member member;
    member.key = s.substr(i + 1, key_end - i - 2);
    i = SkipSpace(s, key_end);
    if (i >= s.size() || s[i] != ':') break;
    i = SkipSpace(s, i + 1);
    member.begin = i;
    member.end = SkipValue(s, i);
    if (member.end == std::string_view::npos) break;
    members.push_back(member);
    i = SkipSpace(s, member.end);
    if (i < s.size() && s[i] == ',') i = SkipSpace(s, i + 1);
  }
  return members;
}

}  // namespace inspector::json_scan
