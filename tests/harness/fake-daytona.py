#!/usr/bin/env python3
"""fake-daytona.py - a stand-in for Daytona's API and sandbox toolbox on
loopback, for vigil's tests.  Python standard library only.

It implements the documented wire protocol of daytonaio/daytona (commit
b5a5d9e78):
  API (apps/api/src/sandbox/controllers/sandbox.controller.ts, dto/):
    POST   /api/sandbox              CreateSandbox -> Sandbox
    GET    /api/sandbox/{id}         Sandbox (state creating -> started)
    GET    /api/sandbox?labels=JSON&limit=N&cursor=C
                                     ListSandboxesResponse {items, nextCursor}
    DELETE /api/sandbox/{id}         Sandbox
  errors as AllExceptionsFilter writes them:
    {"path", "timestamp", "statusCode", "error", "message"}
  toolbox (apps/daemon/pkg/toolbox/docs/swagger.json), reached at the
  sandbox's toolboxProxyUrl + "/" + id:
    POST   /process/session                         {"sessionId"} -> 201
    POST   /process/session/{sid}/exec              {"command", "runAsync"}
                                                    -> 202 {"cmdId"}
    GET    /process/session/{sid}/command/{cid}     {"id", "command",
                                                    "exitCode"?}
    GET    /process/session/{sid}/command/{cid}/logs
    DELETE /process/session/{sid}     SIGTERM to the group, grace, SIGKILL
    GET    /work-dir                  {"dir"}
    GET    /files?path=P              [FileInfo {name, size, mode, isDir,
                                      modTime, modifiedAt, owner, group,
                                      permissions}], of an lstat, mode as
                                      Go's FileMode.String() ("Lrwx..." for
                                      a link)
    GET    /files/download?path=P     the file's bytes
                                      (application/octet-stream)
  (pkg/toolbox/fs, pkg/toolbox/info; paths as @daytona/toolbox-api-client
  0.218's FileSystemApi and InfoApi send them).  Relative paths are taken
  from the work dir (the sandbox's directory here; commands see this
  host's file system, so do these calls).
  Logs are kept as the daemon keeps them (pkg/session/execute.go): each
  stdout line after 01 01 01, each stderr line after 02 02 02, a newline
  added to a last partial line; the exit code is known only after the
  output is complete.  With "X-Daytona-Split-Output: true" and no
  X-Daytona-SDK-Version the raw log is returned, without either the
  markers are stripped (pkg/session/log.go, common.go); a request with
  X-Daytona-SDK-Version (the SDKs send it) gets the JSON
  SessionCommandLogsResponse {output, stdout, stderr} that
  @daytonaio/sdk 0.218's Process.getSessionCommandLogs reads.
Conformance: tests/integration/t0803-cloud-sdk-conformance.sh runs that
SDK's create / list / exec / logs / delete against this fake.

Commands really run, locally, as `sh -c '. FILE'` in a per-sandbox
directory with a small environment of their own (PATH, HOME), like a
fresh container.  Every request must carry "Authorization: Bearer TOKEN";
bodies are checked field by field (types as the DTO's class-validator
decorators say), and unknown fields are refused too (stricter than the
API, so that a misspelt field fails the test).

Usage: fake-daytona.py --dir DIR --token TOKEN [--fail-create N]
       [--stall-reads]
Writes its port to DIR/port and one line per request to DIR/requests.
"""
import json
import os
import shutil
import signal
import sys
import subprocess
import tempfile
import threading
import time
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakecloud  # noqa: E402

OUT = b"\x01\x01\x01"
ERR = b"\x02\x02\x02"
GRACE = 2.0  # the daemon's terminationGracePeriod is configurable

CREATE_FIELDS = {
    "name": str, "snapshot": str, "user": str, "env": dict, "labels": dict,
    "public": bool, "networkBlockAll": bool, "networkAllowList": str,
    "domainAllowList": str, "target": str, "cpu": int, "gpu": int,
    "memory": int, "disk": int, "autoStopInterval": int,
    "autoArchiveInterval": int, "autoDeleteInterval": int, "volumes": list,
    "buildInfo": dict, "class": str,
    # Fields @daytonaio/sdk 0.218's create() sends when set.
    "gpuType": list, "spot": bool, "autoPauseInterval": int,
    "ttlMinutes": int, "kvm": bool, "outboundProxyUrl": str,
    "otelEndpointOverride": str, "linkedSandbox": str, "secrets": list,
}


