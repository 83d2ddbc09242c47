#!/usr/bin/env node
// inspectord's conformance server: a stdio MCP server that answers what the
// server scenarios of the official conformance suite
// (@modelcontextprotocol/conformance, pinned in tools/npm) call, so that the
// suite can grade inspectord's HTTP front door with this server behind it.
//
//   node tools/conformance-server/server.mjs
//
// Newline-delimited JSON-RPC on stdin/stdout; stderr carries diagnostics
// only. It exits 0 when stdin closes and on SIGTERM/SIGINT.
//
// What it offers (names and texts are the ones the scenarios ask for):
//   tools      test_simple_text, test_image_content, test_audio_content,
//              test_embedded_resource, test_multiple_content_types,
//              test_tool_with_logging (3 log notifications, 50 ms apart),
//              test_tool_with_progress (0, 50, 100 of 100), test_error_handling
//              (isError result), test_sampling, test_elicitation,
//              test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums
//              (these four ask the client), json_schema_2020_12_tool (a 2020-12
//              input schema kept verbatim), test_reconnection (answers after a
//              short pause, long enough for a front door to end the stream),
//              and for the 2026-07-28 scenarios: test_missing_capability (asks
//              to sample), test_streaming_elicitation, test_logging_tool,
//              test_trigger_tool_change and test_trigger_prompt_change (add or
//              remove test_dynamic_tool / test_dynamic_prompt and say so),
//              test_header_param (its argument has an x-mcp-header)
//   resources  test://static-text, test://static-binary, test://watched-resource
//              (subscribable), template test://template/{id}/data
//   prompts    test_simple_prompt, test_prompt_with_arguments (arg1, arg2, with
//              completion), test_prompt_with_embedded_resource, test_prompt_with_image
//   logging    logging/setLevel filters the tools' log notifications
//
// It uses the SDK's low-level `Server` so that every answer, schemas
// included, goes out exactly as written here.
//
//   node tools/conformance-server/server.mjs --modern
//
// speaks MCP 2026-07-28 instead (no initialize: server/discover, _meta on
// every request, subscriptions/listen with list changes and resource
// subscriptions, input_required results), with the
// same tools, resources and prompts (those that ask the client do it with
// input_required results), plus the tools and the prompt that the
// revision's input-required-result scenarios call (test_input_required_*).
//
// The parts: catalog.mjs (the tools, resources and prompts, as the SDK
// server), modern.mjs (the 2026-07-28 mode), media.mjs (shared helpers);
// the SDK is found by ../npm/mcp-sdk.mjs.

import process from 'node:process';

import { sdkRequire } from '../npm/mcp-sdk.mjs';
import { server } from './catalog.mjs';
import { serveModern } from './modern.mjs';

const { StdioServerTransport } =
  sdkRequire('conformance-server', 'CONFORMANCE_NODE_MODULES')('@modelcontextprotocol/sdk/server/stdio.js');

// ---------------------------------------------------------------------------
// Start and stop

const MODERN = process.argv.includes('--modern');

function stop() {
  if (MODERN) process.exit(0);
  server.close().finally(() => process.exit(0));
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);

if (MODERN) {
  serveModern();
  process.stderr.write('conformance-server: serving MCP 2026-07-28 on stdio\n');
} else {
  await server.connect(new StdioServerTransport());
  process.stderr.write('conformance-server: serving on stdio\n');
}
