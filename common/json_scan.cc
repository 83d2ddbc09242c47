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
  ForEachMember(s, [&members](const Member& member) {
    members.push_back(member);
    return true;
  });
  return members;
}

}  // namespace inspector::json_scan
