#include "tools/bench/proc_counts.h"

#include <dirent.h>

#include <fstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace inspector::bench {

std::map<std::string, ThreadCounts> PerThread(pid_t pid) {
  std::map<std::string, ThreadCounts> all;
  if (pid <= 0) return all;
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return all;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string task = absl::StrCat(tasks, "/", entry->d_name);
    ThreadCounts counts;
    std::ifstream comm(task + "/comm");
    std::getline(comm, counts.name);
    std::ifstream schedstat(task + "/schedstat");
    schedstat >> counts.cpu_ns;
    std::ifstream status(task + "/status");
    std::string line;
    while (std::getline(status, line)) {
      int64_t value = 0;
      absl::string_view view(line);
      if ((absl::ConsumePrefix(&view, "voluntary_ctxt_switches:") ||
           absl::ConsumePrefix(&view, "nonvoluntary_ctxt_switches:")) &&
          absl::SimpleAtoi(absl::StripAsciiWhitespace(view), &value)) {
        counts.switches += value;
      }
    }
    all[entry->d_name] = counts;
  }
  ::closedir(dir);
  return all;
}

ProcessCounts Totals(const std::map<std::string, ThreadCounts>& threads) {
  ProcessCounts totals;
  if (threads.empty()) return totals;
  totals.switches = 0;
  totals.cpu_ns = 0;
  for (const auto& [tid, counts] : threads) {
    totals.switches += counts.switches;
    totals.cpu_ns += counts.cpu_ns;
  }
  return totals;
}

int64_t ChildrenCpuNs(pid_t pid) {
  if (pid <= 0) return -1;
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return -1;
  int64_t sum = 0;
  bool known = false;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream children(
        absl::StrCat(tasks, "/", entry->d_name, "/children"));
    if (!children) continue;
    known = true;
    pid_t child = 0;
    while (children >> child) {
      const ProcessCounts counts = Totals(PerThread(child));
      if (counts.cpu_ns > 0) sum += counts.cpu_ns;
    }
  }
  ::closedir(dir);
  return known ? sum : -1;
}

void AddThreadDelta(const std::map<std::string, ThreadCounts>& before,
                    const std::map<std::string, ThreadCounts>& after,
                    ThreadBreakdown* sums) {
  for (const auto& [tid, now] : after) {
    auto it = before.find(tid);
    const int64_t switches =
        now.switches - (it != before.end() ? it->second.switches : 0);
    const int64_t ns =
        now.cpu_ns - (it != before.end() ? it->second.cpu_ns : 0);
    if (switches <= 0 && ns <= 0) continue;
    auto& sum = (*sums)[now.name];
    sum.first += static_cast<double>(switches);
    sum.second += static_cast<double>(ns);
  }
}

absl::StatusOr<double> MemoryMiB(pid_t pid, const std::string& field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  const std::string prefix = field + ":";
  while (std::getline(in, line)) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    absl::string_view value(line);
    value.remove_prefix(prefix.size());
    value = absl::StripAsciiWhitespace(value);
    absl::ConsumeSuffix(&value, "kB");
    value = absl::StripAsciiWhitespace(value);
    int64_t kib = 0;
    if (!absl::SimpleAtoi(value, &kib)) break;
    return static_cast<double>(kib) / 1024.0;
  }
  return absl::NotFoundError(
      absl::StrCat("no ", field, " in /proc/", pid, "/status"));
}

absl::StatusOr<Rss> ReadRss(pid_t pid) {
  Rss rss;
  for (auto [field, value] : {std::make_pair("VmRSS", &rss.total),
                              std::make_pair("RssAnon", &rss.anonymous),
                              std::make_pair("RssFile", &rss.file)}) {
    absl::StatusOr<double> mib = MemoryMiB(pid, field);
    if (!mib.ok()) return mib.status();
    *value = *mib;
  }
  return rss;
}

}  // namespace inspector::bench
