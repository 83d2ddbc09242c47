// A minimal OTLP/HTTP receiver for tests: listens on 127.0.0.1 (port 0:
// the system picks one), decodes every POST /v1/traces and /v1/metrics body
// with the protobuf code generated from the official OTLP protos (shipped in
// npm's @opentelemetry/otlp-transformer, pinned in tools/npm), and prints
// one JSON line per span and one per metric of each export on stdout:
//
//   {"span": {"traceId", "spanId", "parentSpanId", "name", "kind",
//             "attributes": {key: value}, "events": [{name, attributes}],
//             "status": {code, message}, "resource": {key: value}}}
//   {"metric": {"name", "unit", "description", "type" (sum, gauge or
//               histogram), "temporality", "monotonic", "points":
//               [{"attributes", "value"} or {"attributes", "count", "sum",
//               "bucketCounts", "bounds"}], "scope", "resource"}}
//
// It first prints "otlp-receiver listening http://127.0.0.1:PORT". With
// --status N it answers every export with HTTP N (a collector that is
// failing) instead of 200. With --quiet (a sink for benchmarks) it prints
// only the number of exports and spans, when it exits. With --discard (a
// sink that costs its machine next to nothing) it does not decode either:
// it answers every export at once and prints the number of exports and
// bytes when it exits, so that a benchmark on the same cores measures the
// exporter rather than this receiver's decoding. Exits on SIGTERM or when
// stdin closes.
//
//   node receiver.mjs [--status N] [--quiet | --discard]
import { createRequire } from 'node:module';
import http from 'node:http';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const nodeModules = path.resolve(process.env.FIXTURE_NODE_MODULES ||
  path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'npm', 'node_modules'));
const require = createRequire(path.join(path.dirname(nodeModules), 'package.json'));
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportTraceServiceRequest =
  root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const ExportTraceServiceResponse =
  root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
const ExportMetricsServiceRequest =
  root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
const ExportMetricsServiceResponse =
  root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;

const statusAt = process.argv.indexOf('--status');
const status = statusAt >= 0 ? Number(process.argv[statusAt + 1]) : 200;
const discard = process.argv.includes('--discard');
const quiet = discard || process.argv.includes('--quiet');
let exports = 0;
let bodyBytes = 0;
let spanCount = 0;

const hex = (bytes) => Buffer.from(bytes || []).toString('hex');

function anyValue(value) {
  if (value == null) return null;
  if (value.stringValue != null) return value.stringValue;
  if (value.boolValue != null) return value.boolValue;
  if (value.intValue != null) return Number(value.intValue);
  if (value.doubleValue != null) return value.doubleValue;
  if (value.arrayValue != null) return (value.arrayValue.values || []).map(anyValue);
  return null;
}

function attributes(list) {
  const out = {};
  for (const kv of list || []) out[kv.key] = anyValue(kv.value);
  return out;
}

function numberValue(point) {
  if (point.asDouble != null) return point.asDouble;
  if (point.asInt != null) return Number(point.asInt);
  return null;
}

