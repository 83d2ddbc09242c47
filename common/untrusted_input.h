// Quoting untrusted input (a name, an id, a message body) in errors.
//
// An error that echoes what a caller sent must stay small however much was
// sent, and must stay valid UTF-8 when the input was: it shows a short
// prefix, cut on a character boundary. Pure functions, thread-safe.
#ifndef INSPECTOR_COMMON_UNTRUSTED_INPUT_H_
#define INSPECTOR_COMMON_UNTRUSTED_INPUT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace inspector {

// How much of untrusted input an error quotes by default.
inline constexpr size_t kQuotedInputBytes = 100;

// At most `max_bytes` bytes of `input`, cut before a UTF-8 character that
// would not fit whole, with "..." appended when anything was cut. Bytes
// that are not UTF-8 are kept as they are (renderers replace them).
inline std::string InputPrefix(std::string_view input,
                               size_t max_bytes = kQuotedInputBytes) {
  if (input.size() <= max_bytes) return std::string(input);
  // input[end] is the first byte left out. When it continues a character
  // (10xxxxxx), back up to that character's lead byte and leave it out too.
  size_t end = max_bytes;
  size_t lead = end;
  while (lead > 0 && end - lead < 3 &&
         (static_cast<unsigned char>(input[lead]) & 0xC0) == 0x80) {
    --lead;
  }
  if (lead < end && static_cast<unsigned char>(input[lead]) >= 0xC0) {
    end = lead;
  }
  std::string out(input.substr(0, end));
  out.append("...");
  return out;
}

// InputPrefix between single quotes: 'my-server', 'aaaaaaaa...'.
inline std::string QuoteInput(std::string_view input,
                              size_t max_bytes = kQuotedInputBytes) {
  std::string out = "'";
  out.append(InputPrefix(input, max_bytes));
  out.push_back('\'');
  return out;
}

}  // namespace inspector

#endif  // INSPECTOR_COMMON_UNTRUSTED_INPUT_H_
