// Checking that a text is one JSON value (json_valid.h): a single loop over
// the bytes with an explicit stack of open containers, one bit per level.
#include "common/json_valid.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace inspector::json_scan {
namespace {

using Byte = unsigned char;

// Bytes a string may hold as they are: printable ASCII but '"' and '\\'.
constexpr std::array<bool, 256> kPlainStringByte = [] {
  std::array<bool, 256> table{};
  for (int c = 0x20; c < 0x80; ++c) table[c] = c != '"' && c != '\\';
  return table;
}();

// The value of a hex digit, or -1.
constexpr std::array<int8_t, 256> kHexValue = [] {
  std::array<int8_t, 256> table{};
  for (int c = 0; c < 256; ++c) table[c] = -1;
  for (int c = 0; c < 10; ++c) table['0' + c] = static_cast<int8_t>(c);
  for (int c = 0; c < 6; ++c) {
    table['a' + c] = table['A' + c] = static_cast<int8_t>(10 + c);
  }
  return table;
}();

// The decimal digits of 2^1024 - 2^970, halfway between the largest double
// and 2^1024: a number of at least this magnitude rounds to infinity (the
// tie goes to the even 2^1024), which nlohmann rejects. 309 digits, the
// last one not zero.
constexpr char kOverflowDigits[] =
    "1797693134862315807937289714053034150799341327100378269361737789804449"
    "6829276475094664901797758720709633028641669288791094655554785194040263"
    "0657488671505820681908902000708383676273854845817711531764475730270069"
    "8555713669596228429148198608349364752927190741684443655107043427115596"
    "99508093042880177904174497792";
constexpr int64_t kOverflowExponent = 309;  // 0.1797... * 10^309.
static_assert(sizeof(kOverflowDigits) - 1 == kOverflowExponent);

bool IsSpace(Byte c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

const Byte* SkipSpace(const Byte* p, const Byte* end) {
  while (p != end && IsSpace(*p)) ++p;
  return p;
}

// True if any of the 8 bytes in `x` is not a kPlainStringByte. Exact: a
// borrow can only start at a byte that is itself not plain.
bool HasSpecialByte(uint64_t x) {
  constexpr uint64_t kOnes = 0x0101010101010101;
  constexpr uint64_t kHigh = 0x8080808080808080;
  const uint64_t control = x - kOnes * 0x20;
  const uint64_t quote = (x ^ (kOnes * '"')) - kOnes;
  const uint64_t backslash = (x ^ (kOnes * '\\')) - kOnes;
  return ((control | quote | backslash | x) & kHigh) != 0;
}

// Four hex digits at p (which has at least 4 bytes), or -1.
int32_t ReadHex4(const Byte* p) {
  const int32_t a = kHexValue[p[0]], b = kHexValue[p[1]];
  const int32_t c = kHexValue[p[2]], d = kHexValue[p[3]];
  if ((a | b | c | d) < 0) return -1;
  return (a << 12) | (b << 8) | (c << 4) | d;
}

// The byte just past the well-formed UTF-8 sequence at p (whose first byte
// is >= 0x80), or nullptr.
const Byte* SkipUtf8(const Byte* p, const Byte* end) {
  const Byte c = *p;
  const ptrdiff_t left = end - p;
  auto in = [](Byte b, Byte lo, Byte hi) { return b >= lo && b <= hi; };
  if (c >= 0xC2 && c <= 0xDF) {
    if (left < 2 || !in(p[1], 0x80, 0xBF)) return nullptr;
    return p + 2;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3) return nullptr;
    const Byte lo = c == 0xE0 ? 0xA0 : 0x80;
    const Byte hi = c == 0xED ? 0x9F : 0xBF;
    if (!in(p[1], lo, hi) || !in(p[2], 0x80, 0xBF)) return nullptr;
    return p + 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4) return nullptr;
    const Byte lo = c == 0xF0 ? 0x90 : 0x80;
    const Byte hi = c == 0xF4 ? 0x8F : 0xBF;
    if (!in(p[1], lo, hi) || !in(p[2], 0x80, 0xBF) || !in(p[3], 0x80, 0xBF)) {
      return nullptr;
    }
    return p + 4;
  }
  return nullptr;
}

