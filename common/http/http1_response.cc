// The response half of the HTTP/1.1 codec (http1.h): reason phrases,
// response heads with their framing fields, chunked coding, Server-Sent
// Events framing and the Date field. The request parser is http1.cc.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/http/http1.h"
#include "common/strings.h"

namespace inspector::http {
namespace {

void AppendDecimal(std::string* out, uint64_t value) {
  char buffer[24];
  char* end = buffer + sizeof(buffer);
  char* p = end;
  do {
    *--p = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  out->append(p, end - p);
}

void AppendHex(std::string* out, uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  char buffer[20];
  char* end = buffer + sizeof(buffer);
  char* p = end;
  do {
    *--p = kDigits[value & 0xF];
    value >>= 4;
  } while (value != 0);
  out->append(p, end - p);
}

}  // namespace

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 101:
      return "Switching Protocols";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 203:
      return "Non-Authoritative Information";
    case 204:
      return "No Content";
    case 205:
      return "Reset Content";
    case 206:
      return "Partial Content";
    case 300:
      return "Multiple Choices";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 402:
      return "Payment Required";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 407:
      return "Proxy Authentication Required";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 416:
      return "Range Not Satisfiable";
    case 417:
      return "Expectation Failed";
    case 421:
      return "Misdirected Request";
    case 422:
      return "Unprocessable Content";
    case 425:
      return "Too Early";
    case 426:
      return "Upgrade Required";
    case 428:
      return "Precondition Required";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 451:
      return "Unavailable For Legal Reasons";
    case 499:
      return "Client Closed Request";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "";
  }
}

bool StatusHasNoBody(int status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

void AppendResponseHead(std::string* out, int status, const Headers& headers,
                        std::optional<size_t> content_length, bool keep_alive,
                        int version_minor, std::string_view date) {
  if (status < 100 || status > 999) status = 500;
  size_t estimate = 64 + date.size();
  for (const auto& [name, value] : headers) {
    estimate += name.size() + value.size() + 4;
  }
  out->reserve(out->size() + estimate);
  out->append("HTTP/1.1 ");
  AppendDecimal(out, static_cast<uint64_t>(status));
  out->push_back(' ');
  out->append(ReasonPhrase(status));
  out->append("\r\n");
  if (!date.empty()) {
    out->append("Date: ");
    out->append(date);
    out->append("\r\n");
  }
  for (const auto& [name, value] : headers) {
    if (!IsToken(name) || value.find_first_of(std::string_view("\r\n\0", 3)) !=
                              std::string::npos) {
      continue;
    }
    if (EqualsIgnoreCase(name, "content-length") ||
        EqualsIgnoreCase(name, "transfer-encoding") ||
        EqualsIgnoreCase(name, "connection")) {
      continue;
    }
    out->append(name);
    out->append(": ");
    out->append(value);
    out->append("\r\n");
  }
  if (!StatusHasNoBody(status)) {
    if (content_length.has_value()) {
      out->append("Content-Length: ");
      AppendDecimal(out, *content_length);
      out->append("\r\n");
    } else if (version_minor >= 1) {
      out->append("Transfer-Encoding: chunked\r\n");
    } else {
      keep_alive = false;  // the body ends when the connection does
    }
  }
  if (version_minor >= 1) {
    if (!keep_alive) out->append("Connection: close\r\n");
  } else if (keep_alive) {
    out->append("Connection: keep-alive\r\n");
  }
  out->append("\r\n");
}

std::string ResponseHead(int status, const Headers& headers,
                         std::optional<size_t> content_length, bool keep_alive,
                         int version_minor, std::string_view date) {
  std::string out;
  AppendResponseHead(&out, status, headers, content_length, keep_alive,
                     version_minor, date);
  return out;
}

std::string ChunkHeader(size_t size) {
  std::string out;
  AppendHex(&out, size);
  out.append("\r\n");
  return out;
}

void AppendChunk(std::string* out, std::string_view data) {
  if (data.empty()) return;
  AppendHex(out, data.size());
  out->append("\r\n");
  out->append(data);
  out->append("\r\n");
}

namespace {

// Calls `fn` with each line of `text`, split at LF, CRLF or CR. Text
// ending with a line break yields a final empty line.
template <typename Fn>
void ForEachLine(std::string_view text, Fn fn) {
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n' || c == '\r') {
      fn(text.substr(start, i - start));
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  fn(text.substr(start));
}

void AppendSseField(std::string* out, std::string_view field,
                    std::string_view value, bool drop_nul) {
  out->append(field);
  out->append(": ");
  for (char c : value) {
    if (c == '\r' || c == '\n' || (drop_nul && c == '\0')) continue;
    out->push_back(c);
  }
  out->push_back('\n');
}

}  // namespace

std::string FormatSseEvent(std::string_view data, std::string_view event,
                           std::string_view id) {
  std::string out;
  out.reserve(data.size() + event.size() + id.size() + 24);
  if (!event.empty()) AppendSseField(&out, "event", event, false);
  if (!id.empty()) AppendSseField(&out, "id", id, true);
  ForEachLine(data, [&out](std::string_view line) {
    if (line.empty()) {
      out.append("data:\n");
    } else {
      out.append("data: ");
      out.append(line);
      out.push_back('\n');
    }
  });
  out.push_back('\n');
  return out;
}

std::string FormatSseComment(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 4);
  ForEachLine(text, [&out](std::string_view line) {
    if (line.empty()) {
      out.append(":\n");
    } else {
      out.append(": ");
      out.append(line);
      out.push_back('\n');
    }
  });
  out.push_back('\n');
  return out;
}

std::string HttpDate(std::time_t time) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed",
                                          "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr",
                                            "May", "Jun", "Jul", "Aug",
                                            "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  gmtime_r(&time, &tm);
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%s, %02d %s %04d %02d:%02d:%02d GMT",
                kDays[tm.tm_wday % 7], tm.tm_mday, kMonths[tm.tm_mon % 12],
                tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buffer;
}

}  // namespace inspector::http
