// Small text helpers for inspectorctl's human output: durations, shell
// quoting, terminal-safe strings and display widths.
// All functions are pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_TEXT_H_
#define INSPECTOR_CLIENTS_CLI_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace inspector::cli {

// "1d 2h 3m 4s" style; zero components are left out, 0 gives "0s".
std::string FormatDuration(uint64_t seconds);

// Quotes `arg` for a POSIX shell, only when needed: plain words stay as
// they are, anything else is single-quoted ('it'\''s'); "" gives ''.
std::string ShellQuote(std::string_view arg);

// ShellQuote of each element, joined by single spaces.
std::string ShellJoin(const std::vector<std::string>& argv);

// Replaces control characters (C0, DEL, and C1 encoded as UTF-8) with
// escapes such as "\n" or "\x1b", so that names and commands taken from
// imported files cannot move the cursor or change the terminal's state.
std::string SanitizeForTerminal(std::string_view text);

// SanitizeForTerminal for text meant to span lines (tool output, resource
// contents): line feeds and tabs stay, CR LF becomes LF, other control
// characters are escaped.
std::string SanitizeText(std::string_view text);

// `text` on one line: every run of blanks, tabs and line breaks becomes one
// space, and leading and trailing ones are dropped (descriptions in tables).
std::string OneLine(std::string_view text);

// The number of terminal columns `text` takes: UTF-8 code points, each
// counted as one column (invalid bytes count one each).
size_t DisplayWidth(std::string_view text);

// `text` cut to at most `width` columns; a cut text ends in "…".
std::string TruncateToWidth(std::string_view text, size_t width);

// The first 8 characters of an id, for tables.
std::string ShortId(std::string_view id);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_TEXT_H_
