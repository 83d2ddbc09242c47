// Unit tests of common/json_valid.h: hand-written cases for every rule
// (each also checked against nlohmann::json::accept), a differential test
// against nlohmann on random mutations of JSON-RPC messages and on numbers
// near the double overflow bound, and nesting far deeper than the inline
// stack.
#include "common/json_valid.h"

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace inspector::json_scan {
namespace {

// What the validator must agree with, called as the daemon calls it.
bool NlohmannAccepts(std::string_view text) {
  return nlohmann::json::accept(text);
}

// A literal's bytes, NULs included.
template <size_t N>
std::string Bytes(const char (&s)[N]) {
  return std::string(s, N - 1);
}

// `text` as hex bytes, for failure messages (it may hold any byte).
std::string Hex(std::string_view text, size_t limit = 2000) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size() && i < limit; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (i > 0) out += ' ';
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  if (text.size() > limit) out += " ...";
  return out + " (" + std::to_string(text.size()) + " bytes)";
}

// 2^1024 - 2^970: the smallest magnitude that rounds to infinity.
constexpr char kOverflowBound[] =
    "1797693134862315807937289714053034150799341327100378269361737789804449"
    "6829276475094664901797758720709633028641669288791094655554785194040263"
    "0657488671505820681908902000708383676273854845817711531764475730270069"
    "8555713669596228429148198608349364752927190741684443655107043427115596"
    "99508093042880177904174497792";
static_assert(sizeof(kOverflowBound) - 1 == 309);
// The same number minus one.
std::string BoundMinusOne() {
  std::string s = kOverflowBound;
  s.back() = static_cast<char>(s.back() - 1);  // Ends in 2: no borrow.
  return s;
}

struct Case {
  const char* name;
  std::string text;
  bool valid;
};

std::vector<Case> HandWrittenCases() {
  const std::string deep_ok = std::string(100, '[') + std::string(100, ']');
  return {
      // Whitespace and the value around it.
      {"empty", "", false},
      {"only whitespace", " \t\r\n", false},
      {"surrounding whitespace", " \t\r\n{}\n\r\t ", true},
      {"form feed is not whitespace", "\f1", false},
      {"vertical tab is not whitespace", "1\v", false},
      {"no-break space is not whitespace",
       "\xC2\xA0"
       "1",
       false},
      {"two values", "1 2", false},
      {"two objects", "{}{}", false},
      {"garbage after value", "[1]x", false},
      {"comment after value", "1 // c", false},
      {"block comment", "/* c */ 1", false},
      // Literals.
      {"true", "true", true},
      {"false", "false", true},
      {"null", "null", true},
      {"capitalised True", "True", false},
      {"truncated tru", "tru", false},
      {"truncated nul", "nul", false},
      {"literal with tail", "truex", false},
      {"literal glued to literal", "truefalse", false},
      {"NaN", "NaN", false},
      {"Infinity", "Infinity", false},
      {"undefined", "undefined", false},
      // Numbers.
      {"zero", "0", true},
      {"negative zero", "-0", true},
      {"integer", "123", true},
      {"negative integer", "-123", true},
      {"fraction", "1.5", true},
      {"exponent", "1e5", true},
      {"capital exponent with plus", "1E+5", true},
      {"negative exponent", "-1.25e-3", true},
      {"exponent with leading zeros", "1e007", true},
      {"leading plus", "+1", false},
      {"leading zero", "01", false},
      {"negative leading zero", "-01", false},
      {"zero zero", "00", false},
      {"leading dot", ".5", false},
      {"trailing dot", "5.", false},
      {"dot before exponent", "5.e3", false},
      {"bare exponent", "1e", false},
      {"exponent sign only", "1e+", false},
      {"two exponent signs", "1e+-1", false},
      {"lone minus", "-", false},
      {"double minus", "--1", false},
      {"minus space", "- 1", false},
      {"hex", "0x10", false},
      {"number glued to literal", "1true", false},
      {"comma decimal", "1,5", false},
      {"2^64 (strtoull overflow)", "18446744073709551616", true},
      {"below INT64_MIN", "-9223372036854775809", true},
      {"largest double", "1.7976931348623157e308", true},
      {"rounds to largest double", "1.7976931348623158e308", true},
      {"rounds to infinity", "1.7976931348623159e308", false},
      {"1e308", "1e308", true},
      {"1e309", "1e309", false},
      {"1e999", "1e999", false},
      {"-1e999", "-1e999", false},
      {"overflow in array", "[1,1e999]", false},
      {"huge exponent", "1e99999999999999999999999999", false},
      {"underflow", "1e-999", true},
      {"huge negative exponent", "1e-99999999999999999999999999", true},
      {"zero with huge exponent", "0e99999999999999999999", true},
      {"zero fraction with huge exponent", "0.000e999", true},
      {"integer of 309 digits", "1" + std::string(308, '0'), true},
      {"integer of 310 digits", "1" + std::string(309, '0'), false},
      {"negative integer of 310 digits", "-1" + std::string(309, '0'), false},
      {"overflow bound", kOverflowBound, false},
      {"overflow bound minus one", BoundMinusOne(), true},
      {"overflow bound with fraction", BoundMinusOne() + ".999999", true},
      {"overflow bound as 0.x e309",
       std::string("0.") + kOverflowBound + "e309", false},
      {"bound minus one as fraction",
       std::string("0.") + BoundMinusOne() + "e309", true},
      {"overflow bound as 1.x e308",
       std::string(kOverflowBound).insert(1, ".") + "e308", false},
      {"bound minus one as 1.x e308", BoundMinusOne().insert(1, ".") + "e308",
       true},
      {"overflow bound as 1.x e308 with more digits",
       std::string(kOverflowBound).insert(1, ".") + "0000001e308", false},
      {"tiny fraction with big exponent", "0.00001e313", true},
      {"tiny fraction with bigger exponent", "0.00001e314", false},
      // Strings and escapes.
      {"empty string", "\"\"", true},
      {"plain string", "\"hello world\"", true},
      {"unterminated string", "\"abc", false},
      {"single quotes", "'a'", false},
      {"every short escape", R"("\" \\ \/ \b \f \n \r \t")", true},
      {"escaped single quote", R"("\'")", false},
      {"escape a", R"("\a")", false},
      {"escape zero", R"("\0")", false},
      {"escape x", R"("\x41")", false},
      {"escape capital U", R"("\U0041")", false},
      {"backslash at end", "\"\\", false},
      {"escaped closing quote only", R"("\")", false},
      {"unicode escape", R"("\u0041")", true},
      {"unicode escape either case", R"("\u00e9\u00E9\uABcd")", true},
      {"escaped NUL", R"("\u0000")", true},
      {"escaped U+FFFF", R"("\uFFFF")", true},
      {"short unicode escape", R"("\u004")", false},
      {"non-hex unicode escape", R"("\u004g")", false},
      {"unicode escape cut by end", "\"\\u00", false},
      {"surrogate pair", R"("\uD83D\uDE00")", true},
      {"surrogate pair lower case", R"("\ud83d\ude00")", true},
      {"last surrogate pair", R"("\uDBFF\uDFFF")", true},
      {"lone high surrogate", R"("\uD83D")", false},
      {"high surrogate then text", R"("\uD83Dxxxxxx")", false},
      {"high surrogate then short escape", R"("\uD83D\n")", false},
      {"two high surrogates", R"("\uD83D\uD83D")", false},
      {"high surrogate then BMP", R"("\uD83D\u0041")", false},
      {"high surrogate then raw low", "\"\\uD83D\xED\xB8\x80\"", false},
      {"lone low surrogate", R"("\uDE00")", false},
      {"low then high", R"("\uDE00\uD83D")", false},
      {"raw tab", "\"a\tb\"", false},
      {"raw newline", "\"a\nb\"", false},
      {"raw 0x1f", "\"\x1f\"", false},
      {"raw 0x1f before a letter", "\"a\x1fnb\"", false},
      {"raw 0x01 in a long run", "\"abcdefghijklmno\x01pqrstuvwxyz\"", false},
      {"UTF-8 in a long run", "\"abcdefghijk\xC3\xA9lmnopqrstuvwxyz\"", true},
      {"stray byte in a long run", "\"abcdefghijk\xA9lmnopqrstuvwxyz\"", false},
      {"quote in a long run", "\"abcdefghijk\"lmnopqrstuvwxyz\"", false},
      {"raw DEL", "\"\x7f\"", true},
      {"raw NUL in string", Bytes("\"a\0b\""), false},
      {"key with escapes", R"({"a\"b\u00e9":1})", true},
      // UTF-8.
      {"two-byte", "\"\xC3\xA9\"", true},
      {"lowest two-byte", "\"\xC2\x80\"", true},
      {"overlong C0 80", "\"\xC0\x80\"", false},
      {"overlong C1 BF", "\"\xC1\xBF\"", false},
      {"three-byte", "\"\xE6\x97\xA5\xE6\x9C\xAC\"", true},
      {"lowest three-byte", "\"\xE0\xA0\x80\"", true},
      {"overlong E0 9F BF", "\"\xE0\x9F\xBF\"", false},
      {"last before surrogates", "\"\xED\x9F\xBF\"", true},
      {"encoded high surrogate", "\"\xED\xA0\x80\"", false},
      {"encoded low surrogate", "\"\xED\xBF\xBF\"", false},
      {"after surrogates", "\"\xEE\x80\x80\"", true},
      {"U+FFFF", "\"\xEF\xBF\xBF\"", true},
      {"four-byte", "\"\xF0\x9F\x98\x80\"", true},
      {"lowest four-byte", "\"\xF0\x90\x80\x80\"", true},
      {"overlong F0 8F", "\"\xF0\x8F\xBF\xBF\"", false},
      {"U+10FFFF", "\"\xF4\x8F\xBF\xBF\"", true},
      {"past U+10FFFF", "\"\xF4\x90\x80\x80\"", false},
      {"F5 lead", "\"\xF5\x80\x80\x80\"", false},
      {"F8 lead", "\"\xF8\x88\x80\x80\x80\"", false},
      {"FE", "\"\xFE\"", false},
      {"FF", "\"\xFF\"", false},
      {"stray continuation", "\"\x80\"", false},
      {"stray continuation after two-byte", "\"\xC3\xA9\xA9\"", false},
      {"cut-short three-byte", "\"\xE2\x82\"", false},
      {"cut-short three-byte then ASCII", "\"\xE2\x82x\"", false},
      {"cut-short four-byte", "\"\xF0\x9F\x98\"", false},
      {"cut short by the end", "\"\xE2\x82", false},
      {"lead byte then quote", "\"\xC3\"", false},
      {"UTF-8 outside a string", "\xC3\xA9", false},
      {"UTF-8 between values", "[1,\xC3\xA9]", false},
      // Byte order mark.
      {"BOM then value", "\xEF\xBB\xBF{}", true},
      {"BOM then whitespace", "\xEF\xBB\xBF \n1", true},
      {"BOM only", "\xEF\xBB\xBF", false},
      {"whitespace then BOM", " \xEF\xBB\xBF{}", false},
      {"two BOMs", "\xEF\xBB\xBF\xEF\xBB\xBF{}", false},
      {"cut BOM", "\xEF\xBB{}", false},
      {"EF alone", "\xEF", false},
      {"BOM after value", "1\xEF\xBB\xBF", false},
      // NUL bytes.
      {"NUL alone", Bytes("\0"), false},
      {"NUL before value", Bytes("\0 1"), false},
      {"NUL after number", Bytes("1\0"), true},
      {"NUL after value then garbage", Bytes("[1]\0garbage"), true},
      {"NUL right after number then garbage", Bytes("1\0xx"), true},
      {"whitespace NUL garbage", Bytes("1 \0 ]]"), true},
      {"NUL after literal", Bytes("true\0}"), true},
      {"NUL inside literal", Bytes("tr\0ue"), false},
      {"NUL inside number", Bytes("1e\0"), false},
      {"NUL after minus", Bytes("-\0"), false},
      {"NUL in array", Bytes("[\0]"), false},
      {"NUL after array element", Bytes("[1\0]"), false},
      {"NUL after key", Bytes("{\"a\"\0:1}"), false},
      {"NUL after BOM", Bytes("\xEF\xBB\xBF\0"), false},
      // Arrays and objects.
      {"empty array", "[]", true},
      {"empty array with space", "[ \n ]", true},
      {"empty object", "{}", true},
      {"empty object with space", "{ \t }", true},
      {"array", "[1, \"a\", true, null, {}, []]", true},
      {"object", R"({"a": 1, "b": [2, {"c": null}]})", true},
      {"duplicate keys", R"({"a":1,"a":2})", true},
      {"trailing comma in array", "[1,]", false},
      {"trailing comma in object", R"({"a":1,})", false},
      {"leading comma", "[,1]", false},
      {"double comma", "[1,,2]", false},
      {"missing comma", "[1 2]", false},
      {"lone comma", "[,]", false},
      {"unquoted key", "{a:1}", false},
      {"number key", "{1:1}", false},
      {"missing colon", R"({"a" 1})", false},
      {"missing value", R"({"a":})", false},
      {"key without value", R"({"a"})", false},
      {"colon in array", "[1:2]", false},
      {"comma instead of colon", R"({"a",1})", false},
      {"mismatched brackets", "[}", false},
      {"mismatched braces", R"({"a":1])", false},
      {"unclosed array", "[1", false},
      {"unclosed object", R"({"a":1)", false},
      {"extra closer", "[]]", false},
      {"closer alone", "]", false},
      {"nested 100 deep", deep_ok, true},
      {"nested 100 deep, one short", deep_ok.substr(1), false},
  };
}

TEST(JsonValidTest, HandWrittenCasesMatchTheirExpectationAndNlohmann) {
  for (const Case& c : HandWrittenCases()) {
    EXPECT_EQ(IsValidJson(c.text), c.valid)
        << c.name << ": " << Hex(c.text, 80);
    // The expectation itself is nlohmann's answer.
    EXPECT_EQ(NlohmannAccepts(c.text), c.valid)
        << "nlohmann disagrees with the table on " << c.name << ": "
        << Hex(c.text, 80);
  }
}

// Messages such as the daemon forwards, to be mutated.
std::vector<std::string> SeedMessages() {
  return {
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":)"
      R"("search","arguments":{"query":"caf\u00e9 \"quoted\" \\ path\/x",)"
      R"("limit":10,"exact":false,"tags":["a","b"]}}})",
      R"({"jsonrpc":"2.0","id":"req-42","result":{"content":[{"type":)"
      R"("text","text":"Line 1\nLine 2\tTabbed \ud83d\ude00 \u2603"},)"
      R"({"type":"text","text":"h)"
      "\xC3\xA9llo \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x98\x80"
      R"("}],"isError":false,"_meta":{"elapsed":0.25,"n":-3,"big":)"
      R"(1.5e+300,"small":-2E-5}}})",
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":)"
      R"({"protocolVersion":"2025-06-18","capabilities":{"roots":)"
      R"({"listChanged":true},"sampling":{},"elicitation":{}},)"
      R"("clientInfo":{"name":"inspector","version":"0.1.0"}}})",
      R"({"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":)"
      R"("Method not found","data":null}})",
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":)"
      R"({"progressToken":"t1","progress":0.5,"total":1e3}})",
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0",)"
      R"("id":2,"method":"tools/list","params":{"cursor":null}}])",
      R"({"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo",)"
      R"("description":"Echoes \"text\".","inputSchema":{"type":"object",)"
      R"("properties":{"text":{"type":"string","maxLength":4096}},)"
      R"("required":["text"]}}],"nextCursor":"abc=="}})",
      "{\n\t\"jsonrpc\": \"2.0\",\r\n\t\"id\": 12345678901234567890,\n\t"
      "\"result\": { \"values\": [ 0, -0.0, 1.7976931348623157e308, "
      "5e-324, 123456789012345678901234567890 ] }\n}\n",
      R"({"k":"\u0000\u001f\uDBFF\uDFFF\/","e":"","a":[[],{},[[{}]]]})",
  };
}