// One line per metric of a decoded ExportMetricsServiceRequest.
function printMetrics(decoded) {
  for (const resourceMetrics of decoded.resourceMetrics || []) {
    const resource = attributes(resourceMetrics.resource?.attributes);
    for (const scopeMetrics of resourceMetrics.scopeMetrics || []) {
      for (const metric of scopeMetrics.metrics || []) {
        const out = {
          name: metric.name,
          unit: metric.unit || '',
          description: metric.description || '',
          scope: scopeMetrics.scope?.name || '',
          resource,
        };
        if (metric.histogram) {
          out.type = 'histogram';
          out.temporality = metric.histogram.aggregationTemporality;
          out.points = (metric.histogram.dataPoints || []).map((p) => ({
            attributes: attributes(p.attributes),
            count: Number(p.count),
            sum: p.sum,
            bucketCounts: (p.bucketCounts || []).map(Number),
            bounds: p.explicitBounds || [],
          }));
        } else {
          const data = metric.sum || metric.gauge;
          out.type = metric.sum ? 'sum' : 'gauge';
          if (metric.sum) {
            out.temporality = metric.sum.aggregationTemporality;
            out.monotonic = Boolean(metric.sum.isMonotonic);
          }
          out.points = (data?.dataPoints || []).map((p) => ({
            attributes: attributes(p.attributes), value: numberValue(p),
          }));
        }
        process.stdout.write(JSON.stringify({ metric: out }) + '\n');
      }
    }
  }
}

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const metrics = request.url === '/v1/metrics';
    if (request.method !== 'POST' || (request.url !== '/v1/traces' && !metrics)) {
      response.writeHead(404).end();
      return;
    }
    if (request.headers['content-type'] !== 'application/x-protobuf') {
      process.stdout.write(JSON.stringify({ error: `content-type ${request.headers['content-type']}` }) + '\n');
      response.writeHead(415).end();
      return;
    }
    if (discard) {
      exports += 1;
      for (const chunk of chunks) bodyBytes += chunk.length;
      // An empty Export*ServiceResponse is zero bytes of protobuf.
      response.writeHead(status, { 'Content-Type': 'application/x-protobuf' }).end();
      return;
    }
    let decoded;
    try {
      decoded = (metrics ? ExportMetricsServiceRequest : ExportTraceServiceRequest)
        .decode(Buffer.concat(chunks));
    } catch (error) {
      process.stdout.write(JSON.stringify({ error: `undecodable: ${error.message}` }) + '\n');
      response.writeHead(400).end();
      return;
    }
    exports += 1;
    if (!quiet) {
      process.stdout.write(JSON.stringify({ export: { status, signal: metrics ? 'metrics' : 'traces' } }) + '\n');
    }
    if (metrics) {
      if (!quiet && status === 200) printMetrics(decoded);
      const body = ExportMetricsServiceResponse.encode(ExportMetricsServiceResponse.create({})).finish();
      response.writeHead(status, { 'Content-Type': 'application/x-protobuf' }).end(Buffer.from(body));
      return;
    }
    if (quiet) {
      for (const resourceSpans of decoded.resourceSpans || []) {
        for (const scopeSpans of resourceSpans.scopeSpans || []) spanCount += (scopeSpans.spans || []).length;
      }
    } else if (status === 200) {
      for (const resourceSpans of decoded.resourceSpans || []) {
        const resource = attributes(resourceSpans.resource?.attributes);
        for (const scopeSpans of resourceSpans.scopeSpans || []) {
          for (const span of scopeSpans.spans || []) {
            process.stdout.write(JSON.stringify({
              span: {
                traceId: hex(span.traceId),
                spanId: hex(span.spanId),
                parentSpanId: hex(span.parentSpanId),
                name: span.name,
                kind: span.kind,
                startTimeUnixNano: String(span.startTimeUnixNano),
                endTimeUnixNano: String(span.endTimeUnixNano),
                attributes: attributes(span.attributes),
                events: (span.events || []).map((e) => ({ name: e.name, attributes: attributes(e.attributes) })),
                status: { code: span.status?.code || 0, message: span.status?.message || '' },
                scope: scopeSpans.scope?.name || '',
                resource,
              },
            }) + '\n');
          }
        }
      }
    }
    const body = ExportTraceServiceResponse.encode(ExportTraceServiceResponse.create({})).finish();
    response.writeHead(status, { 'Content-Type': 'application/x-protobuf' }).end(Buffer.from(body));
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`otlp-receiver listening http://127.0.0.1:${server.address().port}\n`);
});
const finish = () => {
  if (discard) {
    process.stdout.write(JSON.stringify({ exports, bytes: bodyBytes }) + '\n');
  } else if (quiet) {
    process.stdout.write(JSON.stringify({ exports, spans: spanCount }) + '\n');
  }
  process.exit(0);
};
process.on('SIGTERM', finish);
process.on('SIGINT', finish);
process.stdin.on('end', finish);
process.stdin.resume();
