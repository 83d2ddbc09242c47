// Map entries in key order, for code that must print or check a protobuf
// map (whose iteration order is unspecified) deterministically.
// Header-only, thread-safe.
#ifndef INSPECTOR_COMMON_SORTED_H_
#define INSPECTOR_COMMON_SORTED_H_

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace inspector {

// The (key, value) pairs of a string-to-string map, sorted by key.
template <typename Map>
std::vector<std::pair<std::string, std::string>> SortedEntries(const Map& map) {
  std::vector<std::pair<std::string, std::string>> entries(map.begin(),
                                                           map.end());
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace inspector

#endif  // INSPECTOR_COMMON_SORTED_H_