// Bytes and snippets that often change a message's meaning.
const std::vector<std::string>& InterestingBytes() {
  static const std::vector<std::string> kBytes = {
      "\"",        "\\",   "{",    "}",    "[",    "]",    ",",    ":",
      "0",         "1",    "9",    "-",    "+",    "e",    "E",    ".",
      " ",         "\t",   "\n",   "\r",   "\f",   "t",    "u",    "/",
      Bytes("\0"), "\x1f", "\x7f", "\x80", "\xbf", "\xc0", "\xc2", "\xdf",
      "\xe0",      "\xed", "\xef", "\xf0", "\xf4", "\xf5", "\xff", "\xa0",
      "\x8f",      "\x90", "\xbb",
  };
  return kBytes;
}
const std::vector<std::string>& InterestingSnippets() {
  static const std::vector<std::string> kSnippets = {
      "\\u",          "\\uD83D",      "\\uDE00",      "\\uDBFF\\uDFFF",
      "\\u00",        "\\uZZZZ",      "1e999",        "-1e400",
      "1e-999",       "0.",           "-0",           "01",
      "true",         "fals",         "null",         "nulll",
      "\xEF\xBB\xBF", "\xF0\x9F\x98", "\xED\xA0\x80", "\xF4\x90\x80\x80",
      "\xE0\x9F\xBF", "\xC3\xA9",     "[]",           "{}",
      "{\"a\":",      "\":\"",        "\",\"",        ",\"x\":1",
      "[[[[",         "]]]]",         "\"\"",         "\\\"",
  };
  return kSnippets;
}

