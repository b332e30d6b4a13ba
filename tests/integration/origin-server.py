#!/usr/bin/env python3
"""A stand-in for a server on the internet, for the allowlist mode's tests.

Listens on 127.0.0.1 only (the tests list that address explicitly), answers
every GET with "origin NAME PATH" and logs "METHOD PATH" per request to LOG,
so a test can tell whether a request reached it at all.

Usage: origin-server.py NAME LOG PORTFILE
Writes the port it listens on to PORTFILE once it listens; runs until killed
or for 300 seconds, whichever comes first.
"""
import http.server
import os
import sys
import threading

name, log_path, port_file = sys.argv[1:4]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(log_path, "a") as log:
            log.write(f"GET {self.path}\n")
        body = f"origin {name} {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
tmp = port_file + ".tmp"
with open(tmp, "w") as f:
    f.write(str(server.server_address[1]))
os.rename(tmp, port_file)
threading.Timer(300, server.shutdown).start()
server.serve_forever()
