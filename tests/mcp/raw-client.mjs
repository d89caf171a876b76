#!/usr/bin/env node
// Writes exact bytes to an MCP stdio server and prints what it answers. The
// SDK client cannot send malformed frames (duplicate keys, invalid UTF-8,
// NUL, oversized lines), which is what smuggling tests need; so no SDK here.
//
//   node tests/mcp/raw-client.mjs [INPUT...] [--wait N] [--until TEXT] [--timeout-ms MS] -- COMMAND [ARGS...]
//
// INPUT, written to the child's stdin in order:
//   --line TEXT   TEXT and a newline
//   --hex HEX     these bytes as they are (NUL, invalid UTF-8; add 0a yourself)
//   --file FILE   the file's bytes as they are
// Every line the child writes to stdout is printed as it is. Stops once N
// lines came (--wait) or a line containing TEXT (--until), at the latest
// after --timeout-ms (default 3000); then closes the child's stdin and, if it
// has not exited 1 s later, kills it. Exit 0, or 3 when what --wait or
// --until asked for did not come before the timeout or the child's exit.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

function usage(msg) {
  process.stderr.write(`raw-client.mjs: ${msg}\n` +
    "usage: node raw-client.mjs [--line TEXT|--hex HEX|--file FILE]... [--wait N] [--until TEXT] [--timeout-ms MS] -- COMMAND [ARGS...]\n");
  process.exit(1);
}

const chunks = [];
let wait = 0, until, timeoutMs = 3000;
const argv = process.argv.slice(2);
while (argv.length && argv[0] !== "--") {
  const opt = argv.shift();
  const val = argv.shift();
  if (val === undefined) usage(`${opt} needs a value`);
  if (opt === "--line") chunks.push(Buffer.from(val + "\n"));
  else if (opt === "--hex") {
    if (!/^([0-9a-fA-F]{2})*$/.test(val)) usage(`not hex: ${val}`);
    chunks.push(Buffer.from(val, "hex"));
  } else if (opt === "--file") chunks.push(readFileSync(val));
  else if (opt === "--wait") wait = Number(val);
  else if (opt === "--until") until = Buffer.from(val);
  else if (opt === "--timeout-ms") timeoutMs = Number(val);
  else usage(`unknown option ${opt}`);
}
argv.shift();
if (argv.length === 0) usage("need a COMMAND");
if (!Number.isInteger(wait) || wait < 0 || !(timeoutMs > 0)) usage("bad --wait or --timeout-ms");

const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
child.on("error", (e) => {
  process.stderr.write(`raw-client.mjs: cannot start ${argv[0]}: ${e.message}\n`);
  process.exit(2);
});
// A server that exits early makes our writes fail with EPIPE; that is a
// result to report, not a crash.
child.stdin.on("error", () => {});

let lines = 0, found = until === undefined, pending = Buffer.alloc(0), done = false;
const satisfied = () => lines >= wait && found;
child.stdout.on("data", (data) => {
  // Bytes, not strings: a line of invalid UTF-8 must come out unchanged.
  pending = Buffer.concat([pending, data]);
  let nl;
  while (!done && (nl = pending.indexOf(0x0a)) >= 0) {
    const line = pending.subarray(0, nl + 1);
    pending = pending.subarray(nl + 1);
    process.stdout.write(line);
    lines++;
    if (!found && line.includes(until)) found = true;
    if ((wait > 0 || until !== undefined) && satisfied()) finish(0);
  }
});
child.on("exit", (code, signal) => {
  process.stderr.write(`raw-client.mjs: server exited (${signal ?? code})\n`);
  if (!done) {
    if (pending.length) process.stdout.write(Buffer.concat([pending, Buffer.from("\n")]));
    finish(satisfied() ? 0 : 3);
  }
});

const timer = setTimeout(() => finish(satisfied() ? 0 : 3), timeoutMs);

function finish(rc) {
  if (done) return;
  done = true;
  clearTimeout(timer);
  if (rc !== 0) process.stderr.write(`raw-client.mjs: ${lines} lines${found ? "" : ", none with the --until text,"} before the timeout or exit\n`);
  // What the spec asks of a client: close stdin, then signals.
  child.stdin.end();
  const kill = setTimeout(() => child.kill("SIGKILL"), 1000);
  if (child.exitCode !== null || child.signalCode !== null) process.exit(rc);
  child.once("exit", () => { clearTimeout(kill); process.exit(rc); });
}

for (const c of chunks) child.stdin.write(c);
