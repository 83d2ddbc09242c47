// Resolving the functions of a library loaded with dlopen (libcurl, and
// libcrypto for private_key_jwt, are loaded on first use, not at start).
#ifndef INSPECTOR_COMMON_DL_SYMBOL_H_
#define INSPECTOR_COMMON_DL_SYMBOL_H_

#include <dlfcn.h>

#include <string>

namespace inspector {

// Sets *out to the function `name` of `library`. When it is missing,
// appends its name to *missing (", "-separated) and returns false.
template <typename Fn>
bool ResolveSymbol(void* library, const char* name, Fn* out,
                   std::string* missing) {
  void* symbol = dlsym(library, name);
  if (symbol == nullptr) {
    if (!missing->empty()) missing->append(", ");
    missing->append(name);
    return false;
  }
  *out = reinterpret_cast<Fn>(symbol);
  return true;
}

}  // namespace inspector

#endif  // INSPECTOR_COMMON_DL_SYMBOL_H_
