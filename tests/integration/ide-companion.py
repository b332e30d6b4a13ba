#!/usr/bin/env python3
"""A stand-in for the VS Code IDE companion's MCP server, with its real checks.

Listens on 127.0.0.1 only, answers 403 unless the Host header is
localhost:PORT or 127.0.0.1:PORT, 401 without "Authorization: Bearer TOKEN",
else 200; logs "STATUS HOST PATH" per request to LOG.

Like the real companion, it makes its port-file directory at its start:
os.tmpdir()/gemini/ide, that is $TMPDIR (else /tmp) /gemini/ide, private to
the user (gemini-box never makes it, and shares it with a host-network box
only when it is there and the user's own).

Usage: ide-companion.py TOKEN LOG PORTFILE
Writes the port it listens on to PORTFILE once it listens; runs until killed
or for 120 seconds, whichever comes first.
"""
import http.server
import os
import sys
import threading

token, log_path, port_file = sys.argv[1:4]

parent = os.path.join(os.environ.get("TMPDIR") or "/tmp", "gemini")
for d in (parent, os.path.join(parent, "ide")):
    try:
        os.mkdir(d, 0o700)
    except OSError:
        pass  # there already (or another user's: not the stand-in's to fix)


class Handler(http.server.BaseHTTPRequestHandler):
    def _answer(self):
        port = self.server.server_address[1]
        host = self.headers.get("Host", "")
        if host not in (f"localhost:{port}", f"127.0.0.1:{port}"):
            status = 403
        elif self.headers.get("Authorization") != f"Bearer {token}":
            status = 401
        else:
            status = 200
        with open(log_path, "a") as log:
            log.write(f"{status} {host} {self.path}\n")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
threading.Timer(120, server.shutdown).start()
server.serve_forever()
