#!/usr/bin/env python3
"""Load on `tack serve`, on loopback, bounded and self-stopping.

usage: python3 scripts/serve-load.py TACK_BINARY [--seconds 30] [--sse 50] [--rate 500]

Starts a server on a fresh SQLite store, queues a run that keeps producing events for longer
than the load lasts (two local hosts, one-second commands, one task each), and while it runs holds
SSE clients on its events stream and reads its tasks endpoint at a fixed rate from a pool of
keep-alive connections. Prints each client kind's counts, errors and the tasks endpoint's
latency (p50, p99, max), and exits 1 on any error. Everything it starts is stopped at the end.
"""

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

PLAYBOOK = """- hosts: all
  gather_facts: false
  tasks:
"""
TICK = "    - name: tick %d\n      command: sleep 1\n"


def start_server(tack, tmp):
    db = f"sqlite://{tmp}/runs.db"
    proc = subprocess.Popen(
        [tack, "serve", "--db", db, "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    proc.stdout.readline()
    token = proc.stdout.readline().strip()
    line = proc.stderr.readline().strip()
    addr = line.removeprefix("tack serve: listening on http://")
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    host, port = addr.rsplit(":", 1)
    return proc, host, int(port), token


def call(host, port, token, method, path, body=None):
    c = http.client.HTTPConnection(host, port, timeout=30)
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, json.loads(data) if data else None


def sse_client(host, port, token, path, stop, stats, lock):
    events = 0
    error = None
    try:
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
        buf = b""
        checked = False
        while not stop.is_set():
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                if not stop.is_set():
                    error = "the stream closed early"
                break
            buf += chunk
            if not checked:
                if b"\r\n" not in buf:
                    continue
                checked = True
                if b" 200 " not in buf.split(b"\r\n", 1)[0]:
                    error = buf.split(b"\r\n", 1)[0].decode()
                    break
            events += buf.count(b"\nid: ")
            buf = buf[buf.rfind(b"\n"):]
        s.close()
    except OSError as e:
        error = str(e)
    with lock:
        stats["sse_events"].append(events)
        if error:
            stats["errors"].append(f"sse: {error}")


def reader(host, port, token, path, interval, start, deadline, stats, lock):
    c = http.client.HTTPConnection(host, port, timeout=10)
    headers = {"Authorization": f"Bearer {token}"}
    n = 0
    while True:
        at = start + n * interval
        if at >= deadline:
            break
        pause = at - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        n += 1
        t0 = time.monotonic()
        try:
            c.request("GET", path, headers=headers)
            r = c.getresponse()
            body = r.read()
            ok = r.status == 200 and b'"tasks"' in body
        except (OSError, http.client.HTTPException) as e:
            ok = False
            body = str(e).encode()
            c.close()
            c = http.client.HTTPConnection(host, port, timeout=10)
        took = time.monotonic() - t0
        with lock:
            stats["latency"].append(took)
            if not ok:
                stats["errors"].append(f"tasks: {body[:200]!r}")
    c.close()


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tack")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--sse", type=int, default=50)
    ap.add_argument("--rate", type=float, default=500)
    ap.add_argument("--readers", type=int, default=25)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "project")
        os.mkdir(project)
        with open(os.path.join(project, "hosts"), "w") as f:
            f.write("h1 ansible_connection=local\nh2 ansible_connection=local\n")
        with open(os.path.join(project, "site.yml"), "w") as f:
            f.write(PLAYBOOK + "".join(TICK % i for i in range(int(args.seconds + 15))))
        proc, host, port, token = start_server(args.tack, tmp)
        try:
            spec = {"name": "load", "project_dir": project, "playbook": "site.yml", "inventory": "hosts"}
            status, _ = call(host, port, token, "POST", "/v1/incarnations", spec)
            assert status == 201, status
            status, body = call(host, port, token, "POST", "/v1/incarnations/load/runs")
            assert status == 202, status
            run = body["apply_id"]
            base = f"/v1/incarnations/load/runs/{run}"
            while call(host, port, token, "GET", base)[1]["status"] != "running":
                time.sleep(0.1)
            while not call(host, port, token, "GET", base + "/tasks")[1]["tasks"]:
                time.sleep(0.1)
            stats = {"latency": [], "errors": [], "sse_events": []}
            lock = threading.Lock()
            stop = threading.Event()
            sse = [threading.Thread(target=sse_client, args=(host, port, token, base + "/events", stop, stats, lock))
                   for _ in range(args.sse)]
            for t in sse:
                t.start()
            start = time.monotonic()
            deadline = start + args.seconds
            interval = args.readers / args.rate
            readers = [threading.Thread(target=reader, args=(host, port, token, base + "/tasks", interval,
                                                             start + i * interval / args.readers, deadline, stats, lock))
                       for i in range(args.readers)]
            for t in readers:
                t.start()
            for t in readers:
                t.join()
            elapsed = time.monotonic() - start
            stop.set()
            for t in sse:
                t.join()
            lat = stats["latency"]
            print(f"tasks endpoint: {len(lat)} reads in {elapsed:.1f} s ({len(lat) / elapsed:.0f}/s), "
                  f"p50 {pct(lat, 0.50) * 1000:.2f} ms, p99 {pct(lat, 0.99) * 1000:.2f} ms, "
                  f"max {max(lat) * 1000:.2f} ms")
            ev = stats["sse_events"]
            print(f"sse: {len(ev)} clients, events each: min {min(ev)}, max {max(ev)}")
            print(f"errors: {len(stats['errors'])}")
            for e in stats["errors"][:10]:
                print("  " + e)
            return 1 if stats["errors"] or min(ev) == 0 else 0
        finally:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    sys.exit(main())
