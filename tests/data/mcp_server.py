#!/usr/bin/env python3
"""A tiny MCP server over stdio for openturn's end-to-end tests.

Standard library only, so `cargo test` needs nothing beyond python3. It speaks newline-delimited
JSON-RPC 2.0 (the MCP stdio transport) and offers a handful of tools whose behaviour the tests lean on:

- `echo`     returns its `text` argument as text content (and as structured content);
- `add`      returns `a + b` as text;
- `slow`     sleeps `seconds` before answering (for the tool timeout);
- `progress` sends two `notifications/progress` (0.2 s apart) before answering, when the
  caller gave a token;
- `fail`     answers with `isError: true`;
- `ask`      sends an `elicitation/create` request to the client and returns its answer;
- `die`      exits the server without answering (a server that dies mid-thread).

It also lists one resource and one resource template. Modes (first argument):

- `exit-now`  exits with status 3 before reading anything (a server that dies at start-up);
- `sleep-start SECONDS`  waits before answering `initialize` (a slow server);
- `http PORT_FILE`  serves streamable HTTP on a loopback port, written to PORT_FILE; every
  request's `Authorization` header is logged (see MCP_TEST_LOG);
- anything else / nothing: serve normally.

When MCP_TEST_IGNORE_EOF is set, the server does not exit when its stdin closes (it sleeps a
minute), so only a kill ends it: a test of shutdown then proves the client killed it. When
MCP_TEST_PID_DIR is set, the server writes an empty file named after its pid there, so a
test can check that the server is gone once the daemon is. Every line the server reads is appended to the file named by MCP_TEST_LOG, when set, so tests can
check what the client sent. The value of MCP_TEST_SECRET, when set, is echoed by the `env` tool so a
test can prove env values reach the child (and nowhere else).
"""

import json
import os
import sys
import time

TOOLS = [
    {
        "name": "echo",
        "title": "Echo",
        "description": "Echo the given text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to echo."}},
            "required": ["text"],
        },
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "slow",
        "description": "Sleep for the given number of seconds, then answer.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "progress",
        "description": "Report progress twice, then answer.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "fail",
        "description": "Always answers with an error result.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "ask",
        "description": "Ask the user a question through elicitation.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "die",
        "description": "Exit the server at once, without answering.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "env",
        "description": "Report whether MCP_TEST_SECRET reached the server.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]

RESOURCES = [
    {"uri": "test://greeting", "name": "greeting", "mimeType": "text/plain", "description": "A greeting."}
]
TEMPLATES = [{"uriTemplate": "test://item/{id}", "name": "item", "mimeType": "text/plain"}]


def log_line(line):
    path = os.environ.get("MCP_TEST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(line.rstrip("\n") + "\n")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


# Messages read while a tool waited for its elicitation answer: served after it, in order. (A
# single-threaded server must not drop a call that arrived meanwhile: the client may issue
# several calls at once.)
DEFERRED = []


def read_message():
    if DEFERRED:
        return DEFERRED.pop(0)
    return read_line()


def read_line():
    line = sys.stdin.readline()
    if not line:
        return None
    log_line(line)
    return json.loads(line)


def text_result(text, is_error=False):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def call_tool(params, next_id):
    name = params.get("name")
    args = params.get("arguments") or {}
    meta = params.get("_meta") or {}
    if name == "echo":
        result = text_result(str(args.get("text", "")))
        result["structuredContent"] = {"echoed": args.get("text", "")}
        return result
    if name == "add":
        return text_result(str(int(args.get("a", 0)) + int(args.get("b", 0))))
    if name == "slow":
        time.sleep(float(args.get("seconds", 5)))
        return text_result("finally")
    if name == "progress":
        token = meta.get("progressToken")
        if token is not None:
            for step in (1, 2):
                send({
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": step, "total": 2, "message": f"step {step}"},
                })
                # Work between reports, as a real server's would: progress is about a call
                # still running, so it comes well before the result.
                time.sleep(0.2)
        return text_result("progressed")
    if name == "fail":
        return text_result("the tool failed on purpose", is_error=True)
    if name == "ask":
        request_id = next_id()
        send({
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "elicitation/create",
            "params": {
                "message": "Pick a colour",
                "requestedSchema": {"type": "object", "properties": {"colour": {"type": "string"}}},
            },
        })
        while True:
            answer = read_line()
            if answer is None:
                sys.exit(0)
            if answer.get("id") == request_id and "method" not in answer:
                return text_result(json.dumps(answer.get("result", answer.get("error"))))
            DEFERRED.append(answer)
    if name == "die":
        os._exit(0)
    if name == "env":
        present = os.environ.get("MCP_TEST_SECRET") is not None
        return text_result("secret present" if present else "secret absent")
    return None


def answer(message, next_id, start_delay=0.0):
    """The response to one request (`None` for a notification)."""
    method = message.get("method")
    request_id = message.get("id")
    if request_id is None:
        return None  # notifications (initialized, cancelled) need no answer
    params = message.get("params") or {}

    def error(code, text):
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}

    if method == "initialize":
        time.sleep(start_delay)
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}, "resources": {}},
            "serverInfo": {"name": "openturn-test-server", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = call_tool(params, next_id)
        if result is None:
            return error(-32602, f"unknown tool {params.get('name')}")
    elif method == "resources/list":
        result = {"resources": RESOURCES}
    elif method == "resources/templates/list":
        result = {"resourceTemplates": TEMPLATES}
    elif method == "resources/read":
        uri = params.get("uri")
        result = {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"contents of {uri}"}]}
    elif method == "ping":
        result = {}
    else:
        return error(-32601, f"method not found: {method}")
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def serve_http(port_file, next_id):
    """Streamable HTTP, the plain-JSON subset: each POSTed request is answered in the response
    body; notifications get 202; there is no server-to-client stream (GET answers 405)."""
    import http.server

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            log_line("authorization: " + self.headers.get("authorization", "(none)"))
            log_line("x-editor-key: " + self.headers.get("x-editor-key", "(none)"))
            log_line(body.decode("utf-8", "replace"))
            reply = answer(json.loads(body), next_id)
            if reply is None:
                self.send_response(202)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.send_response(405)
            self.send_header("content-length", "0")
            self.end_headers()

        do_DELETE = do_GET

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w", encoding="utf-8") as out:
        out.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    # Stops by itself: a test that forgets it leaves nothing running for long.
    server.timeout = 1
    deadline = time.time() + 120
    while time.time() < deadline:
        server.handle_request()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "serve"
    pid_dir = os.environ.get("MCP_TEST_PID_DIR")
    if pid_dir:
        open(os.path.join(pid_dir, str(os.getpid())), "w").close()
    if mode == "exit-now":
        sys.stderr.write("mcp test server: exiting at once as asked\n")
        sys.exit(3)
    start_delay = float(sys.argv[2]) if mode == "sleep-start" and len(sys.argv) > 2 else 0.0
    counter = [1000]

    def next_id():
        counter[0] += 1
        return counter[0]

    if mode == "http":
        serve_http(sys.argv[2], next_id)
        return
    while True:
        message = read_message()
        if message is None:
            if os.environ.get("MCP_TEST_IGNORE_EOF"):
                time.sleep(60)
            return
        reply = answer(message, next_id, start_delay)
        if reply is not None:
            send(reply)


if __name__ == "__main__":
    main()