// The byte just past the string whose opening quote is at p[-1], or
// nullptr when it is not a valid string.
const Byte* SkipString(const Byte* p, const Byte* end) {
  for (;;) {
    // Runs of plain bytes: 8 at a time, then one at a time.
    while (end - p >= 8) {
      uint64_t chunk;
      std::memcpy(&chunk, p, sizeof(chunk));
      if (HasSpecialByte(chunk)) break;
      p += 8;
    }
    while (p != end && kPlainStringByte[*p]) ++p;
    if (p == end) return nullptr;
    const Byte c = *p;
    if (c == '"') return p + 1;
    if (c < 0x20) return nullptr;
    if (c >= 0x80) {
      p = SkipUtf8(p, end);
      if (p == nullptr) return nullptr;
      continue;
    }
    // A backslash.
    if (end - p < 2) return nullptr;
    switch (p[1]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        p += 2;
        continue;
      case 'u':
        break;
      default:
        return nullptr;
    }
    if (end - p < 6) return nullptr;
    const int32_t unit = ReadHex4(p + 2);
    if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return nullptr;
    p += 6;
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      // A high surrogate: a low one must follow.
      if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return nullptr;
      const int32_t low = ReadHex4(p + 2);
      if (low < 0xDC00 || low > 0xDFFF) return nullptr;
      p += 6;
    }
  }
}

bool IsDigit(Byte c) { return c >= '0' && c <= '9'; }

// True if the number with the given parts (digits only, each part possibly
// empty but the integer part) rounds to infinity as a double.
bool NumberOverflows(const Byte* int_begin, const Byte* int_end,
                     const Byte* frac_begin, const Byte* frac_end,
                     bool exp_negative, const Byte* exp_begin,
                     const Byte* exp_end) {
  // The significant digits, with the decimal point skipped: a walk over
  // the integer part then the fraction.
  const Byte* p = int_begin;
  bool in_fraction = false;
  auto next = [&]() -> const Byte* {
    if (!in_fraction && p == int_end) {
      in_fraction = true;
      p = frac_begin;
    }
    return in_fraction && p == frac_end ? nullptr : p;
  };
  // The value is 0.d1d2d3... * 10^exponent with d1 != 0.
  int64_t exponent = int_end - int_begin;
  for (const Byte* q = next(); q != nullptr && *q == '0'; q = next()) {
    --exponent;
    ++p;
  }
  if (next() == nullptr) return false;  // Zero.
  // The written exponent, saturated far beyond any text length.
  constexpr int64_t kSaturated = int64_t{1} << 50;
  int64_t written = 0;
  for (const Byte* q = exp_begin; q != exp_end && written < kSaturated; ++q) {
    written = written * 10 + (*q - '0');
  }
  exponent += exp_negative ? -written : written;
  if (exponent != kOverflowExponent) return exponent > kOverflowExponent;
  for (const char* t = kOverflowDigits; *t != '\0'; ++t) {
    const Byte* q = next();
    // Fewer digits than the bound, whose last digit is not zero: smaller.
    if (q == nullptr) return false;
    if (*q != static_cast<Byte>(*t)) return *q > static_cast<Byte>(*t);
    ++p;
  }
  return true;  // Equal to the bound or larger.
}

// The byte just past the number that starts at p ('-' or a digit), or
// nullptr when it is not a valid (finite) number.
const Byte* SkipNumber(const Byte* p, const Byte* end) {
  if (*p == '-') ++p;
  const Byte* const int_begin = p;
  if (p == end || !IsDigit(*p)) return nullptr;
  if (*p == '0') {
    ++p;
  } else {
    while (p != end && IsDigit(*p)) ++p;
  }
  const Byte* const int_end = p;
  const Byte* frac_begin = p;
  const Byte* frac_end = p;
  if (p != end && *p == '.') {
    frac_begin = ++p;
    while (p != end && IsDigit(*p)) ++p;
    if (p == frac_begin) return nullptr;
    frac_end = p;
  }
  if (p != end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool exp_negative = false;
    if (p != end && (*p == '+' || *p == '-')) exp_negative = *p++ == '-';
    const Byte* const exp_begin = p;
    while (p != end && IsDigit(*p)) ++p;
    if (p == exp_begin) return nullptr;
    if (NumberOverflows(int_begin, int_end, frac_begin, frac_end, exp_negative,
                        exp_begin, p)) {
      return nullptr;
    }
  } else if (int_end - int_begin >= kOverflowExponent &&
             NumberOverflows(int_begin, int_end, frac_begin, frac_end, false, p,
                             p)) {
    return nullptr;
  }
  return p;
}