// One random edit of `s`; `rng` is fixed-seeded, and only its raw output
// is used so that every standard library makes the same choices.
void Mutate(std::string& s, std::mt19937& rng) {
  auto below = [&rng](size_t n) { return n == 0 ? 0 : rng() % n; };
  const size_t pos = below(s.size() + 1);  // s.size() means the end.
  switch (rng() % 10) {
    case 0:  // Flip a bit.
      if (pos < s.size()) s[pos] = static_cast<char>(s[pos] ^ (1 << below(8)));
      break;
    case 1:  // Overwrite with an interesting byte.
      if (pos < s.size()) {
        s[pos] = InterestingBytes()[below(InterestingBytes().size())][0];
      }
      break;
    case 2:
    case 3:  // Insert an interesting byte.
      s.insert(pos, InterestingBytes()[below(InterestingBytes().size())]);
      break;
    case 4:  // Insert a snippet.
      s.insert(pos, InterestingSnippets()[below(InterestingSnippets().size())]);
      break;
    case 5:  // Delete a byte.
      if (pos < s.size()) s.erase(pos, 1);
      break;
    case 6:  // Delete a short run.
      if (pos < s.size()) s.erase(pos, 1 + below(8));
      break;
    case 7:  // Truncate.
      s.resize(pos);
      break;
    case 8:  // Overwrite with any byte.
      if (pos < s.size()) s[pos] = static_cast<char>(below(256));
      break;
    case 9: {  // Copy a slice elsewhere.
      const size_t from = below(s.size() + 1);
      s.insert(pos, s.substr(from, below(16)));
      break;
    }
  }
}