def go_mode(st):
    """Go's FileMode.String() of an lstat: type letter, then rwx bits."""
    import stat as S
    kinds = [(S.S_ISDIR, "d"), (S.S_ISLNK, "L"), (S.S_ISFIFO, "p"),
             (S.S_ISSOCK, "S"), (S.S_ISCHR, "Dc"), (S.S_ISBLK, "D")]
    kind = next((k for test, k in kinds if test(st.st_mode)), "-")
    bits = "".join(c if st.st_mode & (1 << (8 - i)) else "-"
                   for i, c in enumerate("rwxrwxrwx"))
    return kind + bits


def file_info(path, name):
    st = os.lstat(path)
    t = datetime.fromtimestamp(st.st_mtime, timezone.utc)
    return {"name": name, "size": st.st_size, "mode": go_mode(st),
            "isDir": os.path.isdir(path) and not os.path.islink(path),
            "modTime": str(t), "modifiedAt": t.isoformat(),
            "owner": str(st.st_uid), "group": str(st.st_gid),
            "permissions": oct(st.st_mode & 0o7777)}


class Command:
    def __init__(self, box, text):
        self.id = str(uuid.uuid4())
        self.text = text
        self.exit = None
        self.log = b""
        self.lock = threading.Lock()
        path = os.path.join(box.dir, ".cmd-" + self.id + ".sh")
        with open(path, "w") as f:
            f.write(text)
        # networkBlockAll: the command has a network namespace of its
        # own with nothing in it (the fake runs as root in the tests).
        argv = ["sh", "-c", '. "$1"', "sh", path]
        if box.body.get("networkBlockAll") is True:
            argv = ["unshare", "--net", "--"] + argv
        self.proc = subprocess.Popen(
            argv, cwd=box.dir,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": box.dir},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        self.readers = [
            threading.Thread(target=self.label, args=(self.proc.stdout, OUT)),
            threading.Thread(target=self.label, args=(self.proc.stderr, ERR)),
        ]
        for t in self.readers:
            t.start()
        threading.Thread(target=self.reap).start()

    def label(self, f, mark):
        for line in iter(f.readline, b""):
            if not line.endswith(b"\n"):
                line += b"\n"
            with self.lock:
                self.log += mark + line

    def reap(self):
        code = self.proc.wait()
        for t in self.readers:
            t.join()
        self.exit = code if code >= 0 else 128 - code

    def terminate(self):
        if self.exit is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        end = time.time() + GRACE
        while time.time() < end and self.proc.poll() is None:
            time.sleep(0.05)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class Box:
    def __init__(self, body, base):
        self.id = str(uuid.uuid4())
        self.dir = tempfile.mkdtemp(prefix="fake-daytona-")
        self.body = body
        self.gets = 0
        self.sessions = {}
        self.base = base

    def dto(self):
        b = self.body
        return {
            "id": self.id, "organizationId": "org-fake",
            "name": b.get("name", self.id),
            "snapshot": b.get("snapshot", "daytonaio/sandbox:fake"),
            "user": "daytona", "env": b.get("env", {}),
            "labels": b.get("labels", {}), "public": False,
            "networkBlockAll": b.get("networkBlockAll") is True,
            "target": b.get("target", "us"),
            "cpu": b.get("cpu", 1), "gpu": b.get("gpu", 0),
            "memory": b.get("memory", 1), "disk": 3,
            # One GET in state creating, then started, as a real one moves.
            "state": "started" if self.gets > 0 else "creating",
            "toolboxProxyUrl": self.base + "/toolbox",
        }

    def destroy(self):
        for s in self.sessions.values():
            for c in s.values():
                c.terminate()
        shutil.rmtree(self.dir, ignore_errors=True)


class State:
    def __init__(self, args):
        self.args = args
        self.boxes = {}
        self.lock = threading.Lock()
        self.create_failures = args.fail_create
        self.log = open(os.path.join(args.dir, "requests"), "a", buffering=1)


def nest_error(path, status, message):
    names = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
             409: "Conflict", 503: "Service Unavailable"}
    return status, {
        "path": path,
        "timestamp": datetime.now(timezone.utc).isoformat(),
        "statusCode": status, "error": names.get(status, "Error"),
        "message": message,
    }


