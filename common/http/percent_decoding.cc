#include "common/http/percent_decoding.h"

namespace inspector::http {

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool AppendPercentDecoded(std::string_view raw, std::string* out) {
  out->reserve(out->size() + raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c != '%') {
      out->push_back(c);
      continue;
    }
    if (i + 2 >= raw.size()) return false;
    int hi = HexDigitValue(raw[i + 1]);
    int lo = HexDigitValue(raw[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  return AppendPercentDecoded(in, out);
}

}  // namespace inspector::http
