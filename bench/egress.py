#!/usr/bin/env python3
"""The allowlist mode's cost, for make bench: bytes and connections through
the box's relay (gemini-box-init --relay) and the host's egress proxy
(gemini-box --box-egress-proxy), against the same transfers made directly
on loopback. Both run on the host, without podman: the loopback of a box's
network namespace is the same kernel path.

Usage: egress.py GEMINI_BOX GEMINI_BOX_INIT [MEGABYTES [CONNECTIONS [ROUNDS]]]
Prints table rows (markdown): throughput in MB/s (median of ROUNDS
interleaved transfers of MEGABYTES each way) and the time to open a
connection and get a small reply (median of CONNECTIONS).
"""
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

gb, init = sys.argv[1], sys.argv[2]
megabytes = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
connections = int(sys.argv[4]) if len(sys.argv) > 4 else 300
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 3
CHUNK = 64 << 20


def serve(listener, source):
    """Answers each request head with its first word's size in bytes."""
    fd = os.open(source, os.O_RDONLY)
    while True:
        conn, _ = listener.accept()
        head = b""
        while b"\r\n\r\n" not in head:
            part = conn.recv(4096)
            if not part:
                break
            head += part
        want = int(head.split(b" ", 1)[0] or b"0")
        left = want
        while left > 0:
            sent = os.sendfile(conn.fileno(), fd, (want - left) % CHUNK, min(left, CHUNK - (want - left) % CHUNK))
            left -= sent
        conn.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def fetch(size, port, relay=None):
    """Seconds to connect, ask for size bytes and read them all."""
    buf = bytearray(1 << 20)
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", relay or port))
    if relay:
        s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % port)
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1)
        if not head.startswith(b"HTTP/1.1 200"):
            raise SystemExit("egress bench: the proxy refused: %r" % head)
    s.sendall(b"%d x\r\n\r\n" % size)
    got = 0
    while True:
        n = s.recv_into(buf)
        if n == 0:
            break
        got += n
    s.close()
    if got != size:
        raise SystemExit("egress bench: got %d of %d bytes" % (got, size))
    return time.perf_counter() - t0


def main():
    work = tempfile.mkdtemp(prefix="gb-egress-bench.")
    state = os.path.join(work, "state")
    os.mkdir(state, 0o700)
    os.mkdir(os.path.join(state, "egress"), 0o700)
    source = os.path.join(work, "source")
    with open(source, "wb") as f:
        f.truncate(CHUNK)  # sparse: reads come from the page cache
    lock = os.path.join(state, "lock")
    os.close(os.open(lock, os.O_RDONLY | os.O_CREAT, 0o600))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    server = multiprocessing.Process(target=serve, args=(listener, source), daemon=True)
    server.start()
    with open(os.path.join(state, "egress.allow"), "w") as f:
        f.write("127.0.0.1:%d\n" % port)
    os.chmod(os.path.join(state, "egress.allow"), 0o600)
    proxy = subprocess.Popen([gb, "--box-egress-proxy", state], env={})
    sock = os.path.join(state, "egress", "proxy.sock")
    relay_port = free_port()
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    # the init holds the box's lock, as in a box: the proxy takes
    # connections from the lock's holder alone
    relay = subprocess.Popen([init, "--lock", lock, "--relay", str(relay_port), sock])
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", relay_port)).close()
            break
        except OSError:
            time.sleep(0.01)
    try:
        size = megabytes << 20
        # one of each first, not counted: the page cache, the CPU's clock
        fetch(size, port)
        fetch(size, port, relay_port)
        direct, proxied = [], []
        for _ in range(rounds):
            # each transfer starts on a quiet machine: the one before it has
            # ended (its process exited, its sockets closed)
            time.sleep(0.5)
            direct.append(size / fetch(size, port) / 1e6)
            time.sleep(0.5)
            proxied.append(size / fetch(size, port, relay_port) / 1e6)
        d, p = statistics.median(direct), statistics.median(proxied)
        print("| egress throughput, %d MB (MB/s) | %.0f | direct loopback | %.0f | %.2f | >= 0.90 |"
              % (megabytes, p, d, p / d))
        direct, proxied = [], []
        for _ in range(connections):
            direct.append(fetch(1, port) * 1000)
            proxied.append(fetch(1, port, relay_port) * 1000)
        d, p = statistics.median(direct), statistics.median(proxied)
        print("| egress connection (ms) | %.2f | direct loopback | %.2f | +%.2f ms | <= +1 ms |"
              % (p, d, p - d))
    finally:
        relay.terminate()
        proxy.terminate()
        server.terminate()
        relay.wait()
        proxy.wait()
        subprocess.run(["rm", "-rf", work])


main()
