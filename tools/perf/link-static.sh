#!/usr/bin/env bash
# Linker launcher for inspectord (CMake's CXX_LINKER_LAUNCHER): runs the
# link command CMake made, with every C++ dependency that has a static
# archive (gRPC without its TLS half, protobuf, Abseil, SQLite, c-ares,
# re2, upb) taken from the archive instead of the shared library.
#
# Why: loading some forty shared libraries costs an idle daemon several MiB
# of resident memory (each library's touched pages, the kernel mapping
# neighbouring pages in with them, and relocated data), and the daemon is
# meant to sit idle for hours. libstdc++ and libgcc are linked statically
# too (-static-libstdc++ -static-libgcc); libc, libm and zlib stay shared;
# libcurl is not linked at all (it is loaded on first use). A library
# without a static archive stays shared, so the link still works, only
# bigger.
#
# Usage (from CMake): link-static.sh <compiler> <arguments...>
set -euo pipefail

keep_shared='^lib(c|m|stdc\+\+|gcc_s|z|dl|pthread|rt)$'
command=()
archives=()
shared=()
for arg in "$@"; do
  case "$arg" in
    -lre2)
      for dir in /usr/lib/x86_64-linux-gnu /usr/lib /usr/local/lib \
                 /usr/lib/"$(uname -m)"-linux-gnu; do
        if [[ -f $dir/libre2.a ]]; then
          archives+=("$dir/libre2.a")
          continue 2
        fi
      done
      shared+=("$arg")
      ;;
    *.a)
      archives+=("$arg")
      ;;
    /*.so | /*.so.[0-9]*)
      dir=${arg%/*}
      name=${arg##*/}
      name=${name%%.so*}
      case $name in
        libgrpc++) name=libgrpc++_unsecure ;;
        libgrpc) name=libgrpc_unsecure ;;
      esac
      if [[ ! $name =~ $keep_shared && -f $dir/$name.a ]]; then
        archives+=("$dir/$name.a")
      else
        shared+=("$arg")
      fi
      ;;
    *)
      command+=("$arg")
      ;;
  esac
done

# One group, so that the archives may refer to each other in any order;
# then the shared libraries, which only what the archives leave undefined
# pulls in (--as-needed).
exec "${command[@]}" -static-libstdc++ -static-libgcc -Wl,--gc-sections -Wl,--as-needed \
  -Wl,--start-group "${archives[@]}" -Wl,--end-group "${shared[@]}" -ldl
