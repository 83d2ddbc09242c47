#!/usr/bin/env bash
# Sets everything up (tools/setup.sh), then runs inspectord in the
# foreground on 127.0.0.1:50051 with the database ./inspector.db. Extra
# arguments go to inspectord (see `inspectord --help`). Ctrl-C stops it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
"$ROOT/tools/setup.sh"
exec "$BUILD_DIR/server/inspectord" "$@"
