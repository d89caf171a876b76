#!/usr/bin/env node
// A scriptable MCP client built on the official SDK, so that what Glove's
// gateway is tested against is what real agents use (tests/mcp/README.md).
//
//   node tests/mcp/client.mjs [--protocol-version V] --json SCRIPT -- COMMAND [ARGS...]
//
// SCRIPT is a file or inline JSON: one step or an array of steps. Each step
// prints one JSON object on stdout. Exit 0 when every step ran (calls that
// returned errors included), 1 on a usage or script error, 2 when the
// connection failed or closed before the script ended.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError, ResultSchema } from "@modelcontextprotocol/sdk/types.js";

function usage(msg) {
  process.stderr.write(`client.mjs: ${msg}\n` +
    "usage: node client.mjs [--protocol-version V] --json SCRIPT -- COMMAND [ARGS...]\n");
  process.exit(1);
}

let script, protocolVersion;
const argv = process.argv.slice(2);
while (argv.length && argv[0] !== "--") {
  const opt = argv.shift();
  if (opt === "--json") script = argv.shift();
  else if (opt === "--protocol-version") protocolVersion = argv.shift();
  else usage(`unknown option ${opt}`);
}
argv.shift();
if (script === undefined || argv.length === 0) usage("need --json SCRIPT and a COMMAND");

let steps;
try {
  const text = /^\s*[[{]/.test(script) ? script : readFileSync(script, "utf8");
  steps = JSON.parse(text);
} catch (e) {
  usage(`cannot read script: ${e.message}`);
}
if (!Array.isArray(steps)) steps = [steps];

const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

// The SDK's McpError message carries a "MCP error N: " prefix; tests compare
// the peer's own message, so it is taken off.
function errorOf(e) {
  if (e instanceof McpError) {
    const o = { code: e.code, message: e.message.replace(/^MCP error -?\d+: /, "") };
    if (e.data !== undefined) o.data = e.data;
    return o;
  }
  return { code: null, message: String(e?.message ?? e) };
}

// The SDK passes only a handful of variables to the child by default; the
// peers need theirs (MEMORY_FILE_PATH, and later the gateway's own).
const transport = new StdioClientTransport({
  command: argv[0],
  args: argv.slice(1),
  env: { ...process.env },
  stderr: "inherit",
});

// Progress is collected from the wire, not from the SDK's onprogress: the
// SDK runs notification handlers a microtask after it settles responses, so
// a last progress notification that arrives with the result is lost there.
const progressByToken = new Map();
const strayProgress = []; // tokens this client never sent: a misrouting gateway
let lastToken;
const send = transport.send.bind(transport);
transport.send = (msg, opts) => {
  // The SDK always offers its newest protocol version; the gateway must also
  // negotiate older ones, so a test can make the client offer another.
  if (msg.method === "initialize" && protocolVersion !== undefined)
    msg = { ...msg, params: { ...msg.params, protocolVersion } };
  if (msg.method === "tools/call") {
    lastToken = msg.params?._meta?.progressToken;
    if (lastToken !== undefined) progressByToken.set(lastToken, []);
  }
  return send(msg, opts);
};

let closed = false;
const client = new Client({ name: "glove-test-client", version: "0" }, { capabilities: {} });
client.onclose = () => { closed = true; };

try {
  await client.connect(transport);
} catch (e) {
  out({ op: "connect", error: errorOf(e) });
  process.exit(2);
}
const deliver = transport.onmessage;
transport.onmessage = (msg, extra) => {
  if (msg.method === "notifications/progress") {
    const { progressToken, ...p } = msg.params ?? {};
    const list = progressByToken.get(progressToken);
    if (list) list.push(p);
    else strayProgress.push(msg.params);
  }
  deliver(msg, extra);
};

async function call(step, signal) {
  const res = { op: step.op, tool: step.tool };
  const opts = { signal };
  if (step.timeout_ms !== undefined) opts.timeout = step.timeout_ms;
  // Only so that the SDK asks for progress (a progressToken in _meta).
  if (step.progress) opts.onprogress = () => {};
  lastToken = undefined;
  const t0 = performance.now();
  try {
    res.result = await client.callTool({ name: step.tool, arguments: step.arguments ?? {} },
      undefined, opts);
  } catch (e) {
    res.error = errorOf(e);
  }
  res.ms = Math.round(performance.now() - t0);
  if (step.progress) res.progress = progressByToken.get(lastToken) ?? [];
  progressByToken.delete(lastToken);
  if (strayProgress.length) res.stray_progress = strayProgress.splice(0);
  return res;
}

const ops = {
  async info() {
    return { op: "info", server: client.getServerVersion(),
      capabilities: client.getServerCapabilities(), instructions: client.getInstructions() };
  },
  async list(step) {
    const tools = [];
    const seen = new Set();
    let cursor, pages = 0;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      pages++;
      tools.push(...page.tools);
      cursor = page.nextCursor;
      // A server that repeats a cursor would loop forever.
      if (cursor !== undefined && seen.has(cursor)) throw new Error(`repeated cursor ${cursor}`);
      seen.add(cursor);
    } while (cursor !== undefined);
    return { op: "list", pages, tools: step.full ? tools : tools.map((t) => t.name) };
  },
  call: (step) => call(step),
  async "cancel-after"(step) {
    // Aborting the signal makes the SDK send notifications/cancelled.
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort("cancelled by script"), step.ms);
    const res = await call(step, ac.signal);
    clearTimeout(timer);
    res.cancelled = ac.signal.aborted;
    return res;
  },
  // Any other method (ping, resources/list, ...), result unchecked.
  async request(step) {
    try {
      const result = await client.request({ method: step.method, params: step.params }, ResultSchema,
        step.timeout_ms === undefined ? {} : { timeout: step.timeout_ms });
      return { op: "request", method: step.method, result };
    } catch (e) {
      return { op: "request", method: step.method, error: errorOf(e) };
    }
  },
  async sleep(step) {
    await new Promise((r) => setTimeout(r, step.ms));
    return { op: "sleep", ms: step.ms };
  },
};

for (const step of steps) {
  const fn = ops[step?.op];
  if (!fn) usage(`unknown step ${JSON.stringify(step)}`);
  let res;
  try {
    res = await fn(step);
  } catch (e) {
    res = { op: step.op, error: errorOf(e) };
  }
  out(res);
  if (closed) {
    process.stderr.write("client.mjs: the server closed the connection\n");
    process.exit(2);
  }
}
await client.close();
