#!/usr/bin/env python3
"""fake-vercel.py - a stand-in for the Vercel Sandbox REST API on
loopback, for vigil's tests.  Python standard library only.

It implements the wire protocol the @vercel/sandbox SDK speaks (vercel/
sandbox commit 81d725b7, packages/vercel-sandbox/src/api-client/
api-client.ts for paths and bodies, validators.ts for the reply shapes,
base-client.ts for auth and the {"error": {"code", "message"}} error
body), under the base URL's /api prefix:
    POST   /v3/sandboxes                    {sandbox, session, routes}
    POST   /v2/sandboxes/sessions/S/cmd     wait: application/x-ndjson
           stream of {"command"} (exitCode null), {"stream", "data"} log
           lines, {"command"} with exitCode; else {"command"}
    GET    /v2/sandboxes/sessions/S/cmd/C[?wait=true]   {"command"}
    GET    /v2/sandboxes/sessions/S/cmd/C/logs          ndjson log lines
    POST   /v2/sandboxes/sessions/S/cmd/C/kill {"signal"} {"command"}
    POST   /v2/sandboxes/sessions/S/stop                {session, sandbox}
    GET    /v2/sandboxes/NAME?projectId=P      {sandbox, session, routes}
    DELETE /v2/sandboxes/NAME?projectId=P               {sandbox}
    GET    /v2/sandboxes?project=P&tags=K:V&limit=N&cursor=C
                                            {sandboxes, pagination}
    POST   /v2/sandboxes/sessions/S/fs/read {"path", "cwd"?}: the file's
           bytes as application/octet-stream, 404 when there is none
           (api-client.ts readFile; the SDK's readFile reads nothing
           else); a relative path is taken from cwd, else the session's
           directory
Every request needs "Authorization: Bearer TOKEN" and ?teamId=TEAM;
projectId must name the project.  Bodies are checked field by field as
the SDK's types say, unknown fields refused (stricter than the API, so a
misspelt field fails the test); tags at most 5.  A sandbox's env is
the default of each of its commands (the SDK's Sandbox.create docs).

Conformance: tests/integration/t0803-cloud-sdk-conformance.sh runs the
SDK itself (3.5, its create / list / runCommand / logs / wait / stop /
get / delete; replies checked by its zod validators) against this fake.

Commands really run, locally, without a shell (command + args), in a
per-sandbox directory with an environment of their own (PATH, HOME) plus
the request's env.

Usage: fake-vercel.py --dir DIR --token T --team T --project P
       [--fail-create N] [--drop-streams N] [--stall-reads]
Writes its port to DIR/port and one line per request to DIR/requests.
"""
import json
import os
import shutil
import signal
import socket
import struct
import sys
import subprocess
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakecloud  # noqa: E402

CREATE = {"projectId": str, "ports": list, "source": dict, "timeout": int,
          "resources": dict, "runtime": str, "image": str, "name": str,
          "persistent": bool, "networkPolicy": dict, "env": dict,
          "tags": dict, "snapshotExpiration": int, "keepLastSnapshots": dict,
          "region": str, "failoverRegions": list}
CMD = {"command": str, "args": list, "cwd": str, "env": dict, "sudo": bool,
       "wait": bool, "logs": bool, "timeout": int}


class Dropped(Exception):
    """Raised by a stream generator to cut the connection (--drop-streams)."""


def now_ms():
    return int(time.time() * 1000)