TEST(JsonValidTest, AgreesWithNlohmannOnMutatedMessages) {
  const std::vector<std::string> seeds = SeedMessages();
  for (const std::string& seed : seeds) {
    ASSERT_TRUE(NlohmannAccepts(seed)) << Hex(seed);
    ASSERT_TRUE(IsValidJson(seed)) << Hex(seed);
  }
  std::mt19937 rng(20240611);
  constexpr int kRounds = 250000;
  int accepted = 0;
  int differences = 0;
  std::string first_difference;
  bool first_expected = false;
  std::string text;
  for (int round = 0; round < kRounds; ++round) {
    text = seeds[rng() % seeds.size()];
    // Mostly one or two edits, so that many results stay valid.
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) Mutate(text, rng);
    const bool expected = NlohmannAccepts(text);
    accepted += expected;
    if (IsValidJson(text) != expected && differences++ == 0) {
      first_difference = text;
      first_expected = expected;
    }
  }
  EXPECT_EQ(differences, 0)
      << "first difference: nlohmann says " << first_expected << " on "
      << Hex(first_difference);
  // The mutations must exercise both answers.
  EXPECT_GT(accepted, kRounds / 50);
  EXPECT_LT(accepted, kRounds - kRounds / 50);
}

// A random decimal number in JSON's syntax, often near the overflow bound.
std::string RandomNumber(std::mt19937& rng) {
  auto digits = [&rng](size_t n, bool nonzero_first) {
    std::string d;
    for (size_t i = 0; i < n; ++i) {
      d += static_cast<char>(
          '0' + (i == 0 && nonzero_first ? 1 + rng() % 9 : rng() % 10));
    }
    return d;
  };
  std::string number = rng() % 2 ? "-" : "";
  if (rng() % 2) {
    // The bound's digits, cut, nudged, or extended, with the decimal point
    // moved and the exponent making up for it (or not quite).
    std::string d = kOverflowBound;
    d.resize(1 + rng() % (d.size() + 5), '0');
    if (rng() % 3 == 0) d.back() = static_cast<char>('0' + rng() % 10);
    if (rng() % 3 == 0) d += digits(1 + rng() % 20, false);
    const int jitter = rng() % 2 ? 0 : static_cast<int>(rng() % 5) - 2;
    if (rng() % 4 == 0) {
      // 0.00ddd with the zeros made up for by the exponent.
      const int zeros = static_cast<int>(rng() % 3);
      number += "0." + std::string(zeros, '0') + d;
      number += "e" + std::to_string(309 + zeros + jitter);
    } else {
      const size_t point = 1 + rng() % d.size();
      number += d.substr(0, point);
      if (point < d.size()) number += "." + d.substr(point);
      const int exponent = 309 - static_cast<int>(point) + jitter;
      if (exponent != 0 || rng() % 2) {
        number += (rng() % 2 ? "e" : "E") + std::to_string(exponent);
      }
    }
    return number;
  }
  // Any shape: integer part, fraction, exponent.
  number += rng() % 8 == 0 ? "0" : digits(1 + rng() % 320, true);
  if (rng() % 2) number += "." + digits(1 + rng() % 30, false);
  if (rng() % 2) {
    number += rng() % 2 ? "e" : "E";
    const int sign = static_cast<int>(rng() % 3);
    if (sign == 1) number += "+";
    if (sign == 2) number += "-";
    number += std::to_string(rng() % 700);
  }
  return number;
}

