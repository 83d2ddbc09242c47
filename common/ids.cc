#include "common/ids.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <random>

#include "absl/strings/ascii.h"

namespace inspector {
namespace {

void RandomBytes(unsigned char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(out + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      // No kernel randomness: fall back to the library's generator.
      std::random_device rd;
      for (; got < n; ++got) out[got] = static_cast<unsigned char>(rd());
      return;
    }
    got += static_cast<size_t>(r);
  }
}

}  // namespace

std::string NewUuid() {
  unsigned char b[16];
  RandomBytes(b, sizeof(b));
  b[6] = (b[6] & 0x0f) | 0x40;  // version 4
  b[8] = (b[8] & 0x3f) | 0x80;  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[b[i] >> 4]);
    out.push_back(kHex[b[i] & 0xf]);
  }
  return out;
}

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!absl::ascii_isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace inspector
