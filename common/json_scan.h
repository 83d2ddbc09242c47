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

// Calls `visit(const Member&)` for each member of the object `s`, in
// order (duplicates kept), with no allocation; `visit` returns false to
// stop. None when `s` is not an object; stops at the first member it
// cannot read.
template <typename Visit>
void ForEachMember(std::string_view s, Visit&& visit) {
  size_t i = SkipSpace(s, 0);
  if (i >= s.size() || s[i] != '{') return;
  i = SkipSpace(s, i + 1);
  while (i < s.size() && s[i] == '"') {
    const size_t key_end = SkipString(s, i);
    if (key_end == std::string_view::npos) return;
    Member member;
    member.key = s.substr(i + 1, key_end - i - 2);
    i = SkipSpace(s, key_end);
    if (i >= s.size() || s[i] != ':') return;
    i = SkipSpace(s, i + 1);
    member.begin = i;
    member.end = SkipValue(s, i);
    if (member.end == std::string_view::npos) return;
    if (!visit(static_cast<const Member&>(member))) return;
    i = SkipSpace(s, member.end);
    if (i < s.size() && s[i] == ',') i = SkipSpace(s, i + 1);
  }
}

// The members of the object `s`, in order (duplicates kept). Empty when
// `s` is not an object; stops at the first member it cannot read.
std::vector<Member> ScanObject(std::string_view s);

}  // namespace inspector::json_scan

#endif  // INSPECTOR_COMMON_JSON_SCAN_H_
