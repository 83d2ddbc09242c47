// Finding the top-level members of a JSON object in its text, without
// building a document: for code on a message's path that needs a few
// values (an id, a method) and passes the text on as it came. The text is
// expected to be valid JSON, checked elsewhere; on text that is not, the
// functions stop early and never read past its end. Pure functions,
// thread-safe.
#ifndef INSPECTOR_COMMON_JSON_SCAN_H_
#define INSPECTOR_COMMON_JSON_SCAN_H_

#include <cstddef>
#include <string_view>
#include <vector>

namespace inspector::json_scan {

// One member of an object: its key as written between the quotes (escapes
// kept) and its value's span [begin, end) in the scanned text.
struct Member {
  std::string_view key;
  size_t begin = 0;
  size_t end = 0;
};

// JSON's insignificant whitespace.
bool IsSpace(char c);

// The first index at or after `i` that is not whitespace (or s.size()).
size_t SkipSpace(std::string_view s, size_t i);

// Index just past the string literal that starts at s[i] == '"', or npos
// when it is not closed.
size_t SkipString(std::string_view s, size_t i);

// Index just past the value that starts at s[i], or npos when it does not
// end within `s` (or there is no value at `i`).
size_t SkipValue(std::string_view s, size_t i);

// Reads the object whose '{' is at s[open] in one pass, for code that
// looks inside some of its members' values: `read(std::string_view key,
// size_t begin)` is called for each member in order (duplicates kept; the
// key as written, escapes kept) with its value's first index, which is
// always inside `s`, and returns the index just past that value:
// SkipValue(s, begin), or where its own reading of the value ended; npos
// stops. Returns the index of the object's '}', or npos when it was not
// read to its end (not an object, a member it cannot read, or stopped).
// No allocation.
template <typename Read>
size_t ReadMembersAt(std::string_view s, size_t open, Read&& read) {
  constexpr size_t npos = std::string_view::npos;
  if (open >= s.size() || s[open] != '{') return npos;
  size_t i = SkipSpace(s, open + 1);
  while (i < s.size() && s[i] == '"') {
    const size_t key_end = SkipString(s, i);
    if (key_end == npos) return npos;
    const std::string_view key = s.substr(i + 1, key_end - i - 2);
    i = SkipSpace(s, key_end);
    if (i >= s.size() || s[i] != ':') return npos;
    i = SkipSpace(s, i + 1);
    if (i >= s.size()) return npos;  // no value
    const size_t end = read(key, i);
    if (end == npos || end > s.size()) return npos;
    i = SkipSpace(s, end);
    if (i < s.size() && s[i] == ',') {
      i = SkipSpace(s, i + 1);
      if (i >= s.size() || s[i] != '"') return npos;  // a trailing comma
    }
  }
  return i < s.size() && s[i] == '}' ? i : npos;
}

// Calls `visit(const Member&)` for each member of the object `s`, in
// order (duplicates kept), with no allocation; `visit` returns false to
// stop. None when `s` is not an object; stops at the first member it
// cannot read.
template <typename Visit>
void ForEachMember(std::string_view s, Visit&& visit) {
  ReadMembersAt(s, SkipSpace(s, 0), [&](std::string_view key, size_t begin) {
    Member member;
    member.key = key;
    member.begin = begin;
    member.end = SkipValue(s, begin);
    if (member.end == std::string_view::npos) return member.end;
    if (!visit(static_cast<const Member&>(member))) {
      return std::string_view::npos;
    }
    return member.end;
  });
}

// The members of the object `s`, in order (duplicates kept). Empty when
// `s` is not an object; stops at the first member it cannot read.
std::vector<Member> ScanObject(std::string_view s);

}  // namespace inspector::json_scan

#endif  // INSPECTOR_COMMON_JSON_SCAN_H_