def split_log(log):
    """The SessionCommandLogsResponse an SDK gets: the combined output
    and each stream apart (what @daytonaio/sdk's Process reads)."""
    out, err = [], []
    for line in log.splitlines(keepends=True):
        if line.startswith(OUT):
            out.append(line[3:])
        elif line.startswith(ERR):
            err.append(line[3:])
    text = log.replace(OUT, b"").replace(ERR, b"")
    return {"output": text.decode("utf-8", "replace"),
            "stdout": b"".join(out).decode("utf-8", "replace"),
            "stderr": b"".join(err).decode("utf-8", "replace")}


def check_create(body):
    errs = []
    if not isinstance(body, dict):
        return ["body must be an object"]
    for k, v in body.items():
        t = CREATE_FIELDS.get(k)
        if t is None:
            errs.append("property %s should not exist" % k)
        elif t is int and (isinstance(v, bool) or not isinstance(v, int)):
            errs.append("%s must be a number conforming to the specified "
                        "constraints" % k)
        elif t is not int and not isinstance(v, t):
            errs.append("%s must be %s" % (k, {str: "a string",
                        dict: "an object", bool: "a boolean value",
                        list: "an array"}[t]))
    for k in ("labels", "env"):
        if isinstance(body.get(k), dict) and not all(
                isinstance(v, str) for v in body[k].values()):
            errs.append("%s values must be strings" % k)
    bi = body.get("buildInfo")
    if isinstance(bi, dict) and not isinstance(bi.get("dockerfileContent"),
                                               str):
        errs.append("buildInfo.dockerfileContent must be a string")
    return errs


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    st = None

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, obj=None, raw=None, ctype="application/json"):
        data = raw if raw is not None else (
            b"" if obj is None else json.dumps(obj).encode())
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.st.log.write("%s %s %d\n" % (self.command, self.path, status))

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        if not self.headers.get("Content-Type", "").startswith(
                "application/json"):
            raise ValueError("Content-Type must be application/json")
        return json.loads(raw)

    def dispatch(self):
        url = urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        q = parse_qs(url.query)
        if self.headers.get("Authorization") != "Bearer " + self.st.args.token:
            return nest_error(url.path, 401, "Invalid credentials")
        try:
            body = self.body()
        except ValueError as e:
            return nest_error(url.path, 400, str(e))
        if parts[:2] == ["api", "sandbox"]:
            return self.api(url.path, parts[2:], q, body)
        if parts[:1] == ["toolbox"] and len(parts) >= 4 and \
                parts[2:4] == ["process", "session"]:
            return self.toolbox(url.path, parts[1], parts[4:], body)
        if parts[:1] == ["toolbox"] and len(parts) >= 3 and \
                self.command == "GET" and parts[2] in ("files", "work-dir"):
            return self.files(parts[1], parts[2:], q)
        return nest_error(url.path, 404, "Cannot %s %s" % (self.command,
                                                           url.path))

    def api(self, path, rest, q, body):
        st = self.st
        m = self.command
        if m == "POST" and not rest:
            errs = check_create(body if body is not None else {})
            if errs:
                return nest_error(path, 400, errs)
            with st.lock:
                if st.create_failures > 0:
                    st.create_failures -= 1
                    return nest_error(path, 503, "Service Unavailable")
                base = "http://%s:%d" % self.server.server_address
                box = Box(body, base)
                st.boxes[box.id] = box
            return 200, box.dto()
        if m == "GET" and not rest:
            try:
                want = json.loads(q.get("labels", ["{}"])[0])
                limit = int(q.get("limit", ["100"])[0])
                start = int(q.get("cursor", ["0"])[0])
            except ValueError:
                return nest_error(path, 400, ["labels must be JSON"])
            if not 1 <= limit <= 100:
                return nest_error(path, 400, ["limit must not be greater "
                                              "than 100"])
            with st.lock:
                found = [b.dto() for b in st.boxes.values()
                         if all(b.body.get("labels", {}).get(k) == v
                                for k, v in want.items())]
            page = found[start:start + limit]
            nxt = str(start + limit) if start + limit < len(found) else None
            return 200, {"items": page, "nextCursor": nxt}
        if len(rest) != 1:
            return nest_error(path, 404, "Not Found")
        with st.lock:
            box = st.boxes.get(rest[0])
            if box is not None and m == "DELETE":
                del st.boxes[rest[0]]
        if box is None:
            return nest_error(path, 404, "Sandbox with ID or name %s not "
                              "found" % rest[0])
        if m == "GET":
            d = box.dto()
            box.gets += 1
            return 200, d
        if m == "DELETE":
            box.destroy()
            return 200, box.dto()
        return nest_error(path, 404, "Not Found")

    def toolbox(self, path, box_id, rest, body):
        box = self.st.boxes.get(box_id)
        if box is None:
            return 404, {"message": "sandbox not found"}
        if box.gets == 0:
            return 409, {"message": "sandbox is not started"}
        m = self.command
        if m == "POST" and not rest:
            sid = (body or {}).get("sessionId")
            if not isinstance(sid, str) or not sid:
                return 400, {"message": "sessionId is required"}
            if sid in box.sessions:
                return 409, {"message": "session already exists"}
            box.sessions[sid] = {}
            return 201, None
        sess = box.sessions.get(rest[0])
        if sess is None:
            return 404, {"message": "session not found"}
        if m == "DELETE" and len(rest) == 1:
            for c in sess.values():
                c.terminate()
            del box.sessions[rest[0]]
            return 204, None
        if m == "POST" and rest[1:] == ["exec"]:
            if not isinstance(body, dict) or set(body) - {
                    "command", "runAsync", "async", "suppressInputEcho"}:
                return 400, {"message": "invalid request body"}
            cmd = body.get("command")
            if not isinstance(cmd, str) or not cmd.strip():
                return 400, {"message": "command cannot be empty"}
            if body.get("runAsync") is not True:
                return 400, {"message": "this fake runs commands "
                             "asynchronously only (runAsync: true)"}
            c = Command(box, cmd)
            sess[c.id] = c
            return 202, {"cmdId": c.id}
        if m == "GET" and len(rest) >= 3 and rest[1] == "command":
            c = sess.get(rest[2])
            if c is None:
                return 404, {"message": "command not found"}
            if len(rest) == 3:
                d = {"id": c.id, "command": c.text}
                if c.exit is not None:
                    d["exitCode"] = c.exit
                return 200, d
            if rest[3:] == ["logs"]:
                with c.lock:
                    log = c.log
                split = self.headers.get("X-Daytona-Split-Output") == "true"
                if self.headers.get("X-Daytona-SDK-Version"):
                    return 200, split_log(log)
                if not split:
                    log = log.replace(OUT, b"").replace(ERR, b"")
                return 200, log
        return 404, {"message": "not found"}

    def files(self, box_id, rest, q):
        box = self.st.boxes.get(box_id)
        if box is None:
            return 404, {"message": "sandbox not found"}
        if rest == ["work-dir"]:
            return 200, {"dir": box.dir}
        path = os.path.join(box.dir, q.get("path", [""])[0])
        try:
            if rest == ["files"]:
                return 200, [file_info(os.path.join(path, n), n)
                             for n in sorted(os.listdir(path))]
            if rest == ["files", "download"]:
                if os.path.isdir(path):
                    return 400, {"message": "path is a directory"}
                fakecloud.stall(self.st.args)
                with open(path, "rb") as f:
                    return 200, ("octet", f.read())
        except FileNotFoundError:
            return 404, {"message": "no such file or directory"}
        except OSError as e:
            return 400, {"message": str(e)}
        return 404, {"message": "not found"}

    def handle_any(self):
        status, obj = self.dispatch()
        if isinstance(obj, tuple):
            self.reply(status, raw=obj[1], ctype="application/octet-stream")
        elif isinstance(obj, bytes):
            self.reply(status, raw=obj, ctype="text/plain; charset=utf-8")
        else:
            self.reply(status, obj)

    do_GET = do_POST = do_DELETE = do_PUT = handle_any


def cleanup():
    for b in list(Handler.st.boxes.values()):
        b.destroy()


def main():
    args = fakecloud.parse_args()
    Handler.st = State(args)
    fakecloud.serve(Handler, args.dir, cleanup)


if __name__ == "__main__":
    main()
