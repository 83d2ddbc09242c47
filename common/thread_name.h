// Names the calling thread (as `ps -T`, `top -H`, perf and
// /proc/PID/task/TID/comm show it), so that a profile or a per-thread
// count says which of the daemon's threads did the work. Linux keeps 15
// bytes; longer names are cut.
#ifndef INSPECTOR_COMMON_THREAD_NAME_H_
#define INSPECTOR_COMMON_THREAD_NAME_H_

#include <pthread.h>

#include <string>

namespace inspector {

inline void NameThisThread(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace inspector

#endif  // INSPECTOR_COMMON_THREAD_NAME_H_
