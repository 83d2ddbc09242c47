#include "clients/cli/text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace inspector::cli {
namespace {

bool IsShellSafe(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
      (c >= '0' && c <= '9')) {
    return true;
  }
  switch (c) {
    case '_':
    case '@':
    case '%':
    case '+':
    case '=':
    case ':':
    case ',':
    case '.':
    case '/':
    case '-':
      return true;
    default:
      return false;
  }
}

bool IsContinuationByte(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the UTF-8 sequence starting at text[i] (1 for invalid bytes).
size_t SequenceLength(std::string_view text, size_t i) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  size_t len = 1;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
  }
  if (i + len > text.size()) return 1;
  for (size_t k = 1; k < len; ++k) {
    if (!IsContinuationByte(static_cast<unsigned char>(text[i + k]))) return 1;
  }
  return len;
}

}  // namespace

std::string FormatDuration(uint64_t seconds) {
  if (seconds == 0) return "0s";
  const uint64_t days = seconds / 86400;
  const uint64_t hours = seconds % 86400 / 3600;
  const uint64_t minutes = seconds % 3600 / 60;
  const uint64_t secs = seconds % 60;
  std::vector<std::string> parts;
  if (days > 0) parts.push_back(absl::StrCat(days, "d"));
  if (hours > 0) parts.push_back(absl::StrCat(hours, "h"));
  if (minutes > 0) parts.push_back(absl::StrCat(minutes, "m"));
  if (secs > 0) parts.push_back(absl::StrCat(secs, "s"));
  return absl::StrJoin(parts, " ");
}

std::string ShellQuote(std::string_view arg) {
  if (arg.empty()) return "''";
  bool safe = true;
  for (char c : arg) {
    if (!IsShellSafe(c)) {
      safe = false;
      break;
    }
  }
  if (safe) return std::string(arg);
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string joined;
  for (const auto& arg : argv) {
    if (!joined.empty()) joined += ' ';
    joined += ShellQuote(arg);
  }
  return joined;
}

std::string SanitizeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      out += absl::StrFormat("\\x%02x", c);
    } else if (c == 0xC2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      // C1 control characters (U+0080..U+009F), e.g. CSI.
      out +=
          absl::StrFormat("\\u%04x", static_cast<unsigned char>(text[i + 1]));
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string SanitizeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const bool end = i == text.size();
    if (!end && text[i] != '\n' && text[i] != '\t') continue;
    std::string_view piece = text.substr(start, i - start);
    if (!end && text[i] == '\n' && !piece.empty() && piece.back() == '\r') {
      piece.remove_suffix(1);
    }
    out += SanitizeForTerminal(piece);
    if (!end) out += text[i];
    start = i + 1;
  }
  return out;
}

std::string OneLine(std::string_view text) {
  std::string out;
  bool blank = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
        c == '\f') {
      blank = true;
      continue;
    }
    if (blank && !out.empty()) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size(); i += SequenceLength(text, i)) ++width;
  return width;
}

std::string TruncateToWidth(std::string_view text, size_t width) {
  if (DisplayWidth(text) <= width) return std::string(text);
  if (width == 0) return "";
  std::string out;
  size_t columns = 0;
  for (size_t i = 0; i < text.size() && columns + 1 < width;) {
    size_t len = SequenceLength(text, i);
    out.append(text.substr(i, len));
    i += len;
    ++columns;
  }
  out += "…";
  return out;
}

std::string ShortId(std::string_view id) {
  return std::string(id.substr(0, 8));
}

}  // namespace inspector::cli
