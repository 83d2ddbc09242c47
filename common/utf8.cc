#include "common/utf8.h"

namespace inspector {

size_t Utf8SequenceLength(std::string_view text, size_t i,
                          uint32_t* code_point) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) {
    if (code_point != nullptr) *code_point = c;
    return 1;
  }
  size_t length;
  uint32_t value;
  uint32_t minimum;
  if ((c & 0xE0) == 0xC0) {
    length = 2;
    value = c & 0x1F;
    minimum = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    length = 3;
    value = c & 0x0F;
    minimum = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    length = 4;
    value = c & 0x07;
    minimum = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    unsigned char next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    value = (value << 6) | (next & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF.
  if (value < minimum || value > 0x10FFFF ||
      (value >= 0xD800 && value <= 0xDFFF)) {
    return 0;
  }
  if (code_point != nullptr) *code_point = value;
  return length;
}

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t length = Utf8SequenceLength(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string ValidUtf8(std::string text) {
  size_t i = 0;
  while (i < text.size()) {
    size_t length = Utf8SequenceLength(text, i);
    if (length == 0) break;
    i += length;
  }
  if (i == text.size()) return text;
  std::string fixed(text, 0, i);
  while (i < text.size()) {
    size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      fixed += "\xEF\xBF\xBD";
      ++i;
    } else {
      fixed.append(text, i, length);
      i += length;
    }
  }
  return fixed;
}

}  // namespace inspector
