#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Loopback TCP load that makes the kernel arm, re-arm and cancel TCP timers.

Used by bench/traces/record.sh (scenario "tcp") while perf records the
kernel's timer tracepoints. Everything stays on 127.0.0.1, the number of
sockets is bounded, and the run ends after --duration seconds.

What it runs, all against one threaded server on an ephemeral port:
  short    threads that open a connection, send one request, read the reply
           and close, in a loop with small pauses. Each connection arms the
           retransmit timer (SYN, data), the delayed-ACK timer, and leaves a
           TIME_WAIT socket (the client closes first, so the client side
           holds it; every --server-close-every'th request the server closes
           first instead).
  long     long-lived connections with SO_KEEPALIVE (idle 1 s, interval 1 s)
           that exchange small requests separated by idle gaps of a few ms to
           ~1.5 s: the keepalive timer is re-armed on every exchange and fires
           during the long gaps; the small replies exercise delayed ACKs.
  slow     one connection with a small receive buffer whose reader pauses, so
           the sender meets a zero window and the kernel runs its persist
           (window probe) timer.

Python 3 standard library only. Prints a summary of what it did.
"""

import argparse
import random
import socket
import struct
import sys
import threading
import time

# One request line: b"<n>\n" asks the server for n bytes; b"<n> close\n"
# asks it to reply and then close the connection itself.
MAX_REPLY = 1 << 20


class Stats:
    """Counters shared by the threads (guarded by one lock)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.c = {}

    def add(self, key, n=1):
        with self.lock:
            self.c[key] = self.c.get(key, 0) + n


class Reader:
    """Buffered reads from a socket; a timeout keeps what was read so far."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()

    def _more(self, want):
        chunk = self.sock.recv(want)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def line(self):
        """One b'\\n'-terminated line without its end, or None at EOF."""
        while b"\n" not in self.buf:
            if not self._more(4096):
                return None
        i = self.buf.index(b"\n")
        out = bytes(self.buf[:i])
        del self.buf[: i + 1]
        return out

    def exact(self, n):
        """n bytes, or None at EOF."""
        while len(self.buf) < n:
            if not self._more(min(65536, n - len(self.buf))):
                return None
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out


def serve_conn(conn, stats, stop):
    """One server-side connection: answer request lines until EOF or stop."""
    rd = Reader(conn)
    payload = b"x" * 4096
    try:
        conn.settimeout(1.0)
        while not stop.is_set():
            try:
                line = rd.line()
            except socket.timeout:
                continue
            if line is None:
                break
            parts = line.split()
            if not parts:
                break
            try:
                n = int(parts[0])
            except ValueError:
                break
            n = max(0, min(n, MAX_REPLY))
            conn.sendall(struct.pack("!I", n))
            left = n
            while left > 0:
                k = min(left, len(payload))
                conn.sendall(payload[:k])
                left -= k
            stats.add("server_replies")
            if len(parts) > 1 and parts[1] == b"close":
                stats.add("server_closes_first")
                break
    except OSError:
        stats.add("server_errors")
    finally:
        conn.close()


def server_loop(lsock, stats, stop, max_conns):
    """Accepts connections; at most max_conns are served at once."""
    slots = threading.BoundedSemaphore(max_conns)
    lsock.settimeout(0.2)

    def run(conn):
        try:
            serve_conn(conn, stats, stop)
        finally:
            slots.release()

    while not stop.is_set():
        try:
            conn, _ = lsock.accept()
        except socket.timeout:
            continue
        except OSError:
            break
        if not slots.acquire(timeout=2.0):
            conn.close()
            stats.add("server_refused")
            continue
        stats.add("server_accepts")
        threading.Thread(target=run, args=(conn,), daemon=True).start()


def request(rd, n, close=False):
    """Sends one request on rd's socket and reads its reply; True if whole."""
    rd.sock.sendall(b"%d%s\n" % (n, b" close" if close else b""))
    head = rd.exact(4)
    if head is None:
        return False
    (size,) = struct.unpack("!I", head)
    return rd.exact(size) is not None


def short_client(port, stats, stop, rng, pause_ms, server_close_every):
    """Many short connections: connect, one request, close."""
    i = 0
    while not stop.is_set():
        i += 1
        server_first = server_close_every > 0 and i % server_close_every == 0
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5.0) as s:
                ok = request(Reader(s), rng.choice((16, 200, 1400, 9000)), close=server_first)
                if ok and server_first:
                    s.recv(1)  # wait for the server's FIN, then close
                stats.add("short_requests" if ok else "short_failures")
        except OSError:
            stats.add("short_failures")
        stats.add("short_connections")
        stop.wait(rng.uniform(0, pause_ms) / 1000.0)


