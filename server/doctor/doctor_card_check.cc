// The doctor's server card check (doctor_run.h): finds the HTTP server's
// card (SEP-2127, server/protocol/server_card.h), checks it against the
// draft's rules and compares it with what initialize and tools/list found.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "server/doctor/doctor_run.h"
#include "server/protocol/server_card.h"

namespace inspector::doctor {
namespace {

// At most this many cards of an AI catalog are fetched to find the
// server's.
constexpr size_t kMaxCatalogCards = 20;

std::string WithoutSlash(std::string url) {
  while (absl::EndsWith(url, "/")) url.pop_back();
  return url;
}

// Whether the card names `url` among its remotes; `has_remotes` says
// whether it names any.
bool NamesUrl(const Json& card, const std::string& url, bool* has_remotes) {
  *has_remotes = false;
  auto remotes = card.find("remotes");
  if (remotes == card.end() || !remotes->is_array()) return false;
  for (const Json& r : *remotes) {
    if (!r.is_object() || !r.contains("url") || !r["url"].is_string()) continue;
    *has_remotes = true;
    if (WithoutSlash(r["url"].get<std::string>()) == WithoutSlash(url)) {
      return true;
    }
  }
  return false;
}

}  // namespace

void DoctorRun::Impl::CheckServerCard() {
  v1::DoctorCheck* check = Next("card", "Server card");
  if (check == nullptr) return;
  if (!url_.has_value()) {
    Skip(check, "no URL to look for a card at");
    return;
  }
  const std::string origin = OriginOf(*url_);
  const std::string path = PathOf(*url_);
  const std::string server_url = config_.url();
  // Where the card may be, in order: beside the endpoint, the origin's
  // well-known card, then the origin's AI catalog.
  std::vector<std::string> candidates;
  if (size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0) {
    candidates.push_back(
        absl::StrCat(origin, path.substr(0, slash), "/server-card"));
  }
  candidates.push_back(
      absl::StrCat(origin, std::string(protocol::kServerCardPath)));
  std::string tried;
  std::optional<Json> card;
  std::string card_url;
  for (const std::string& u : candidates) {
    if (FailIfOver(check)) return;
    auto document = FetchJson(u, &tried);
    if (!document.ok()) continue;
    bool has_remotes = false;
    if (!NamesUrl(*document, server_url, &has_remotes) && has_remotes) {
      check->add_details(absl::StrCat(
          u, ": a card whose remotes do not name ", server_url, "; not used"));
      continue;
    }
    card = *std::move(document);
    card_url = u;
    break;
  }
  if (!card.has_value()) {
    const std::string catalog_url =
        absl::StrCat(origin, std::string(protocol::kAiCatalogPath));
    auto catalog = FetchJson(catalog_url, &tried);
    if (catalog.ok() && catalog->contains("entries") &&
        (*catalog)["entries"].is_array()) {
      size_t fetched = 0;
      for (const Json& entry : (*catalog)["entries"]) {
        if (!entry.is_object() ||
            entry.value("type", "") != protocol::kServerCardMediaType ||
            !entry.contains("url") || !entry["url"].is_string()) {
          continue;
        }
        if (++fetched > kMaxCatalogCards || FailIfOver(check)) break;
        std::string u = entry["url"].get<std::string>();
        if (!absl::StartsWith(u, "http://") && !absl::StartsWith(u, "https://")) {
          continue;
        }
        auto document = FetchJson(u, &tried);
        bool has_remotes = false;
        if (document.ok() && NamesUrl(*document, server_url, &has_remotes)) {
          card = *std::move(document);
          card_url = u;
          check->add_details(absl::StrCat("found through ", catalog_url));
          break;
        }
      }
    }
  }
  if (FailIfOver(check)) return;
  if (!card.has_value()) {
    Skip(check, absl::StrCat("the server publishes no server card (tried ",
                             tried, ")"));
    return;
  }
  check->add_details(absl::StrCat("card: ", card_url));
  std::vector<std::string> problems = protocol::ValidateServerCard(*card);
  for (const std::string& p : problems) {
    check->add_details(absl::StrCat("invalid: ", p));
  }
  protocol::LiveServer live;
  live.server_info = server_info_;
  live.capabilities =
      server_capabilities_.is_object() ? server_capabilities_ : Json::object();
  live.protocol_version = negotiated_version_;
  live.tools = listed_tools_;
  const bool connected = !negotiated_version_.empty();
  std::vector<protocol::CardDifference> differences;
  if (connected) differences = protocol::CompareServerCard(*card, live);
  size_t real = 0;
  for (const auto& d : differences) {
    if (!d.expected_to_drift) ++real;
    check->add_details(absl::StrCat(
        d.expected_to_drift ? "differs (the card marks tools as dynamic): "
                            : "differs: ",
        d.text));
  }
  if (connected && !listed_tools_.is_array() && card->contains("tools")) {
    check->add_details(
        "tools not compared: tools/list gave more than one page or failed");
  }
  const std::string fix =
      "publish a card generated from what the server declares (its "
      "initialize result and tools/list), or correct the server";
  if (!problems.empty() || real > 0) {
    std::vector<std::string> parts;
    if (!problems.empty()) {
      parts.push_back(absl::StrCat(problems.size(), " rule", problems.size() == 1 ? "" : "s",
                                   " of the draft broken"));
    }
    if (real > 0) {
      parts.push_back(absl::StrCat(real, " disagreement", real == 1 ? "" : "s",
                                   " with the server"));
    }
    Fail(check,
         absl::StrCat("the card at ", card_url, " has ",
                      absl::StrJoin(parts, " and ")),
         fix, problems.empty() ? "CARD_MISMATCH" : "CARD_INVALID");
    return;
  }
  if (!differences.empty()) {
    Warn(check,
         absl::StrCat("the card at ", card_url, " lists tools the server "
                      "changed since (allowed: the card says they change)"),
         "regenerate the card when the tools change");
    return;
  }
  Pass(check, connected
                  ? absl::StrCat("the card at ", card_url,
                                 " is valid and agrees with the server")
                  : absl::StrCat("the card at ", card_url,
                                 " is valid (not compared: no MCP session)"));
}

}  // namespace inspector::doctor
