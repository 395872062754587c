#!/usr/bin/python3
"""fake-modal.py - a stand-in for Modal's gRPC API on loopback, for
vigil's tests, on Debian's python3-grpcio.

It implements the documented wire protocol of Modal's client API:
service modal.client.ModalClient as published in modal-labs/modal-client
modal_proto/api.proto, served as gRPC over h2c.  Its messages are
generated at start-up with grpc_tools.protoc (python3-grpc-tools) from
the project's proto/modal.proto, which carries api.proto's message names
and field numbers.  Behaviour follows Modal's SDKs and test servicer:
  - every call must carry x-modal-token-id / x-modal-token-secret
    matching --token-id / --token-secret, else UNAUTHENTICATED;
  - ImageGetOrCreate answers without a result the first time an image is
    seen; ImageJoinStreaming then reports the build's end;
  - SecretGetOrCreate with OBJECT_CREATION_TYPE_EPHEMERAL keeps env_dict;
  - SandboxCreate starts entrypoint_args as a real process (own process
    group, the secrets' environment, workdir created), killed after
    timeout_secs;
  - SandboxGetLogs streams TaskLogsBatch per file descriptor, entry_id
    resumable through last_entry_id, a final batch with eof;
  - SandboxWait returns a GenericResult once the process ended (none
    before), SandboxTerminate kills it (GENERIC_STATUS_TERMINATED),
    SandboxList filters by app and tags, newest first, before_timestamp;
  - SandboxGetTaskId gives the sandbox's task id (wait_until_ready);
  - ContainerExec (the legacy exec path) starts command as a real
    process in the running sandbox (workdir, the secrets' environment);
    ContainerExecGetOutput streams RuntimeOutputBatch per file
    descriptor with batch_index from 1, resumable through
    last_batch_index, the last batch carrying exit_code;
    ContainerExecWait reports completed and exit_code;
  - ContainerFilesystemExec opens (modes "rb"/"r"), reads (n bytes at
    most, none at the end) and closes a file of the sandbox by its
    descriptor; ContainerFilesystemExecGetOutput streams that
    operation's FilesystemRuntimeOutputBatch: the bytes read and eof, or
    a SystemErrorMessage (no such file, a directory, a bad descriptor).
Knobs: --cut-logs N (each log stream of the first sandbox ends with
UNAVAILABLE after N batches, once), --unavailable N (the first N
SandboxCreate fail UNAVAILABLE), --throttle N:SECS (the first N
SandboxCreate fail RESOURCE_EXHAUSTED with an RPCRetryPolicy detail in
grpc-status-details-bin), --delay SECS (before every unary reply),
--tls CERT KEY (HTTP/2 over TLS instead of h2c).

Usage: fake-modal.py --dir DIR --token-id ID --token-secret S [knobs]
Writes its port to DIR/port and one line per call to DIR/requests:
"METHOD attempt=N key=IDEMPOTENCY-KEY" followed by the request as text.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent import futures

sys.dont_write_bytecode = True
import grpc  # noqa: E402
from grpc_tools import protoc  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
GEN = tempfile.mkdtemp(prefix="fake-modal-gen.")
if protoc.main(["protoc", "-I" + os.path.join(TOP, "proto"),
                "--python_out=" + GEN, "--grpc_python_out=" + GEN,
                os.path.join(TOP, "proto", "modal.proto")]) != 0:
    sys.exit("fake-modal: protoc failed")
sys.path.insert(0, GEN)
import modal_pb2 as pb  # noqa: E402
import modal_pb2_grpc as pbg  # noqa: E402

GS = pb.GenericResult
BATCH_MAX = 16 << 10


def pump(owner, chunks, fd, f):
    """Appends what f gives to chunks, then marks fd done (owner's lock)."""
    while True:
        b = os.read(f.fileno(), BATCH_MAX)
        if not b:
            break
        with owner.lock:
            chunks.append(b)
            owner.lock.notify_all()
    with owner.lock:
        owner.done[fd] = True
        owner.lock.notify_all()


class Box:
    """One sandbox: a real process and its two output logs."""

    def __init__(self, sid, app_id, definition, tags, env, root):
        self.id = sid
        self.app_id = app_id
        self.tags = tags
        self.created = time.time()
        self.logs = {1: [], 2: []}   # list of bytes chunks (batches)
        self.lock = threading.Condition()
        self.result = None
        wd = definition.workdir if definition.HasField("workdir") else root
        os.makedirs(wd, exist_ok=True)
        self.wd = wd
        self.env = env
        self.execs = []
        self.proc = subprocess.Popen(
            list(definition.entrypoint_args), cwd=wd, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        self.timeout = definition.timeout_secs or 300
        self.done = {1: False, 2: False}
        for fd, f in ((1, self.proc.stdout), (2, self.proc.stderr)):
            threading.Thread(target=self.pump, args=(fd, f),
                             daemon=True).start()
        threading.Thread(target=self.reaper, daemon=True).start()

    def pump(self, fd, f):
        pump(self, self.logs[fd], fd, f)

    def reaper(self):
        try:
            rc = self.proc.wait(timeout=self.timeout)
            status = GS.GENERIC_STATUS_SUCCESS if rc == 0 else \
                GS.GENERIC_STATUS_FAILURE
        except subprocess.TimeoutExpired:
            self.kill()
            self.proc.wait()
            rc, status = 124, GS.GENERIC_STATUS_TIMEOUT
        with self.lock:
            while not (self.done[1] and self.done[2]):
                self.lock.wait()
            if self.result is None:
                self.result = GS(status=status, exitcode=rc if rc >= 0
                                 else 128 - rc)
            self.lock.notify_all()

    def kill(self):
        for p in [self.proc] + [x.proc for x in self.execs]:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class Exec:
    """One ContainerExec: a real process in its sandbox, output batched."""

    def __init__(self, box, argv, wd, env, timeout):
        self.batches = {1: [], 2: []}
        self.done = {1: False, 2: False}
        self.code = None
        self.lock = threading.Condition()
        self.proc = subprocess.Popen(
            argv, cwd=wd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
        self.timeout = timeout or None
        for fd, f in ((1, self.proc.stdout), (2, self.proc.stderr)):
            threading.Thread(target=self.pump, args=(fd, f),
                             daemon=True).start()
        threading.Thread(target=self.reaper, daemon=True).start()

    def pump(self, fd, f):
        pump(self, self.batches[fd], fd, f)

    def reaper(self):
        try:
            rc = self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            rc = self.proc.wait()
        with self.lock:
            while not (self.done[1] and self.done[2]):
                self.lock.wait()
            self.code = rc if rc >= 0 else 128 - rc
            self.lock.notify_all()


class Servicer(pbg.ModalClientServicer):
    def __init__(self, a):
        self.a = a
        self.boxes = {}
        self.apps = {}
        self.images = {}
        self.secrets = {}
        self.lock = threading.Lock()
        self.creates = 0
        self.cuts = {}
        self.first_box = None
        self.execs = {}      # exec id: Exec
        self.fs_files = {}   # file descriptor: open file
        self.fs_out = {}     # filesystem exec id: FilesystemRuntimeOutputBatch
        self.root = tempfile.mkdtemp(prefix="fake-modal-root.")

    # -- helpers --
    def log(self, ctx, method, req):
        md = dict(ctx.invocation_metadata())
        line = "%s attempt=%s key=%s client-type=%s\n" % (
            method, md.get("x-retry-attempt", "-"),
            md.get("x-idempotency-key", "-"),
            md.get("x-modal-client-type", "-"))
        with open(os.path.join(self.a.dir, "requests"), "a") as f:
            f.write(line)
            f.write(str(req).replace("\n", " ") + "\n")

    def auth(self, ctx, method, req):
        self.log(ctx, method, req)
        md = dict(ctx.invocation_metadata())
        if md.get("x-modal-token-id") != self.a.token_id or \
                md.get("x-modal-token-secret") != self.a.token_secret:
            ctx.abort(grpc.StatusCode.UNAUTHENTICATED,
                      "Invalid token id or secret")
        if self.a.delay:
            time.sleep(self.a.delay)

    def box(self, ctx, sid):
        b = self.boxes.get(sid)
        if b is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, "Sandbox %s not found" % sid)
        return b

    # -- RPCs --
    def ClientHello(self, req, ctx):
        self.auth(ctx, "ClientHello", req)
        return pb.ClientHelloResponse()

    def AppGetOrCreate(self, req, ctx):
        self.auth(ctx, "AppGetOrCreate", req)
        key = (req.app_name, req.environment_name)
        with self.lock:
            if key not in self.apps:
                if req.object_creation_type != \
                        pb.OBJECT_CREATION_TYPE_CREATE_IF_MISSING:
                    ctx.abort(grpc.StatusCode.NOT_FOUND,
                              "App '%s' not found" % req.app_name)
                self.apps[key] = "ap-" + uuid.uuid4().hex[:22]
            return pb.AppGetOrCreateResponse(app_id=self.apps[key])

    def ImageGetOrCreate(self, req, ctx):
        self.auth(ctx, "ImageGetOrCreate", req)
        cmds = list(req.image.dockerfile_commands)
        if not cmds or not cmds[0].startswith("FROM "):
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "no FROM")
        key = tuple(cmds)
        with self.lock:
            if key in self.images:
                return pb.ImageGetOrCreateResponse(
                    image_id=self.images[key],
                    result=GS(status=GS.GENERIC_STATUS_SUCCESS))
            iid = "im-" + uuid.uuid4().hex[:22]
            self.images[key] = iid
        return pb.ImageGetOrCreateResponse(image_id=iid)

    def ImageJoinStreaming(self, req, ctx):
        self.auth(ctx, "ImageJoinStreaming", req)
        if req.image_id not in self.images.values():
            ctx.abort(grpc.StatusCode.NOT_FOUND, "no such image")
        yield pb.ImageJoinStreamingResponse(
            task_logs=[pb.TaskLogs(data=b"building\n",
                                   file_descriptor=pb.FILE_DESCRIPTOR_INFO)],
            entry_id="1-0")
        time.sleep(0.1)
        yield pb.ImageJoinStreamingResponse(
            result=GS(status=GS.GENERIC_STATUS_SUCCESS), entry_id="2-0",
            eof=True)

    def SecretGetOrCreate(self, req, ctx):
        self.auth(ctx, "SecretGetOrCreate", req)
        if req.object_creation_type != pb.OBJECT_CREATION_TYPE_EPHEMERAL:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT,
                      "only ephemeral secrets here")
        sid = "st-" + uuid.uuid4().hex[:22]
        self.secrets[sid] = dict(req.env_dict)
        return pb.SecretGetOrCreateResponse(secret_id=sid)

    def SandboxCreate(self, req, ctx):
        self.auth(ctx, "SandboxCreate", req)
        with self.lock:
            self.creates += 1
            n = self.creates
        if n <= self.a.unavailable:
            ctx.abort(grpc.StatusCode.UNAVAILABLE, "try again")
        if n <= self.a.unavailable + self.a.throttle_n:
            st = pb.RPCStatus(code=8, message="slow down", details=[pb.Any(
                type_url="type.modal.com/modal.client.RPCRetryPolicy",
                value=pb.RPCRetryPolicy(
                    retry_after_secs=self.a.throttle_secs)
                .SerializeToString())])
            ctx.set_trailing_metadata(
                (("grpc-status-details-bin", st.SerializeToString()),))
            ctx.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down")
        d = req.definition
        if d.image_id not in self.images.values():
            ctx.abort(grpc.StatusCode.NOT_FOUND, "no such image")
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
        for s in d.secret_ids:
            if s not in self.secrets:
                ctx.abort(grpc.StatusCode.NOT_FOUND, "no such secret")
            env.update(self.secrets[s])
        sid = "sb-" + uuid.uuid4().hex[:22]
        root = os.path.join(self.root, sid)
        env.setdefault("HOME", root)
        tags = {t.tag_name: t.tag_value for t in req.tags}
        b = Box(sid, req.app_id, d, tags, env, root)
        with self.lock:
            self.boxes[sid] = b
            if self.first_box is None:
                self.first_box = sid
        with open(os.path.join(self.a.dir, "sandboxes"), "a") as f:
            f.write("%s %s %d %s gpu=%s:%d cpu=%d mem=%d\n" % (
                sid, tags.get("vigil-owner", "-"), b.proc.pid, d.workdir,
                d.resources.gpu_config.gpu_type,
                d.resources.gpu_config.count, d.resources.milli_cpu,
                d.resources.memory_mb))
        return pb.SandboxCreateResponse(sandbox_id=sid)

    def SandboxGetLogs(self, req, ctx):
        self.auth(ctx, "SandboxGetLogs", req)
        b = self.box(ctx, req.sandbox_id)
        fd = req.file_descriptor
        if fd not in (1, 2):
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "bad fd")
        last = req.last_entry_id
        i = int(last.split("-")[0]) if last not in ("", "0-0") else 0
        sent = 0
        end = time.time() + (req.timeout or 55)
        cut = self.a.cut_logs and req.sandbox_id == self.first_box and \
            not self.cuts.get(fd)
        while time.time() < end and ctx.is_active():
            with b.lock:
                while i >= len(b.logs[fd]) and not b.done[fd] and \
                        time.time() < end:
                    b.lock.wait(0.2)
                items = b.logs[fd][i:]
                fin = b.done[fd] and i + len(items) >= len(b.logs[fd])
            for chunk in items:
                i += 1
                yield pb.TaskLogsBatch(items=[pb.TaskLogs(
                    data=chunk, file_descriptor=fd)], entry_id="%d-0" % i)
                sent += 1
                if cut and sent >= self.a.cut_logs:
                    self.cuts[fd] = True
                    ctx.abort(grpc.StatusCode.UNAVAILABLE,
                              "stream cut by the test")
            if fin:
                yield pb.TaskLogsBatch(entry_id="%d-0" % i, eof=True)
                return

    def SandboxWait(self, req, ctx):
        self.auth(ctx, "SandboxWait", req)
        b = self.box(ctx, req.sandbox_id)
        with b.lock:
            end = time.time() + max(req.timeout, 0)
            while b.result is None and time.time() < end:
                b.lock.wait(end - time.time())
            if b.result is None:
                return pb.SandboxWaitResponse()
            return pb.SandboxWaitResponse(result=b.result)

    def SandboxTerminate(self, req, ctx):
        self.auth(ctx, "SandboxTerminate", req)
        b = self.box(ctx, req.sandbox_id)
        with b.lock:
            existing = b.result
            if b.result is None:
                b.result = GS(status=GS.GENERIC_STATUS_TERMINATED,
                              exitcode=137)
        b.kill()
        return pb.SandboxTerminateResponse(existing_result=existing)

    def SandboxList(self, req, ctx):
        self.auth(ctx, "SandboxList", req)
        want = {t.tag_name: t.tag_value for t in req.tags}
        out = []
        for b in sorted(self.boxes.values(), key=lambda x: -x.created):
            if req.app_id and b.app_id != req.app_id:
                continue
            if req.before_timestamp and b.created >= req.before_timestamp:
                continue
            if not req.include_finished and b.result is not None:
                continue
            if any(b.tags.get(k) != v for k, v in want.items()):
                continue
            out.append(pb.SandboxInfo(
                id=b.id, created_at=b.created, app_id=b.app_id, tags=[
                    pb.SandboxTag(tag_name=k, tag_value=v)
                    for k, v in b.tags.items()]))
            if len(out) == 2:   # small pages, so paging is exercised
                break
        return pb.SandboxListResponse(sandboxes=out)

    def task_box(self, ctx, task_id):
        for b in self.boxes.values():
            if "ta-" + b.id[3:] == task_id:
                if b.result is not None:
                    ctx.abort(grpc.StatusCode.FAILED_PRECONDITION,
                              "Sandbox has already finished")
                return b
        ctx.abort(grpc.StatusCode.NOT_FOUND, "Task %s not found" % task_id)

    def SandboxGetTaskId(self, req, ctx):
        self.auth(ctx, "SandboxGetTaskId", req)
        b = self.box(ctx, req.sandbox_id)
        if b.result is not None:
            return pb.SandboxGetTaskIdResponse(task_result=b.result)
        return pb.SandboxGetTaskIdResponse(task_id="ta-" + b.id[3:])

    def ContainerExec(self, req, ctx):
        self.auth(ctx, "ContainerExec", req)
        b = self.task_box(ctx, req.task_id)
        env = dict(b.env)
        for s in req.secret_ids:
            if s not in self.secrets:
                ctx.abort(grpc.StatusCode.NOT_FOUND, "no such secret")
            env.update(self.secrets[s])
        if not req.command:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "empty command")
        wd = req.workdir if req.HasField("workdir") else b.wd
        try:
            x = Exec(b, list(req.command), wd, env, req.timeout_secs)
        except OSError as err:
            ctx.abort(grpc.StatusCode.FAILED_PRECONDITION, str(err))
        eid = "ce-" + uuid.uuid4().hex[:22]
        with self.lock:
            self.execs[eid] = x
            b.execs.append(x)
        return pb.ContainerExecResponse(exec_id=eid)

    def exec_of(self, ctx, eid):
        x = self.execs.get(eid)
        if x is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, "Exec %s not found" % eid)
        return x

    def ContainerExecGetOutput(self, req, ctx):
        self.auth(ctx, "ContainerExecGetOutput", req)
        x = self.exec_of(ctx, req.exec_id)
        fd = req.file_descriptor
        if fd not in (1, 2):
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "bad fd")
        i = req.last_batch_index
        end = time.time() + (req.timeout or 55)
        while time.time() < end and ctx.is_active():
            with x.lock:
                while i >= len(x.batches[fd]) and x.code is None and \
                        time.time() < end:
                    x.lock.wait(0.2)
                items = x.batches[fd][i:]
                code = x.code
            for chunk in items:
                i += 1
                yield pb.RuntimeOutputBatch(items=[pb.RuntimeOutputMessage(
                    file_descriptor=fd, message_bytes=chunk)],
                    batch_index=i)
            if code is not None and i >= len(x.batches[fd]):
                yield pb.RuntimeOutputBatch(batch_index=i + 1,
                                            exit_code=code)
                return

    def ContainerExecWait(self, req, ctx):
        self.auth(ctx, "ContainerExecWait", req)
        x = self.exec_of(ctx, req.exec_id)
        with x.lock:
            end = time.time() + max(req.timeout, 0)
            while x.code is None and time.time() < end:
                x.lock.wait(end - time.time())
            if x.code is None:
                return pb.ContainerExecWaitResponse(completed=False)
            return pb.ContainerExecWaitResponse(exit_code=x.code,
                                                completed=True)

    def ContainerFilesystemExec(self, req, ctx):
        self.auth(ctx, "ContainerFilesystemExec", req)
        self.task_box(ctx, req.task_id)
        op = req.WhichOneof("file_exec_request_oneof")
        eid = "fe-" + uuid.uuid4().hex[:22]
        out = pb.FilesystemRuntimeOutputBatch(batch_index=1, eof=True)
        fdesc = None
        try:
            if op == "file_open_request":
                o = req.file_open_request
                if o.mode not in ("rb", "r"):
                    ctx.abort(grpc.StatusCode.INVALID_ARGUMENT,
                              "mode %r not served by the fake" % o.mode)
                if os.path.isdir(o.path):
                    raise IsADirectoryError(o.path)
                f = open(o.path, "rb")
                fdesc = uuid.uuid4().hex
                self.fs_files[fdesc] = f
            elif op == "file_read_request":
                f = self.fs_files.get(req.file_read_request.file_descriptor)
                if f is None:
                    raise OSError("bad file descriptor")
                n = req.file_read_request.n \
                    if req.file_read_request.HasField("n") else -1
                data = f.read(n)
                if data:
                    out.output.append(data)
            elif op == "file_close_request":
                f = self.fs_files.pop(
                    req.file_close_request.file_descriptor, None)
                if f is None:
                    raise OSError("bad file descriptor")
                f.close()
            else:
                ctx.abort(grpc.StatusCode.UNIMPLEMENTED,
                          "%s not served by the fake" % op)
        except OSError as err:
            out = pb.FilesystemRuntimeOutputBatch(
                batch_index=1, eof=True, error=pb.SystemErrorMessage(
                    error_code=err.errno or 0, error_message=str(err)))
        self.fs_out[eid] = out
        if fdesc is None:
            return pb.ContainerFilesystemExecResponse(exec_id=eid)
        return pb.ContainerFilesystemExecResponse(exec_id=eid,
                                                  file_descriptor=fdesc)

    def ContainerFilesystemExecGetOutput(self, req, ctx):
        self.auth(ctx, "ContainerFilesystemExecGetOutput", req)
        out = self.fs_out.pop(req.exec_id, None)
        if out is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND,
                      "Exec %s not found" % req.exec_id)
        yield out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--token-id", required=True)
    p.add_argument("--token-secret", required=True)
    p.add_argument("--cut-logs", type=int, default=0)
    p.add_argument("--unavailable", type=int, default=0)
    p.add_argument("--throttle", default="0:0")
    p.add_argument("--delay", type=float, default=0)
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    a = p.parse_args()
    n, secs = a.throttle.split(":")
    a.throttle_n, a.throttle_secs = int(n), float(secs)
    svc = Servicer(a)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
    pbg.add_ModalClientServicer_to_server(svc, server)
    if a.tls:
        with open(a.tls[0], "rb") as c, open(a.tls[1], "rb") as k:
            creds = grpc.ssl_server_credentials([(k.read(), c.read())])
        port = server.add_secure_port("127.0.0.1:0", creds)
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    tmp = os.path.join(a.dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, os.path.join(a.dir, "port"))

    def stop(*_):
        for b in list(svc.boxes.values()):
            b.kill()
        server.stop(0)
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