class Cmd:
    def __init__(self, sess, body):
        self.id = "cmd_" + uuid.uuid4().hex[:16]
        self.sess = sess
        self.body = body
        self.events = []
        self.exit = None
        self.cv = threading.Condition()
        self.started = now_ms()
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": sess.dir}
        # The sandbox's env is every command's default (the SDK's
        # Sandbox.create docs), the command's own wins.
        env.update(sess.sandbox.body.get("env", {}))
        env.update(body.get("env", {}))
        try:
            self.proc = subprocess.Popen(
                [body["command"]] + body["args"],
                cwd=body.get("cwd", sess.dir), env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True)
        except OSError as e:
            self.proc = None
            self.events.append({"stream": "stderr",
                                "data": "%s: %s\n" % (body["command"],
                                                      e.strerror)})
            self.exit = 127
            return
        self.readers = [
            threading.Thread(target=self.read, args=(self.proc.stdout,
                                                     "stdout")),
            threading.Thread(target=self.read, args=(self.proc.stderr,
                                                     "stderr")),
        ]
        for t in self.readers:
            t.start()
        threading.Thread(target=self.reap).start()

    def read(self, f, name):
        while True:
            data = os.read(f.fileno(), 4096)
            if not data:
                return
            with self.cv:
                self.events.append({"stream": name, "data":
                                    data.decode("utf-8", "replace")})
                self.cv.notify_all()

    def reap(self):
        code = self.proc.wait()
        for t in self.readers:
            t.join()
        with self.cv:
            self.exit = code if code >= 0 else 128 - code
            self.cv.notify_all()

    def signal(self, sig):
        if self.proc is not None and self.exit is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def dto(self):
        d = {"id": self.id, "name": self.body["command"],
             "args": self.body["args"],
             "cwd": self.body.get("cwd", self.sess.dir),
             "sessionId": self.sess.id, "exitCode": self.exit,
             "startedAt": self.started}
        return d

    def follow(self, start=0):
        """Yields events from index start until the command ends."""
        i = start
        while True:
            with self.cv:
                while i >= len(self.events) and self.exit is None:
                    self.cv.wait(0.5)
                batch = self.events[i:]
                done = self.exit is not None and i + len(batch) >= len(
                    self.events)
            for ev in batch:
                yield ev
            i += len(batch)
            if done:
                return


class Session:
    def __init__(self, sandbox):
        self.id = "sbx_" + uuid.uuid4().hex[:20]
        self.sandbox = sandbox
        self.dir = tempfile.mkdtemp(prefix="fake-vercel-")
        self.cmds = {}
        self.status = "running"
        self.created = now_ms()

    def dto(self):
        return {"id": self.id, "memory": 2048, "vcpus": self.sandbox.vcpus,
                "region": self.sandbox.body.get("region", "iad1"),
                "timeout": self.sandbox.body.get("timeout", 300000),
                "status": self.status, "requestedAt": self.created,
                "createdAt": self.created, "cwd": self.dir,
                "updatedAt": now_ms()}

    def stop(self):
        for c in self.cmds.values():
            c.signal(signal.SIGKILL)
        self.status = "stopped"


class Sandbox:
    def __init__(self, body):
        self.body = body
        self.name = body.get("name") or "sb-" + uuid.uuid4().hex[:12]
        self.vcpus = body.get("resources", {}).get("vcpus", 1)
        self.session = Session(self)
        self.created = now_ms()

    def dto(self):
        return {"name": self.name, "persistent": False,
                "region": self.body.get("region", "iad1"),
                "vcpus": self.vcpus, "memory": 2048 * self.vcpus,
                "createdAt": self.created, "updatedAt": now_ms(),
                "currentSessionId": self.session.id,
                "status": self.session.status,
                "tags": self.body.get("tags", {})}


def err(status, code, message):
    return status, {"error": {"code": code, "message": message}}


def check(body, fields):
    if not isinstance(body, dict):
        return "body must be a JSON object"
    for k, v in body.items():
        t = fields.get(k)
        if t is None:
            return "unknown field '%s'" % k
        if t is int and (isinstance(v, bool) or not isinstance(v, int)):
            return "'%s' must be an integer" % k
        if t is not int and not isinstance(v, t):
            return "'%s' must be of type %s" % (k, t.__name__)
    return None


