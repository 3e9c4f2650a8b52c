#!/usr/bin/env python3
"""A streamable-HTTP MCP server behind OAuth, for openturn's MCP OAuth tests.

Standard library only. One loopback port serves both roles the MCP authorization spec gives:

- the protected resource: `POST /mcp` answers MCP requests (through `mcp_server.answer`) only
  with `Authorization: Bearer <a valid access token>`; without one, or with an expired one, it
  answers 401 with a `WWW-Authenticate` naming its resource metadata;
- its metadata, `/.well-known/oauth-protected-resource`, naming the authorization server
  `<origin>/auth`, whose RFC 8414 metadata is at `/.well-known/oauth-authorization-server/auth`;
- the authorization server: `POST /register` (dynamic registration, public clients),
  `GET /auth/authorize` (no user to ask: it checks the PKCE and redirect parameters and
  redirects at once to the redirect URI with a code and the state), `POST /auth/token`
  (`authorization_code` with the PKCE verifier checked against the S256 challenge, and
  `refresh_token`).

The first access token lives OAUTH_FIRST_EXPIRES_IN seconds (default 3600; 0 makes it expired
when issued), refreshed ones an hour. Arguments: PORT_FILE (the port is written there) and
LOG_FILE: one line per event, naming tokens by their number (`access-1`), never by value.
Every token issued is written, by value, to LOG_FILE + ".tokens" so the test can look for it
where it must not be. Stops by itself after two minutes.
"""

import base64
import hashlib
import json
import os
import secrets
import sys
import time
import urllib.parse
import http.server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_server  # noqa: E402

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]
FIRST_LIFETIME = int(os.environ.get("OAUTH_FIRST_EXPIRES_IN", "3600"))
clients = {}  # client_id -> redirect_uris
codes = {}  # code -> (client_id, redirect_uri, challenge, resource)
access = {}  # token -> (label, expires_at)
refresh = {}  # token -> client_id
counter = {"access": 0, "mcp": 1000}


def log(line):
    with open(LOG_FILE, "a", encoding="utf-8") as out:
        out.write(line + "\n")


def remember(secret):
    with open(LOG_FILE + ".tokens", "a", encoding="utf-8") as out:
        out.write(secret + "\n")


def next_id():
    counter["mcp"] += 1
    return counter["mcp"]


def issue(client_id, lifetime):
    counter["access"] += 1
    label = f"access-{counter['access']}"
    token, refresh_token = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    access[token] = (label, time.time() + lifetime)
    refresh[refresh_token] = client_id
    remember(token)
    remember(refresh_token)
    log(f"issued {label} for {lifetime}s")
    return {"access_token": token, "token_type": "Bearer", "expires_in": lifetime,
            "refresh_token": refresh_token}


class Handler(http.server.BaseHTTPRequestHandler):
    def base(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def reply(self, status, body=None, headers=()):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body is not None:
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def unauthorized(self):
        metadata = f"{self.base()}/.well-known/oauth-protected-resource"
        self.reply(401, {"error": "unauthorized"},
                   [("WWW-Authenticate", f'Bearer resource_metadata="{metadata}"')])

    def bearer_label(self):
        header = self.headers.get("authorization", "")
        if not header.startswith("Bearer "):
            return None
        label, expires_at = access.get(header[len("Bearer "):], (None, 0))
        if label is None:
            log("mcp bearer: unknown token")
            return None
        if time.time() >= expires_at:
            log(f"mcp bearer: {label} expired")
            return None
        return label

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/.well-known/oauth-protected-resource":
            return self.reply(200, {"resource": f"{self.base()}/mcp",
                                    "authorization_servers": [f"{self.base()}/auth"],
                                    "scopes_supported": ["tools"]})
        if url.path == "/.well-known/oauth-authorization-server/auth":
            return self.reply(200, {"issuer": f"{self.base()}/auth",
                                    "authorization_endpoint": f"{self.base()}/auth/authorize",
                                    "token_endpoint": f"{self.base()}/auth/token",
                                    "registration_endpoint": f"{self.base()}/register",
                                    "code_challenge_methods_supported": ["S256"],
                                    "response_types_supported": ["code"]})
        if url.path == "/auth/authorize":
            client_id = query.get("client_id")
            redirect_uri = query.get("redirect_uri", "")
            checks = [query.get("response_type") == "code",
                      redirect_uri in clients.get(client_id, []),
                      redirect_uri.startswith("http://127.0.0.1:"),
                      query.get("code_challenge_method") == "S256",
                      len(query.get("code_challenge", "")) == 43,
                      query.get("resource") == f"{self.base()}/mcp",
                      query.get("scope") == "tools",
                      bool(query.get("state"))]
            if not all(checks):
                log(f"authorize refused: {checks}")
                return self.reply(400, {"error": "invalid_request"})
            code = secrets.token_urlsafe(16)
            remember(code)
            codes[code] = (client_id, redirect_uri, query["code_challenge"], query["resource"])
            log("authorize: redirected with a code")
            target = redirect_uri + "?" + urllib.parse.urlencode(
                {"code": code, "state": query["state"]})
            return self.reply(302, None, [("Location", target)])
        if url.path == "/mcp":
            if self.bearer_label() is None:
                return self.unauthorized()
            return self.reply(405)
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        if url.path == "/register":
            asked = json.loads(body)
            client_id = "client-" + secrets.token_hex(4)
            clients[client_id] = asked.get("redirect_uris", [])
            log(f"registered a client, auth method {asked.get('token_endpoint_auth_method')}")
            return self.reply(201, {"client_id": client_id, **asked})
        if url.path == "/auth/token":
            form = dict(urllib.parse.parse_qsl(body.decode()))
            grant = form.get("grant_type")
            log(f"token request: {grant}")
            if grant == "authorization_code":
                found = codes.pop(form.get("code", ""), None)
                verifier = form.get("code_verifier", "").encode()
                challenge = base64.urlsafe_b64encode(
                    hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
                if (found is None or found[0] != form.get("client_id")
                        or found[1] != form.get("redirect_uri") or found[2] != challenge
                        or found[3] != form.get("resource")):
                    log("token refused: bad code exchange")
                    return self.reply(400, {"error": "invalid_grant"})
                return self.reply(200, issue(found[0], FIRST_LIFETIME))
            if grant == "refresh_token":
                client_id = refresh.pop(form.get("refresh_token", ""), None)
                if client_id is None or client_id != form.get("client_id"):
                    log("token refused: bad refresh token")
                    return self.reply(400, {"error": "invalid_grant"})
                return self.reply(200, issue(client_id, 3600))
            return self.reply(400, {"error": "unsupported_grant_type"})
        if url.path == "/mcp":
            label = self.bearer_label()
            if label is None:
                return self.unauthorized()
            message = json.loads(body)
            log(f"mcp {message.get('method')} with {label}")
            answer = mcp_server.answer(message, next_id)
            if answer is None:
                return self.reply(202)
            return self.reply(200, answer)
        self.reply(404, {"error": "not found"})

    do_DELETE = do_GET

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(PORT_FILE + ".tmp", "w", encoding="utf-8") as out:
        out.write(str(server.server_address[1]))
    os.rename(PORT_FILE + ".tmp", PORT_FILE)
    server.timeout = 1
    deadline = time.time() + 120
    while time.time() < deadline:
        server.handle_request()


if __name__ == "__main__":
    main()
