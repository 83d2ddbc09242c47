# The gateway's HTTP server answering 200 "ok": a closed-loop client against
# a raw TCP echo baseline, then wrk (if installed). Run
# build/tools/bench/http_server_bench [--seconds N] [--serve PORT].
add_executable(http_server_bench http_server_bench.cc)
inspector_target_defaults(http_server_bench)
target_link_libraries(http_server_bench PRIVATE
    inspector_gateway_http_server Threads::Threads)
