#!/usr/bin/python3
# A stand-in for the three agents' model APIs, for tests/agents: enough of
# Anthropic's Messages API (Claude Code), OpenAI's Responses API (Codex) and
# the Gemini API (Gemini CLI) for one scripted turn. Python's standard
# library only; it listens on loopback and nothing else.
#
#   standin-api.py --host 127.0.0.2 --port-file FILE --log FILE --command-file FILE --marker M
#                  [--mcp-file FILE] [--dump]
#
# It picks a free port, writes it to --port-file once it listens, and then
# answers until killed. A conversation's first request that offers the
# agent's shell tool gets a call of that tool running the command in
# --command-file (read on every such request, so a test can change it
# between runs); the request that carries the tool's result gets final text
# "FINAL-<marker>" followed by that result. A request offering no shell tool
# (a title, a classifier, a quota check) gets plain text. Each request is
# one JSON line in --log: api, path, model, the tool names offered, whether
# a tool result was present, and the result's text. Unknown paths get 404
# and are logged too.
#
# --mcp-file (read on every request; empty: off) holds {"tool": T, "calls":
# [ARGS, ...]}: a request offering a tool named T or ending in "_T" or ".T"
# (the gateway's tool as the agent names it: Claude "mcp__glove__T", first
# loaded by its ToolSearch as it defers MCP tools; Codex T in its namespace
# "mcp__glove", logged "mcp__glove.T"; Gemini "mcp_glove_T") gets a call of
# it with the next ARGS, one per round, before any shell tool; once the
# conversation holds a result for each, the final text carries all of them,
# in order, joined by " | ". With "shell": true (the Responses API only) a
# call of the shell tool running the --command-file's command comes after
# the last call, in the same conversation. The line logs the name as
# "mcp_tool" (Claude's deferred names as "deferred") and every tool result
# so far as "results".
#
# --dump adds each request's body to its line, which is how the shapes
# above were learnt from the agents.
import argparse
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG_LOCK = threading.Lock()
ARGS = None
MAX_BODY = 64 << 20


def log(entry):
    with LOG_LOCK:
        with open(ARGS.log, "a") as f:
            f.write(json.dumps(entry, sort_keys=True) + "\n")


def command():
    with open(ARGS.command_file) as f:
        return f.read().strip()


def final_text(result):
    return "FINAL-%s tool said: %s" % (ARGS.marker, result.strip()[:2000])


def mcp_script():
    """The --mcp-file's {"tool", "calls"}, or None when it is off."""
    if not ARGS.mcp_file:
        return None
    with open(ARGS.mcp_file) as f:
        text = f.read().strip()
    return json.loads(text) if text else None


def mcp_step(names, results):
    """(name, ARGS) of the gateway's tool to call next, (None, None) when the
    request does not offer it or --mcp-file is off, (name, None) when every
    call has its result."""
    script = mcp_script()
    if not script:
        return None, None
    for name in names:
        if name and (name == script["tool"] or name.endswith(("_" + script["tool"], "." + script["tool"]))):
            calls = script["calls"]
            return name, (calls[len(results)] if len(results) < len(calls) else None)
    return None, None


def mcp_entry(entry, name, results):
    if name:
        entry.update(mcp_tool=name, results=results)


