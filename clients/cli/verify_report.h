// Renderings of `inspectorctl sessions verify` (SessionService's
// VerifySession): the readable report, one block per answer that differs
// with each difference's JSON Pointer, recorded and actual values; and a
// JUnit XML report for CI systems, one testcase per recorded request.
// Pure functions, thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_VERIFY_REPORT_H_
#define INSPECTOR_CLIENTS_CLI_VERIFY_REPORT_H_

#include <string>

#include "inspector/v1/sessions.pb.h"

namespace inspector::cli {

// What was verified, for the reports' headings.
struct VerifySubject {
  std::string recording;  // a session id or a file name
  std::string server;     // as the user named it ("" for the recorded one)
};

// "#3 tools/call: differs" and its differences
// ("  /result/structuredContent/sum: recorded 5, actual absent"), then
// "PASS: ..." or "FAIL: N of M answers differ ...". `all` lists the
// answers that match too.
std::string VerifyText(const v1::VerifySessionResponse& response,
                       const VerifySubject& subject, bool all);

// <testsuites><testsuite name=... tests=N failures=F errors=0> with one
// <testcase name="#1 initialize" classname="..."> per pair, a <failure>
// in each that differs (message: the first difference; text: all).
std::string VerifyJunit(const v1::VerifySessionResponse& response,
                        const VerifySubject& subject);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_VERIFY_REPORT_H_
