// UTF-8 well-formedness (RFC 3629): the one decoder used wherever we check
// or repair text that leaves the process (JSON answers, history rows,
// configuration names). Pure functions, thread-safe.
#ifndef INSPECTOR_COMMON_UTF8_H_
#define INSPECTOR_COMMON_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace inspector {

// Length (1 to 4) of the well-formed UTF-8 sequence starting at text[i], or
// 0 if the bytes there are not one: a stray continuation byte, an overlong
// form, a surrogate, a value past U+10FFFF, or a sequence cut short.
// `i` must be < text.size(). When `code_point` is given and the answer is
// not 0, it receives the decoded value.
size_t Utf8SequenceLength(std::string_view text, size_t i,
                          uint32_t* code_point = nullptr);

// True if all of `text` is well-formed UTF-8.
bool IsValidUtf8(std::string_view text);

// `text` with every byte that is not part of well-formed UTF-8 replaced by
// U+FFFD. Returns `text` itself when it is already well-formed.
std::string ValidUtf8(std::string text);

}  // namespace inspector

#endif  // INSPECTOR_COMMON_UTF8_H_
