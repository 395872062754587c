#!/usr/bin/python3
"""fake-modal-gateway.py - a stand-in for a managed Modal tool gateway on
loopback, for vigil's tests.  Python standard library only.

It implements the REST protocol Hermes Agent's managed Modal client
speaks (NousResearch/hermes-agent tools/environments/managed_modal.py):
  POST /v1/sandboxes            {image, cwd, cpu, memoryMiB, timeoutMs,
                                idleTimeoutMs, persistentFilesystem,
                                logicalKey} + x-idempotency-key -> {id}
  POST /v1/sandboxes/{id}/execs {execId, command, cwd, timeoutMs,
                                stdinData} -> {execId, status}
  GET  /v1/sandboxes/{id}/execs/{execId}
                                -> {status: running|completed|failed|
                                   cancelled|timeout, output, returncode}
  POST /v1/sandboxes/{id}/execs/{execId}/cancel
  POST /v1/sandboxes/{id}/terminate {snapshotBeforeTerminate}
with "Authorization: Bearer TOKEN", errors as {"error": "..."}.  GET
/v1/health is the readiness check vigil makes (200 when ready,
--not-ready answers 503).  A create with an idempotency key seen before
returns the same sandbox.  Commands really run, locally, with the
command given and stdinData on stdin.

Usage: fake-modal-gateway.py --dir DIR --token TOKEN [--not-ready]
Writes its port to DIR/port and one line per request to DIR/requests.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

A = None
BOXES = {}
KEYS = {}
LOCK = threading.Lock()


class Exec:
    def __init__(self, body, root):
        cwd = body.get("cwd") or root
        os.makedirs(cwd, exist_ok=True)
        self.proc = subprocess.Popen(
            ["/bin/sh", "-c", body["command"]], cwd=cwd,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": root},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True)
        self.status = "running"
        self.output = b""
        self.code = None
        t = threading.Thread(target=self.run, args=(
            body.get("stdinData", "").encode(),
            body.get("timeoutMs", 60000) / 1000.0), daemon=True)
        t.start()

    def run(self, stdin, timeout):
        try:
            out, _ = self.proc.communicate(stdin, timeout=timeout)
            self.output, self.code = out, self.proc.returncode
            if self.status == "running":
                self.status = "completed" if self.code == 0 else "failed"
        except subprocess.TimeoutExpired:
            self.kill()
            out, _ = self.proc.communicate()
            self.output, self.code, self.status = out, 124, "timeout"

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}") if n else {}

    def note(self, body):
        with open(os.path.join(A.dir, "requests"), "a") as f:
            f.write("%s %s key=%s %s\n" % (
                self.command, self.path,
                self.headers.get("x-idempotency-key", "-"),
                json.dumps(body, sort_keys=True)))

    def authed(self):
        if self.headers.get("Authorization") != "Bearer " + A.token:
            self.reply(401, {"error": "invalid gateway token"})
            return False
        return True

    def do_GET(self):
        self.note({})
        if not self.authed():
            return
        p = self.path.split("/")
        if self.path == "/v1/health":
            if A.not_ready:
                return self.reply(503, {"error": "gateway not ready"})
            return self.reply(200, {"ok": True})
        if len(p) == 6 and p[1:3] == ["v1", "sandboxes"] and p[4] == "execs":
            box = BOXES.get(p[3])
            ex = box and box["execs"].get(p[5])
            if not ex:
                return self.reply(404, {"error": "exec not found"})
            return self.reply(200, {
                "execId": p[5], "status": ex.status,
                "output": ex.output.decode("utf-8", "replace"),
                "returncode": ex.code})
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        body = self.body()
        self.note(body)
        if not self.authed():
            return
        p = self.path.split("/")
        if self.path == "/v1/sandboxes":
            for k in ("image", "cwd", "cpu", "memoryMiB", "timeoutMs",
                      "idleTimeoutMs", "persistentFilesystem", "logicalKey"):
                if k not in body:
                    return self.reply(400, {"error": "missing " + k})
            key = self.headers.get("x-idempotency-key")
            with LOCK:
                if key and key in KEYS:
                    return self.reply(200, {"id": KEYS[key]})
                sid = "sb-" + uuid.uuid4().hex[:22]
                BOXES[sid] = {"execs": {}, "root": tempfile.mkdtemp(
                    prefix="fake-gw.")}
                if key:
                    KEYS[key] = sid
            with open(os.path.join(A.dir, "sandboxes"), "a") as f:
                f.write(sid + "\n")
            return self.reply(200, {"id": sid})
        box = BOXES.get(p[3]) if len(p) > 3 else None
        if box is None:
            return self.reply(404, {"error": "sandbox not found"})
        if len(p) == 5 and p[4] == "execs":
            ex = Exec(body, box["root"])
            box["execs"][body["execId"]] = ex
            return self.reply(200, {"execId": body["execId"],
                                    "status": "running"})
        if len(p) == 7 and p[6] == "cancel":
            ex = box["execs"].get(p[5])
            if ex:
                ex.status = "cancelled"
                ex.kill()
            return self.reply(200, {})
        if len(p) == 5 and p[4] == "terminate":
            for ex in box["execs"].values():
                ex.kill()
            del BOXES[p[3]]
            return self.reply(200, {})
        self.reply(404, {"error": "not found"})


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--not-ready", action="store_true")
    A = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    tmp = os.path.join(A.dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(A.dir, "port"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv.serve_forever()


if __name__ == "__main__":
    main()