// The byte just past `literal` if the text at p starts with it, or nullptr.
template <size_t N>
const Byte* SkipLiteral(const Byte* p, const Byte* end,
                        const char (&literal)[N]) {
  constexpr size_t kSize = N - 1;
  if (static_cast<size_t>(end - p) < kSize ||
      std::memcmp(p, literal, kSize) != 0) {
    return nullptr;
  }
  return p + kSize;
}

// The open containers, innermost last: one bit per level (1 = object),
// the first 64 levels in place.
class OpenContainers {
 public:
  bool empty() const { return depth_ == 0; }

  // Whether the innermost container is an object. Not empty().
  bool InObject() const {
    const size_t level = depth_ - 1;
    const uint64_t word = level < 64 ? first_ : deeper_[level / 64 - 1];
    return (word >> (level % 64)) & 1;
  }

  void Push(bool object) {
    const size_t level = depth_++;
    const uint64_t bit = uint64_t{object} << (level % 64);
    if (level < 64) {
      first_ = (first_ & ~(uint64_t{1} << level)) | bit;
      return;
    }
    const size_t index = level / 64 - 1;
    if (index == deeper_.size()) deeper_.push_back(0);
    uint64_t& word = deeper_[index];
    word = (word & ~(uint64_t{1} << (level % 64))) | bit;
  }

  void Pop() { --depth_; }

 private:
  size_t depth_ = 0;
  uint64_t first_ = 0;
  std::vector<uint64_t> deeper_;
};

// The byte just past a member's key and the colon after it, p at the
// key's opening quote; nullptr when they are not there.
const Byte* SkipKeyAndColon(const Byte* p, const Byte* end) {
  if (p == end || *p != '"') return nullptr;
  p = SkipString(p + 1, end);
  if (p == nullptr) return nullptr;
  p = SkipSpace(p, end);
  if (p == end || *p != ':') return nullptr;
  return p + 1;
}

}  // namespace

bool IsValidJson(std::string_view text) {
  const Byte* p = reinterpret_cast<const Byte*>(text.data());
  const Byte* const end = p + text.size();
  // A byte order mark, only as the very first bytes.
  if (p != end && *p == 0xEF) {
    if (end - p < 3 || p[1] != 0xBB || p[2] != 0xBF) return false;
    p += 3;
  }
  OpenContainers open;
  for (;;) {
    // A value is expected at p.
    p = SkipSpace(p, end);
    if (p == end) return false;
    switch (*p) {
      case '{':
        p = SkipSpace(p + 1, end);
        if (p != end && *p == '}') {
          ++p;
          break;
        }
        open.Push(true);
        p = SkipKeyAndColon(p, end);  // the first member's
        if (p == nullptr) return false;
        continue;
      case '[':
        p = SkipSpace(p + 1, end);
        if (p != end && *p == ']') {
          ++p;
          break;
        }
        open.Push(false);
        continue;
      case '"':
        p = SkipString(p + 1, end);
        break;
      case '-':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        p = SkipNumber(p, end);
        break;
      case 't':
        p = SkipLiteral(p, end, "true");
        break;
      case 'f':
        p = SkipLiteral(p, end, "false");
        break;
      case 'n':
        p = SkipLiteral(p, end, "null");
        break;
      default:
        return false;
    }
    if (p == nullptr) return false;
    // A value ended just before p: close containers until a comma.
    for (;;) {
      p = SkipSpace(p, end);
      // nlohmann's lexer takes a NUL byte for the end of the input.
      if (open.empty()) return p == end || *p == '\0';
      if (p == end) return false;
      const bool in_object = open.InObject();
      if (*p == (in_object ? '}' : ']')) {
        ++p;
        open.Pop();
        continue;
      }
      if (*p != ',') return false;
      p = SkipSpace(p + 1, end);
      if (in_object) {
        p = SkipKeyAndColon(p, end);  // the next member's
        if (p == nullptr) return false;
      }
      break;
    }
  }
}

}  // namespace inspector::json_scan
