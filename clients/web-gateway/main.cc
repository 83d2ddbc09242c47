// inspector-gateway: the REST + SSE bridge to inspectord, standalone.
// Flags live here only; they become GatewayOptions. inspectord can host the
// same gateway itself (inspectord --http ADDR).
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "gateway/gateway.h"
#include "common/files.h"
#include "common/message_limits.h"
#include "common/service_process.h"
#include "common/version.h"

int main(int argc, char** argv) {
  inspector::gateway::GatewayOptions options;
  options.http.listen = "127.0.0.1:3000";
  std::string target = "127.0.0.1:50051";
  std::string descriptor_file;
  std::string ready_file;
  std::vector<std::string> cors_origins;
  CLI::App app{
      "inspector-gateway: the inspector's REST API and live event stream for\n"
      "browsers and scripts. Every endpoint comes from the google.api.http\n"
      "rules of the inspector.v1 gRPC API and is served by calling inspectord.\n"
      "Send the session token as 'Authorization: Bearer TOKEN' or\n"
      "'X-Session-Token: TOKEN' (GET /health needs none)."};
  app.set_version_flag("--version", inspector::Version());
  app.add_option("--target", target, "inspectord's gRPC address")
      ->capture_default_str();
  app.add_option("--listen", options.http.listen,
                 "HTTP address: host:port or [v6]:port; port 0 picks a free "
                 "one")
      ->capture_default_str();
  app.add_option("--cors-origin", cors_origins,
                 "browser origin allowed to call the API, e.g. "
                 "http://localhost:5173 (repeatable; replaces the defaults: "
                 "http://localhost:5173, http://localhost:3000 and their "
                 "127.0.0.1 forms)");
  app.add_option("--allowed-host", options.allowed_hosts,
                 "extra host name accepted in the Host header besides "
                 "localhost, 127.0.0.1 and ::1 (repeatable)");
  app.add_option("--descriptor-set", descriptor_file,
                 "FileDescriptorSet to take the routes from instead of the "
                 "compiled-in one")
      ->check(CLI::ExistingFile);
  app.add_option("--ready-file", ready_file,
                 "write the bound host:port here once serving");
  size_t max_body_mib = options.http.max_body_bytes >> 20;
  app.add_option("--max-body-mib", max_body_mib,
                 "largest request body accepted, in MiB (413 beyond); at "
                 "most 64, inspectord's largest message")
      ->check(CLI::Range(size_t{1}, inspector::kMaxForwardedMessageBytes >> 20))
      ->capture_default_str();
  app.add_flag("--dangerously-expose-to-network",
               options.allow_network_exposure,
               "allow a non-loopback --listen address");
  app.footer(
      "Examples:\n"
      "  inspector-gateway                        # 127.0.0.1:3000 -> 127.0.0.1:50051\n"
      "  curl -H \"X-Session-Token: $(cat ~/.local/state/inspector/token)\" \\\n"
      "       http://127.0.0.1:3000/config\n"
      "  curl -N -H \"Authorization: Bearer $TOKEN\" http://127.0.0.1:3000/api/events");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!cors_origins.empty()) options.cors_origins = cors_origins;
  options.http.max_body_bytes = max_body_mib << 20;
  if (!descriptor_file.empty()) {
    // An unreadable or empty file would silently fall back to the built-in
    // descriptor set.
    std::ifstream in(descriptor_file, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    options.descriptor_set = bytes.str();
    if (!in || options.descriptor_set.empty()) {
      std::cerr << "inspector-gateway: --descriptor-set " << descriptor_file
                << ": cannot read it, or it is empty\n";
      return 1;
    }
  }

  // Stop signals are blocked in every thread; one thread waits for them.
  sigset_t stop_signals = inspector::PrepareServiceProcess();

  std::string host = options.http.listen.substr(0, options.http.listen.rfind(':'));
  auto channel = grpc::CreateCustomChannel(
      target, grpc::InsecureChannelCredentials(),
      inspector::gateway::GatewayChannelArguments());
  auto gateway = inspector::gateway::Gateway::Start(options, channel);
  if (!gateway.ok()) {
    std::cerr << "inspector-gateway: " << gateway.status().message() << "\n";
    return 1;
  }
  std::string address = host + ":" + std::to_string((*gateway)->port());
  // The ready file is written before the serving line so that whoever
  // waits for the line finds the file complete.
  if (!ready_file.empty()) {
    absl::Status written =
        inspector::WriteFileAtomically(ready_file, address + "\n");
    if (!written.ok()) {
      std::cerr << "inspector-gateway: " << written.message() << "\n";
      (*gateway)->Shutdown();
      return 1;
    }
  }
  std::cerr << "inspector-gateway " << inspector::Version()
            << " serving REST on " << address << " ("
            << (*gateway)->route_count() << " routes, calling " << target << ")"
            << std::endl;
  std::cerr << "inspector-gateway: web UI at http://" << address
            << "/ (sign in with the link `inspectorctl ui --url http://"
            << address << "` prints)" << std::endl;
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::cerr << "inspector-gateway: received " << strsignal(signal_number)
            << ", shutting down" << std::endl;
  (*gateway)->Shutdown();
  return 0;
}
