// The human rendering of a connection doctor's diagnosis (`inspectorctl
// doctor`): one line per check (status, name, time, what was found), then
// its details and fix indented under what was found, then a summary line.
//
//   PASS  config       0.1 ms  stdio: node (2 arguments)
//   FAIL  executable   0.2 ms  nod was not found in PATH
//                              PATH=/usr/local/bin:/usr/bin:/bin
//                              fix: install it, give its absolute path ...
//   SKIP  spawn             -  not run: the executable was not found
//
//   1 failed, 1 passed, 3 skipped in 12 ms
//
// Text from the server is sanitized for the terminal. Pure; thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_DOCTOR_VIEWS_H_
#define INSPECTOR_CLIENTS_CLI_DOCTOR_VIEWS_H_

#include <string>

#include "inspector/v1/doctor.pb.h"

namespace inspector::cli {

struct DoctorViewOptions {
  // ANSI colors: PASS green, WARN yellow, FAIL red, SKIP dim.
  bool color = false;
};

std::string DoctorReport(const v1::Diagnosis& diagnosis,
                         const DoctorViewOptions& options);

// "2 failed, 1 warning, 5 passed, 1 skipped in 1.2 s".
std::string DoctorSummary(const v1::Diagnosis& diagnosis);

// The names of the failed checks, comma-separated ("tcp, tls").
std::string FailedChecks(const v1::Diagnosis& diagnosis);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_DOCTOR_VIEWS_H_
