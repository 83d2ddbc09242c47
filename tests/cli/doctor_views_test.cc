#include "clients/cli/doctor_views.h"

#include <gtest/gtest.h>

namespace inspector::cli {
namespace doctor_views_test {

v1::Diagnosis Sample() {
  v1::Diagnosis diagnosis;
  diagnosis.set_server_name("remote");
  diagnosis.set_transport("streamableHttp");
  diagnosis.set_duration_ms(1234);
  v1::DoctorCheck* tcp = diagnosis.add_checks();
  tcp->set_name("tcp");
  tcp->set_status(v1::CHECK_PASS);
  tcp->set_found("connected to 127.0.0.1:443 in 2.1 ms");
  tcp->set_duration_ms(2.1);
  v1::DoctorCheck* tls = diagnosis.add_checks();
  tls->set_name("tls");
  tls->set_status(v1::CHECK_FAIL);
  tls->set_found("certificate verification failed:\nself-signed\x1b[2J");
  tls->set_fix("add its CA");
  tls->add_details("issuer: me");
  tls->set_duration_ms(44);
  v1::DoctorCheck* http = diagnosis.add_checks();
  http->set_name("http");
  http->set_status(v1::CHECK_SKIP);
  http->set_found("not run: the TLS connection failed");
  diagnosis.set_overall(v1::CHECK_FAIL);
  return diagnosis;
}

TEST(DoctorViewsTest, OneLinePerCheckWithDetailsAndFixUnderneath) {
  EXPECT_EQ(DoctorReport(Sample(), {}),
            "remote (streamableHttp)\n"
            "PASS  tcp            2.1 ms  connected to 127.0.0.1:443 in 2.1 "
            "ms\n"
            "FAIL  tls             44 ms  certificate verification failed: "
            "self-signed\\x1b[2J\n"
            "                             issuer: me\n"
            "                             fix: add its CA\n"
            "SKIP  http                -  not run: the TLS connection failed\n"
            "\n"
            "1 failed, 1 passed, 1 skipped in 1.2 s\n");
  EXPECT_EQ(FailedChecks(Sample()), "tls");
}

TEST(DoctorViewsTest, ColorsTheStatusWords) {
  DoctorViewOptions options;
  options.color = true;
  std::string colored = DoctorReport(Sample(), options);
  EXPECT_NE(colored.find("\033[32mPASS\033[0m"), std::string::npos);
  EXPECT_NE(colored.find("\033[1;31mFAIL\033[0m"), std::string::npos);
}

}  // namespace doctor_views_test
}  // namespace inspector::cli
