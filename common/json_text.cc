#include "common/json_text.h"

#include "common/utf8.h"

namespace inspector {

void AppendJsonString(std::string* out, std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->reserve(out->size() + value.size() + 2);
  out->push_back('"');
  size_t run_start = 0;
  size_t i = 0;
  auto flush = [&] { out->append(value.data() + run_start, i - run_start); };
  while (i < value.size()) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      size_t length = Utf8SequenceLength(value, i);
      if (length > 0) {
        i += length;
        continue;
      }
      flush();
      out->append("\xEF\xBF\xBD");  // U+FFFD for a stray byte
      ++i;
      run_start = i;
      continue;
    }
    flush();
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
        break;
    }
    ++i;
    run_start = i;
  }
  flush();
  out->push_back('"');
}

std::string JsonString(std::string_view value) {
  std::string out;
  AppendJsonString(&out, value);
  return out;
}

}  // namespace inspector
