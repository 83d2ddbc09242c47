#!/usr/bin/env bash
# Sets everything up (tools/setup.sh), then runs inspectord in the
# foreground: gRPC on 127.0.0.1:50051, the REST + SSE API on
# 127.0.0.1:3000, the database ./inspector.db. Extra arguments go to
# inspectord (see `inspectord --help`; a later --http wins). Ctrl-C stops it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
"$ROOT/tools/setup.sh"
exec "$BUILD_DIR/server/inspectord" --http 127.0.0.1:3000 "$@"
