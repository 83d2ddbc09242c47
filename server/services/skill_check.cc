#include "server/services/skill_check.h"

#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/json_proto.h"
#include "server/oauth/crypto.h"

namespace inspector::services {
namespace {

using Json = nlohmann::json;

constexpr char kSkillFileSuffix[] = "/SKILL.md";
constexpr size_t kSkillNameMax = 64;
constexpr size_t kSkillDescriptionMax = 1024;
// Interoperability limits: a host need not take more than this.
constexpr size_t kSkillMaxFiles = 512;
constexpr uint64_t kSkillMaxBytes = 16ull * 1024 * 1024;

std::string SkillText(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// Code points of UTF-8 text (bytes that do not start one are not counted).
size_t SkillCodePoints(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

// 1 to 64 of a-z 0-9 in hyphen-separated runs (no leading, trailing or
// double hyphen): the Agent Skills name rule.
bool SkillNameValid(const std::string& name) {
  if (name.empty() || name.size() > kSkillNameMax) return false;
  if (name.front() == '-' || name.back() == '-') return false;
  char previous = 0;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    (c == '-' && previous != '-');
    if (!ok) return false;
    previous = c;
  }
  return true;
}

bool SkillDigestWellFormed(const std::string& digest) {
  if (digest.size() != 7 + 64 || !absl::StartsWith(digest, "sha256:")) {
    return false;
  }
  for (size_t i = 7; i < digest.size(); ++i) {
    const char c = digest[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool SkillSizeUsable(const Json& size) {
  return size.is_number_unsigned() ||
         (size.is_number_integer() && size.get<int64_t>() >= 0);
}

v1::SkillIssue SkillIssueOf(const char* severity, const char* code,
                            std::string message,
                            std::string resource_uri = "") {
  v1::SkillIssue issue;
  issue.set_severity(severity);
  issue.set_code(code);
  issue.set_message(std::move(message));
  issue.set_resource_uri(std::move(resource_uri));
  return issue;
}

}  // namespace

std::string SkillNameFromUri(const std::string& uri) {
  if (!absl::EndsWith(uri, kSkillFileSuffix)) return "";
  const std::string dir = uri.substr(0, uri.size() - strlen(kSkillFileSuffix));
  const size_t slash = dir.rfind('/');
  const std::string segment =
      slash == std::string::npos ? "" : dir.substr(slash + 1);
  return segment;
}

void SkillFromJson(const Json& entry, v1::Skill* out) {
  out->set_uri(SkillText(entry, "uri"));
  const Json frontmatter = entry.is_object() && entry.contains("frontmatter")
                               ? entry["frontmatter"]
                               : Json();
  std::string name = SkillText(frontmatter, "name");
  if (name.empty()) name = SkillNameFromUri(out->uri());
  out->set_name(name);
  out->set_description(SkillText(frontmatter, "description"));
  if (frontmatter.is_object()) {
    JsonObjectToStruct(frontmatter, out->mutable_frontmatter()).IgnoreError();
  }
  if (entry.is_object()) {
    const Json& resources = entry.contains("resources") ? entry["resources"]
                                                        : Json();
    out->set_dynamic(resources.is_string() && resources == "dynamic");
    if (resources.is_array()) {
      for (const Json& r : resources) {
        v1::SkillFile* file = out->add_files();
        file->set_uri(SkillText(r, "uri"));
        file->set_digest(SkillText(r, "digest"));
        if (r.is_object() && r.contains("size") && SkillSizeUsable(r["size"])) {
          file->set_size(r["size"].get<uint64_t>());
          file->set_has_size(true);
        }
      }
    }
    JsonObjectToStruct(entry, out->mutable_raw()).IgnoreError();
  }
}

std::vector<v1::SkillIssue> CheckSkillEntry(const Json& entry) {
  std::vector<v1::SkillIssue> issues;
  const std::string uri = SkillText(entry, "uri");
  const Json frontmatter = entry.is_object() && entry.contains("frontmatter")
                               ? entry["frontmatter"]
                               : Json();
  const std::string name = SkillText(frontmatter, "name");
  const std::string description = SkillText(frontmatter, "description");
  const std::string uri_name = SkillNameFromUri(uri);
  if (name.empty()) {
    issues.push_back(SkillIssueOf("error", "missing-name",
                                  "frontmatter.name is missing or empty"));
  } else if (!SkillNameValid(name)) {
    issues.push_back(SkillIssueOf(
        "error", "malformed-name",
        absl::StrCat("frontmatter.name \"", name,
                     "\" is not 1 to 64 lowercase letters, digits and single "
                     "inner hyphens")));
  }
  if (description.empty()) {
    issues.push_back(SkillIssueOf("error", "missing-description",
                                  "frontmatter.description is missing or "
                                  "empty"));
  } else if (SkillCodePoints(description) > kSkillDescriptionMax) {
    issues.push_back(SkillIssueOf(
        "error", "malformed-description",
        absl::StrCat("frontmatter.description has ",
                     SkillCodePoints(description),
                     " characters; at most 1024 are allowed")));
  }
  if (uri_name.empty()) {
    issues.push_back(SkillIssueOf(
        "error", "malformed-uri",
        absl::StrCat("the skill's URI \"", uri,
                     "\" does not end in /SKILL.md inside a named "
                     "directory")));
  } else if (!name.empty() && uri_name != name) {
    issues.push_back(SkillIssueOf(
        "error", "name-path-mismatch",
        absl::StrCat("the URI's directory \"", uri_name,
                     "\" is not frontmatter.name \"", name, "\"")));
  }
  const Json resources =
      entry.is_object() && entry.contains("resources") ? entry["resources"]
                                                       : Json();
  if (resources.is_string() && resources == "dynamic") {
    issues.push_back(SkillIssueOf(
        "warning", "dynamic-resources",
        "resources is \"dynamic\": the server lists no files and no digests, "
        "so nothing can be verified"));
    return issues;
  }
  if (!resources.is_array()) {
    issues.push_back(SkillIssueOf(
        "error", "missing-resources",
        "resources is neither a manifest (an array) nor \"dynamic\""));
    return issues;
  }
  if (resources.size() > kSkillMaxFiles) {
    issues.push_back(SkillIssueOf(
        "warning", "resource-limit-exceeded",
        absl::StrCat("the manifest lists ", resources.size(),
                     " files; hosts need only take 512")));
  }
  const std::string root =
      uri_name.empty() ? "" : uri.substr(0, uri.size() - 8);  // keeps the '/'
  std::set<std::string> seen;
  uint64_t total = 0;
  bool lists_self = false;
  for (const Json& r : resources) {
    const std::string file = SkillText(r, "uri");
    if (file == uri) lists_self = true;
    if (!seen.insert(file).second) {
      issues.push_back(SkillIssueOf("error", "duplicate-resource",
                                    "the manifest lists this URI twice",
                                    file));
    }
    if (!root.empty() && !absl::StartsWith(file, root)) {
      issues.push_back(SkillIssueOf(
          "error", "resource-outside-skill-root",
          absl::StrCat("not inside the skill's directory ", root), file));
    }
    const std::string digest = SkillText(r, "digest");
    if (!r.is_object() || !r.contains("digest")) {
      issues.push_back(SkillIssueOf("error", "missing-digest",
                                    "the manifest gives this file no digest",
                                    file));
    } else if (!SkillDigestWellFormed(digest)) {
      issues.push_back(SkillIssueOf(
          "error", "malformed-digest",
          absl::StrCat("digest \"", r["digest"].is_string() ? digest : "",
                       "\" is not sha256: and 64 lowercase hex digits"),
          file));
    }
    if (!r.is_object() || !r.contains("size")) {
      issues.push_back(SkillIssueOf("error", "missing-size",
                                    "the manifest gives this file no size",
                                    file));
    } else if (!SkillSizeUsable(r["size"])) {
      issues.push_back(SkillIssueOf(
          "error", "malformed-size",
          absl::StrCat("size ", r["size"].dump(),
                       " is not a non-negative whole number of bytes"),
          file));
    } else {
      total += r["size"].get<uint64_t>();
    }
  }
  if (total > kSkillMaxBytes) {
    issues.push_back(SkillIssueOf(
        "warning", "size-limit-exceeded",
        absl::StrCat("the files total ", total,
                     " bytes; hosts need only take 16 MiB")));
  }
  if (!lists_self) {
    issues.push_back(SkillIssueOf(
        "error", "manifest-missing-self",
        absl::StrCat("the manifest does not list the skill's own file ",
                     uri)));
  }
  return issues;
}

std::string SkillDigest(const std::string& bytes) {
  return absl::StrCat("sha256:", absl::BytesToHexString(oauth::Sha256(bytes)));
}

v1::SkillFileCheck CheckSkillFile(const v1::SkillFile& file,
                                  const absl::StatusOr<Json>& read) {
  v1::SkillFileCheck check;
  check.set_uri(file.uri());
  check.set_expected_digest(file.digest());
  check.set_expected_size(file.size());
  check.set_has_expected_size(file.has_size());
  if (!read.ok()) {
    check.set_status("unreadable");
    check.set_reason(
        absl::StrCat("resources/read failed: ", read.status().message()));
    return check;
  }
  const Json& contents = read->is_object() && read->contains("contents")
                             ? (*read)["contents"]
                             : Json();
  const Json* content = nullptr;
  if (contents.is_array()) {
    for (const Json& c : contents) {
      if (SkillText(c, "uri") == file.uri()) content = &c;
    }
    if (content == nullptr && !contents.empty()) content = &contents[0];
  }
  std::string bytes;
  if (content != nullptr && content->is_object() &&
      content->contains("text") && (*content)["text"].is_string()) {
    bytes = (*content)["text"].get<std::string>();
  } else if (content != nullptr && content->is_object() &&
             content->contains("blob") && (*content)["blob"].is_string()) {
    if (!absl::Base64Unescape((*content)["blob"].get<std::string>(),
                              &bytes)) {
      check.set_status("unreadable");
      check.set_reason("the blob the server returned is not base64");
      return check;
    }
  } else {
    check.set_status("unreadable");
    check.set_reason(
        "resources/read returned no text or blob content for this file");
    return check;
  }
  check.set_actual_size(bytes.size());
  check.set_actual_digest(SkillDigest(bytes));
  if (file.has_size() && file.size() != bytes.size()) {
    check.set_status("mismatch");
    check.set_reason(absl::StrCat("the manifest says ", file.size(),
                                  " bytes; the server returned ",
                                  bytes.size()));
    return check;
  }
  if (file.digest().empty()) {
    check.set_status("unverifiable");
    check.set_reason("the manifest gives no digest");
    return check;
  }
  if (!SkillDigestWellFormed(file.digest())) {
    check.set_status("unverifiable");
    check.set_reason("the manifest's digest is not sha256: and 64 hex digits");
    return check;
  }
  if (check.actual_digest() != file.digest()) {
    check.set_status("mismatch");
    check.set_reason("the file's sha256 is not the manifest's digest");
    return check;
  }
  check.set_status("verified");
  return check;
}

void ConcludeSkillVerification(bool require_digests,
                               v1::SkillVerification* verification) {
  uint32_t verified = 0, mismatched = 0, unverifiable = 0, unreadable = 0;
  for (const v1::SkillFileCheck& f : verification->files()) {
    if (f.status() == "verified") ++verified;
    if (f.status() == "mismatch") ++mismatched;
    if (f.status() == "unverifiable") ++unverifiable;
    if (f.status() == "unreadable") ++unreadable;
  }
  verification->set_verified(verified);
  verification->set_mismatched(mismatched);
  verification->set_unverifiable(unverifiable);
  verification->set_unreadable(unreadable);
  bool error = mismatched > 0 || unreadable > 0;
  for (const v1::SkillIssue& issue : verification->issues()) {
    error = error || issue.severity() == "error";
  }
  const bool nothing_to_check =
      unverifiable > 0 || verification->skill().dynamic();
  if (error || (require_digests && nothing_to_check)) {
    verification->set_verdict("failed");
  } else if (nothing_to_check) {
    verification->set_verdict("unverifiable");
  } else {
    verification->set_verdict("verified");
  }
}

}  // namespace inspector::services