def text_of(content):
    """The text of a tool result in any of the three APIs' shapes."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(c) for c in content)
    if isinstance(content, dict):
        for k in ("text", "output", "content", "response", "result"):
            if k in content:
                return text_of(content[k])
        return json.dumps(content)
    return str(content)


# --- Anthropic Messages -------------------------------------------------------

def anthropic(req):
    tools = [t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)]
    result = None
    msgs = req.get("messages") or []
    # the last user message's tool_result, if any: this is the follow-up
    if msgs and msgs[-1].get("role") == "user" and isinstance(msgs[-1].get("content"), list):
        for block in msgs[-1]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                result = text_of(block.get("content"))
    # the results of the gateway's tool's calls (their ids are ours)
    results = [text_of(b.get("content")) for m in msgs if m.get("role") == "user" and isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
               and str(b.get("tool_use_id", "")).startswith("toolu_glove_mcp_")]
    entry = {"api": "anthropic", "model": req.get("model"), "tools": tools,
             "tool_result": result is not None, "result": result, "stream": bool(req.get("stream"))}
    # Claude defers MCP tools: only their names, in a system reminder, until
    # its ToolSearch loads them, as a model does ("select:NAME")
    deferred = sorted(set(re.findall(r"mcp__[A-Za-z0-9_-]+", json.dumps(msgs)))) if "ToolSearch" in tools else []
    if deferred:
        entry.update(deferred=deferred)
    mcp, arguments = mcp_step(tools, results)
    if not mcp:
        mcp, arguments = mcp_step(deferred, results)
        if mcp and arguments is not None:
            mcp, arguments = "ToolSearch", {"query": "select:" + mcp}
    mcp_entry(entry, mcp, results)
    if mcp == "ToolSearch":
        blocks = [{"type": "tool_use", "id": "toolu_glove_search_%d" % len(results), "name": mcp, "input": arguments}]
        stop = "tool_use"
    elif mcp and arguments is not None:
        blocks = [{"type": "tool_use", "id": "toolu_glove_mcp_%d" % len(results), "name": mcp, "input": arguments}]
        stop = "tool_use"
    elif mcp:
        blocks = [{"type": "text", "text": final_text(" | ".join(results))}]
        stop = "end_turn"
    elif result is not None:
        blocks = [{"type": "text", "text": final_text(result)}]
        stop = "end_turn"
    elif "Bash" in tools:
        blocks = [{"type": "tool_use", "id": "toolu_glove_1", "name": "Bash",
                   "input": {"command": command(), "description": "Run the test command"}}]
        stop = "tool_use"
    else:
        blocks = [{"type": "text", "text": "standin-%s" % ARGS.marker}]
        stop = "end_turn"
    entry["answer"] = blocks[0]["type"]
    msg = {"id": "msg_glove_1", "type": "message", "role": "assistant", "model": req.get("model") or "standin",
           "content": blocks, "stop_reason": stop, "stop_sequence": None,
           "usage": {"input_tokens": 10, "output_tokens": 10, "cache_creation_input_tokens": 0,
                     "cache_read_input_tokens": 0}}
    if not req.get("stream"):
        return entry, "application/json", [json.dumps(msg)]
    events = []
    start = dict(msg, content=[], stop_reason=None, usage=dict(msg["usage"], output_tokens=1))
    events.append(("message_start", {"type": "message_start", "message": start}))
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": dict(b, input={})}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(b["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 10}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return entry, "text/event-stream", ["event: %s\ndata: %s\n\n" % (n, json.dumps(d)) for n, d in events]


# --- OpenAI Responses -------------------------------------------------------------

def shell_call(tools):
    """The arguments for the shell tool the request offers, by its schema."""
    for t in tools:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "local_shell":
            return "local_shell", None
        name = t.get("name") or (t.get("function") or {}).get("name")
        if name not in ("shell", "shell_command", "exec_command", "container.exec"):
            continue
        props = (t.get("parameters") or (t.get("function") or {}).get("parameters") or {}).get("properties", {})
        if "cmd" in props:
            return name, {"cmd": command()}
        if props.get("command", {}).get("type") == "array":
            return name, {"command": ["bash", "-lc", command()]}
        return name, {"command": command()}
    return None, None


def openai(req):
    tools = [t.get("name") or t.get("type") for t in req.get("tools") or [] if isinstance(t, dict)]
    # Codex offers an MCP server's tools in a namespace of their own
    tools += ["%s.%s" % (t.get("name"), u.get("name")) for t in req.get("tools") or []
              if isinstance(t, dict) and t.get("type") == "namespace" for u in t.get("tools") or [] if isinstance(u, dict)]
    result = None
    results = []
    for item in req.get("input") or []:
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "local_shell_call_output",
                                                           "custom_tool_call_output"):
            result = text_of(item.get("output"))
            results.append(result)
    entry = {"api": "openai", "model": req.get("model"), "tools": tools,
             "tool_result": result is not None, "result": result, "stream": bool(req.get("stream"))}
    mcp, mcp_args = mcp_step(tools, results)
    mcp_entry(entry, mcp, results)
    name, arguments = shell_call(req.get("tools") or [])
    if mcp and mcp_args is None and name and (mcp_script() or {}).get("shell") and \
            len(results) == len(mcp_script()["calls"]):
        # then the shell tool, in the same conversation
        item = {"type": "function_call", "id": "fc_glove_mcp_%d" % len(results), "call_id": "call_glove_mcp_%d" % len(results),
                "name": name, "arguments": json.dumps(arguments), "status": "completed"}
    elif mcp and mcp_args is not None:
        item = {"type": "function_call", "id": "fc_glove_mcp_%d" % len(results), "call_id": "call_glove_mcp_%d" % len(results),
                "name": mcp, "arguments": json.dumps(mcp_args), "status": "completed"}
        if "." in mcp:
            item.update(namespace=mcp.split(".", 1)[0], name=mcp.split(".", 1)[1])
    elif mcp:
        item = {"type": "message", "role": "assistant", "id": "msg_glove_2", "status": "completed",
                "content": [{"type": "output_text", "text": final_text(" | ".join(results)), "annotations": []}]}
    elif result is not None:
        item = {"type": "message", "role": "assistant", "id": "msg_glove_2", "status": "completed",
                "content": [{"type": "output_text", "text": final_text(result), "annotations": []}]}
    elif name == "local_shell":
        item = {"type": "local_shell_call", "id": "lsh_glove_1", "call_id": "call_glove_1", "status": "completed",
                "action": {"type": "exec", "command": ["bash", "-lc", command()], "env": {}}}
    elif name:
        item = {"type": "function_call", "id": "fc_glove_1", "call_id": "call_glove_1", "name": name,
                "arguments": json.dumps(arguments), "status": "completed"}
    else:
        item = {"type": "message", "role": "assistant", "id": "msg_glove_1", "status": "completed",
                "content": [{"type": "output_text", "text": "standin-%s" % ARGS.marker, "annotations": []}]}
    entry["answer"] = item["type"]
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 20}
    resp = {"id": "resp_glove_1", "object": "response", "created_at": 0, "status": "completed",
            "model": req.get("model") or "standin", "output": [item], "usage": usage}
    if not req.get("stream"):
        return entry, "application/json", [json.dumps(resp)]
    events = [("response.created", {"type": "response.created", "response": dict(resp, status="in_progress", output=[])}),
              ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item})]
    if item["type"] == "message":
        events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                       "output_index": 0, "content_index": 0,
                                                       "delta": item["content"][0]["text"]}))
    events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}))
    events.append(("response.completed", {"type": "response.completed", "response": resp}))
    return entry, "text/event-stream", ["event: %s\ndata: %s\n\n" % (n, json.dumps(d)) for n, d in events]


# --- Gemini -------------------------------------------------------------------------

def from_schema(schema):
    """A small value that a JSON schema (Gemini's upper-case types too) accepts."""
    t = str(schema.get("type", "object")).lower()
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if t == "object":
        return {k: from_schema(v) for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return 10
    if t == "boolean":
        return False
    return "standin"


def gemini(req, path):
    tools = []
    for t in req.get("tools") or []:
        for fd in (t or {}).get("functionDeclarations") or []:
            tools.append(fd.get("name"))
    result = None
    contents = req.get("contents") or []
    if contents:
        for part in contents[-1].get("parts") or []:
            if isinstance(part, dict) and "functionResponse" in part:
                result = text_of(part["functionResponse"].get("response"))
    results = [text_of(p["functionResponse"].get("response")) for c in contents for p in c.get("parts") or []
               if isinstance(p, dict) and "functionResponse" in p]
    model = path.split("/models/", 1)[-1].split(":", 1)[0]
    entry = {"api": "gemini", "model": model, "tools": tools, "tool_result": result is not None,
             "result": result, "stream": ":streamGenerateContent" in path}
    mcp, arguments = mcp_step(tools, results)
    mcp_entry(entry, mcp, results)
    if mcp and arguments is not None:
        parts = [{"functionCall": {"name": mcp, "args": arguments}}]
    elif mcp:
        parts = [{"text": final_text(" | ".join(results))}]
    elif result is not None:
        parts = [{"text": final_text(result)}]
    elif "run_shell_command" in tools:
        parts = [{"functionCall": {"name": "run_shell_command",
                                   "args": {"command": command(), "description": "Run the test command"}}}]
    else:
        # Gemini's own helpers (its model router, say) ask for JSON by schema;
        # an answer they cannot parse makes them fall back to their default.
        gc = req.get("generationConfig") or {}
        if gc.get("responseMimeType") == "application/json":
            parts = [{"text": json.dumps(from_schema(gc.get("responseJsonSchema") or gc.get("responseSchema") or {}))}]
        else:
            parts = [{"text": "standin-%s" % ARGS.marker}]
    entry["answer"] = "functionCall" if "functionCall" in parts[0] else "text"
    body = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
            "modelVersion": model}
    if entry["stream"]:
        return entry, "text/event-stream", ["data: %s\r\n\r\n" % json.dumps(body)]
    return entry, "application/json", [json.dumps(body)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, ctype, chunks):
        data = "".join(chunks).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path.endswith("/models"):
            log({"api": "any", "method": "GET", "path": self.path})
            # Codex's and OpenAI's shape and Gemini's, in one
            return self.reply(200, "application/json", [json.dumps({"object": "list", "data": [], "models": []})])
        log({"api": "unknown", "method": "GET", "path": self.path})
        self.reply(404, "application/json", [json.dumps({"error": {"message": "not in the stand-in"}})])

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            return self.reply(413, "text/plain", ["too large"])
        raw = self.rfile.read(n) if n else b""
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?", 1)[0]
        try:
            if path.endswith("/messages/count_tokens"):
                log({"api": "anthropic", "method": "POST", "path": self.path, "count_tokens": True})
                return self.reply(200, "application/json", [json.dumps({"input_tokens": 10})])
            if path.endswith(":countTokens"):
                log({"api": "gemini", "method": "POST", "path": self.path, "count_tokens": True})
                return self.reply(200, "application/json", [json.dumps({"totalTokens": 10})])
            if path.endswith("/v1/messages"):
                entry, ctype, chunks = anthropic(req)
            elif path.endswith("/responses"):
                entry, ctype, chunks = openai(req)
            elif ":generateContent" in path or ":streamGenerateContent" in path:
                entry, ctype, chunks = gemini(req, path)
            else:
                log({"api": "unknown", "method": "POST", "path": self.path})
                return self.reply(404, "application/json", [json.dumps({"error": {"message": "not in the stand-in"}})])
        except Exception as e:  # a request of a shape not foreseen: logged, not a hang
            log({"api": "error", "method": "POST", "path": self.path, "error": repr(e)})
            return self.reply(500, "application/json", [json.dumps({"error": {"message": repr(e)}})])
        entry.update(method="POST", path=self.path)
        if ARGS.dump:
            entry["body"] = req
        log(entry)
        self.reply(200, ctype, chunks)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.2")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--command-file", required=True)
    ap.add_argument("--marker", required=True)
    ap.add_argument("--mcp-file", help="the gateway's tool to call and its calls' arguments (JSON)")
    ap.add_argument("--dump", action="store_true", help="log each request's body too")
    ARGS = ap.parse_args()
    if not ARGS.host.startswith("127."):
        sys.exit("standin-api: loopback addresses only")
    srv = ThreadingHTTPServer((ARGS.host, 0), Handler)
    srv.daemon_threads = True
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    # whole or not at all: the test polls for the file
    os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