TEST(JsonValidTest, AgreesWithNlohmannOnNumbersNearTheOverflowBound) {
  std::mt19937 rng(1024);
  constexpr int kRounds = 30000;
  int accepted = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string number = RandomNumber(rng);
    const bool expected = NlohmannAccepts(number);
    accepted += expected;
    ASSERT_EQ(IsValidJson(number), expected) << number;
  }
  EXPECT_GT(accepted, kRounds / 10);
  EXPECT_LT(accepted, kRounds - kRounds / 10);
}

TEST(JsonValidTest, NestingFarPastTheInlineStack) {
  constexpr size_t kDepth = 100000;
  std::string text = std::string(kDepth, '[') + std::string(kDepth, ']');
  EXPECT_TRUE(IsValidJson(text));
  EXPECT_TRUE(NlohmannAccepts(text));
  text.pop_back();
  EXPECT_FALSE(IsValidJson(text));
  EXPECT_FALSE(NlohmannAccepts(text));
  text = std::string(kDepth, '[') + std::string(kDepth - 1, ']') + "}";
  EXPECT_FALSE(IsValidJson(text));
  EXPECT_FALSE(NlohmannAccepts(text));
}

TEST(JsonValidTest, MixedNestingRemembersEveryLevel) {
  // Arrays and objects chosen at random for each level, so that a wrong
  // bit at any depth (inline or spilled) closes with the wrong bracket.
  constexpr size_t kDepth = 3000;
  std::mt19937 rng(7);
  std::vector<bool> object(kDepth);
  std::string open;
  for (size_t i = 0; i < kDepth; ++i) {
    object[i] = rng() % 2;
    open += object[i] ? "{\"k\":" : "[";
  }
  std::string close;
  for (size_t i = kDepth; i-- > 0;) close += object[i] ? "}" : ",1]";
  const std::string valid = open + "0" + close;
  ASSERT_TRUE(NlohmannAccepts(valid));
  EXPECT_TRUE(IsValidJson(valid));
  // The same with one closer swapped for the other kind, at depths on
  // both sides of every 64-level boundary.
  for (size_t level :
       {size_t{0}, size_t{1}, size_t{62}, size_t{63}, size_t{64}, size_t{65},
        size_t{127}, size_t{128}, size_t{129}, size_t{1000}, kDepth - 1}) {
    std::string swapped;
    for (size_t i = kDepth; i-- > 0;) {
      const bool as_object = i == level ? !object[i] : object[i];
      swapped += as_object ? "}" : ",1]";
    }
    const std::string text = open + "0" + swapped;
    EXPECT_FALSE(NlohmannAccepts(text)) << level;
    EXPECT_FALSE(IsValidJson(text)) << "closer swapped at level " << level;
  }
}

}  // namespace
}  // namespace inspector::json_scan