class State:
    def __init__(self, args):
        self.args = args
        self.boxes = {}
        self.sessions = {}
        self.lock = threading.Lock()
        self.create_failures = args.fail_create
        self.drops = args.drop_streams
        self.log = open(os.path.join(args.dir, "requests"), "a", buffering=1)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    st = None

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.st.log.write("%s %s %d\n" % (self.command, self.path, status))

    def stream(self, lines):
        """Sends ndjson lines as they come, chunked."""
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.st.log.write("%s %s 200 stream\n" % (self.command, self.path))
        try:
            for obj in lines:
                data = json.dumps(obj).encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except Dropped:
            # Reset the connection mid-body: the client sees the
            # stream end without its last chunk.
            self.st.log.write("%s %s dropped\n" % (self.command, self.path))
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        if self.headers.get("Content-Type") != "application/json":
            raise ValueError("content-type must be application/json")
        return json.loads(raw)

    def dispatch(self):
        a = self.st.args
        url = urlsplit(self.path)
        q = parse_qs(url.query)
        parts = [p for p in url.path.split("/") if p]
        if self.headers.get("Authorization") != "Bearer " + a.token:
            return err(403, "forbidden", "Not authorized")
        if q.get("teamId") != [a.team]:
            return err(403, "forbidden", "You don't have permission to "
                       "access this team")
        try:
            body = self.body()
        except ValueError as e:
            return err(400, "bad_request", str(e))
        if parts[:1] != ["api"]:
            return err(404, "not_found", "The requested path was not found")
        p = parts[1:]
        m = self.command
        if m == "POST" and p == ["v3", "sandboxes"]:
            return self.create(body)
        if p[:3] == ["v2", "sandboxes", "sessions"] and len(p) >= 5:
            return self.session_op(p[3], p[4:], q, body)
        if p == ["v2", "sandboxes"] and m == "GET":
            return self.list(q)
        if p[:2] == ["v2", "sandboxes"] and len(p) == 3:
            if q.get("projectId") != [a.project]:
                return err(400, "bad_request", "projectId is required")
            with self.st.lock:
                box = self.st.boxes.get(p[2])
                if box is not None and m == "DELETE":
                    del self.st.boxes[p[2]]
            if box is None:
                return err(404, "not_found", "Sandbox not found")
            if m == "GET":
                return 200, {"sandbox": box.dto(),
                             "session": box.session.dto(), "routes": []}
            if m == "DELETE":
                box.session.stop()
                shutil.rmtree(box.session.dir, ignore_errors=True)
                return 200, {"sandbox": box.dto()}
        return err(404, "not_found", "The requested path was not found")

    def create(self, body):
        st = self.st
        problem = check(body, CREATE)
        if problem is None and body.get("projectId") != st.args.project:
            problem = "projectId must name the project"
        if problem is None and not isinstance(body.get("ports"), list):
            problem = "'ports' is required"
        tags = body.get("tags", {}) if isinstance(body, dict) else {}
        if problem is None and (len(tags) > 5 or not all(
                isinstance(v, str) for v in tags.values())):
            problem = "at most 5 tags, each a string"
        if problem is None and "runtime" in body and "image" in body:
            problem = "runtime and image cannot be used together"
        src = body.get("source") if isinstance(body, dict) else None
        if problem is None and src is not None and not (
                src.get("type") == "snapshot" and
                isinstance(src.get("snapshotId"), str)):
            problem = "source must be {type: snapshot, snapshotId}"
        if problem:
            return err(400, "bad_request", problem)
        with st.lock:
            if st.create_failures > 0:
                st.create_failures -= 1
                return err(503, "service_unavailable", "Try again later")
            box = Sandbox(body)
            st.boxes[box.name] = box
            st.sessions[box.session.id] = box.session
        return 200, {"sandbox": box.dto(), "session": box.session.dto(),
                     "routes": []}

    def list(self, q):
        if q.get("project") != [self.st.args.project]:
            return err(400, "bad_request", "project is required")
        want = [t.split(":", 1) for t in q.get("tags", [])]
        limit = int(q.get("limit", ["50"])[0])
        start = int(q.get("cursor", ["0"])[0])
        with self.st.lock:
            found = [b.dto() for b in self.st.boxes.values()
                     if all(len(w) == 2 and b.body.get("tags", {}).get(
                         w[0]) == w[1] for w in want)]
        page = found[start:start + limit]
        nxt = str(start + limit) if start + limit < len(found) else None
        return 200, {"sandboxes": page,
                     "pagination": {"count": len(page), "next": nxt}}

    def session_op(self, sid, rest, q, body):
        sess = self.st.sessions.get(sid)
        m = self.command
        if sess is None:
            return err(404, "not_found", "Session not found")
        if rest == ["stop"] and m == "POST":
            sess.stop()
            return 200, {"session": sess.dto(),
                         "sandbox": sess.sandbox.dto()}
        if rest == ["cmd"] and m == "POST":
            problem = check(body, CMD)
            if problem is None and not isinstance(body.get("command"), str):
                problem = "'command' is required"
            if problem is None and not (isinstance(body.get("args"), list)
                                        and all(isinstance(x, str)
                                                for x in body["args"])):
                problem = "'args' must be a list of strings"
            if problem is None and not isinstance(body.get("env"), dict):
                problem = "'env' is required"
            if problem is None and not all(
                    isinstance(v, str) for v in body["env"].values()):
                problem = "'env' values must be strings"
            if problem is None and not isinstance(body.get("sudo"), bool):
                problem = "'sudo' is required"
            if problem:
                return err(400, "bad_request", problem)
            if sess.status != "running":
                return err(410, "sandbox_stopped", "Sandbox is stopped")
            c = Cmd(sess, body)
            sess.cmds[c.id] = c
            if not body.get("wait"):
                return 200, {"command": c.dto()}
            logs = body.get("logs", False)

            def lines():
                yield {"command": c.dto()}
                for ev in c.follow():
                    if logs:
                        yield ev
                        with self.st.lock:
                            drop = self.st.drops > 0
                            self.st.drops -= drop
                        if drop:
                            raise Dropped()
                yield {"command": c.dto()}
            return 200, lines()
        if rest == ["fs", "read"] and m == "POST":
            problem = check(body, {"path": str, "cwd": str})
            if problem is None and not isinstance(body.get("path"), str):
                problem = "'path' is required"
            if problem:
                return err(400, "bad_request", problem)
            path = os.path.join(body.get("cwd", sess.dir), body["path"])
            fakecloud.stall(self.st.args)
            try:
                with open(path, "rb") as f:
                    return 200, ("octet", f.read())
            except (FileNotFoundError, IsADirectoryError):
                return err(404, "file_not_found", "File not found")
        if len(rest) >= 2 and rest[0] == "cmd":
            c = sess.cmds.get(rest[1])
            if c is None:
                return err(404, "not_found", "Command not found")
            if rest[2:] == [] and m == "GET":
                if q.get("wait") == ["true"]:
                    for _ in c.follow():
                        pass
                return 200, {"command": c.dto()}
            if rest[2:] == ["logs"] and m == "GET":
                return 200, c.follow()
            if rest[2:] == ["kill"] and m == "POST":
                sig = (body or {}).get("signal")
                if not isinstance(sig, int) or isinstance(sig, bool):
                    return err(400, "bad_request", "'signal' must be an "
                               "integer")
                c.signal(sig)
                return 200, {"command": c.dto()}
        return err(404, "not_found", "The requested path was not found")

    def handle_any(self):
        status, obj = self.dispatch()
        if isinstance(obj, dict):
            self.reply(status, obj)
        elif isinstance(obj, tuple):
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(obj[1])))
            self.end_headers()
            self.wfile.write(obj[1])
            self.st.log.write("%s %s %d\n" % (self.command, self.path,
                                                status))
        else:
            self.stream(obj)

    do_GET = do_POST = do_DELETE = do_PATCH = handle_any


def cleanup():
    for b in list(Handler.st.boxes.values()):
        b.session.stop()
        shutil.rmtree(b.session.dir, ignore_errors=True)


def main():
    args = fakecloud.parse_args("--team", "--project")
    Handler.st = State(args)
    fakecloud.serve(Handler, args.dir, cleanup)


if __name__ == "__main__":
    main()
