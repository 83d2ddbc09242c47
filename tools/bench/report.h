// What the benchmarks print beside their figures: the machine they ran on
// (CPU model, load average) and a bar's verdict. Plain functions, callable
// from any thread.
#ifndef INSPECTOR_TOOLS_BENCH_REPORT_H_
#define INSPECTOR_TOOLS_BENCH_REPORT_H_

#include <string>

namespace inspector::bench {

// `text` up to its first newline.
std::string FirstLineOf(const std::string& text);

// The CPU's model name from /proc/cpuinfo, or "unknown".
std::string CpuModel();

// /proc/loadavg's 1, 5 and 15 minute figures.
std::string LoadAverage();

// "met" or "NOT met".
const char* Verdict(bool met);

}  // namespace inspector::bench

#endif  // INSPECTOR_TOOLS_BENCH_REPORT_H_