def set_keepalive(s, idle_s, intvl_s, count):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, val in (("TCP_KEEPIDLE", idle_s), ("TCP_KEEPINTVL", intvl_s), ("TCP_KEEPCNT", count)):
        opt = getattr(socket, name, None)
        if opt is not None:
            s.setsockopt(socket.IPPROTO_TCP, opt, val)


def long_client(port, stats, stop, rng, keepalive):
    """One long-lived connection: small exchanges separated by idle gaps."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5.0) as s:
            if keepalive:
                set_keepalive(s, 1, 1, 5)
            stats.add("long_connections")
            rd = Reader(s)
            while not stop.is_set():
                ok = request(rd, rng.choice((8, 64, 512)))
                if not ok:
                    stats.add("long_failures")
                    return
                stats.add("long_requests")
                # mostly short gaps (delayed ACKs), sometimes one past the
                # keepalive idle time so that probes are sent
                gap = rng.uniform(0.002, 0.05) if rng.random() < 0.9 else rng.uniform(1.1, 1.6)
                stop.wait(gap)
    except OSError:
        stats.add("long_failures")


def slow_reader(port, stats, stop, rng):
    """A reader with a small receive buffer that pauses: zero window, probes."""
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(5.0)
        s.connect(("127.0.0.1", port))
        with s:
            stats.add("slow_connections")
            while not stop.is_set():
                n = 256 * 1024
                s.sendall(b"%d\n" % n)
                got = 0
                while got < n + 4 and not stop.is_set():
                    chunk = s.recv(2048)
                    if not chunk:
                        return
                    got += len(chunk)
                    stats.add("slow_bytes", len(chunk))
                    if rng.random() < 0.02:
                        stop.wait(rng.uniform(0.2, 0.6))  # let the window close
                if got >= n + 4:
                    stats.add("slow_requests")
    except OSError:
        stats.add("slow_failures")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", "-d", type=float, default=10.0, help="seconds to run (default 10)")
    ap.add_argument("--short", type=int, default=4, help="short-connection client threads (default 4)")
    ap.add_argument("--long", type=int, default=8, help="long-lived connections (default 8)")
    ap.add_argument("--keepalive", type=int, default=4, help="of the long ones, how many set SO_KEEPALIVE (default 4)")
    ap.add_argument("--slow", type=int, default=1, help="slow-reader connections (default 1)")
    ap.add_argument("--pause-ms", type=float, default=10.0, help="max pause between short connections, ms (default 10)")
    ap.add_argument("--server-close-every", type=int, default=5, help="every Nth short request the server closes first (0: never; default 5)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    a = ap.parse_args(argv)
    if a.duration <= 0 or a.short < 0 or a.long < 0 or a.slow < 0 or a.pause_ms < 0:
        ap.error("duration must be > 0 and counts >= 0")
    if a.short + a.long + a.slow > 64:
        ap.error("at most 64 client threads in all (keep the load polite)")
    a.keepalive = max(0, min(a.keepalive, a.long))

    stats = Stats()
    stop = threading.Event()
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(128)
    port = lsock.getsockname()[1]
    # the server must be able to hold every long and slow connection plus
    # the short ones in flight
    server = threading.Thread(target=server_loop, args=(lsock, stats, stop, a.short + a.long + a.slow + 8), daemon=True)
    server.start()

    clients = []
    seed = a.seed
    for _ in range(a.short):
        seed += 1
        clients.append(threading.Thread(target=short_client, args=(port, stats, stop, random.Random(seed), a.pause_ms, a.server_close_every)))
    for i in range(a.long):
        seed += 1
        clients.append(threading.Thread(target=long_client, args=(port, stats, stop, random.Random(seed), i < a.keepalive)))
    for _ in range(a.slow):
        seed += 1
        clients.append(threading.Thread(target=slow_reader, args=(port, stats, stop, random.Random(seed))))

    t0 = time.monotonic()
    for t in clients:
        t.start()
    stop.wait(a.duration)
    stop.set()
    for t in clients:
        t.join(timeout=10.0)
    lsock.close()
    server.join(timeout=5.0)
    elapsed = time.monotonic() - t0

    c = stats.c
    print("tcp-load: %.1f s on 127.0.0.1:%d; %d short, %d long (%d with keepalive), %d slow client threads"
          % (elapsed, port, a.short, a.long, a.keepalive, a.slow))
    for key in sorted(c):
        print("  %-22s %d" % (key, c[key]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
