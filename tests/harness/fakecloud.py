"""fakecloud.py - what the fake cloud APIs (fake-daytona.py,
fake-vercel.py) share: the command line common to both and serving on a
private loopback port written to DIR/port.  Standard library only."""
import argparse
import os
import signal
import sys
import time
from http.server import ThreadingHTTPServer


def parse_args(*extra):
    """--dir, --token, --fail-create N, --drop-streams N, --stall-reads,
    plus the
    required options extra."""
    ap = argparse.ArgumentParser()
    for name in ("--dir", "--token") + extra:
        ap.add_argument(name, required=True)
    ap.add_argument("--fail-create", type=int, default=0)
    # Cuts that many command streams after their first log line, the
    # connection reset without the chunked body's end (a dropped stream).
    ap.add_argument("--drop-streams", type=int, default=0)
    # Never answers a file read (a provider that stopped answering): the
    # request waits until the client gives up.
    ap.add_argument("--stall-reads", action="store_true")
    return ap.parse_args()


def stall(args):
    """With --stall-reads, holds the request until the fake is stopped."""
    while args.stall_reads:
        time.sleep(1)


def serve(handler, dir, cleanup):
    """Serves handler on 127.0.0.1 (a free port, written to dir/port once
    listening) until SIGTERM, then calls cleanup()."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    tmp = os.path.join(dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(dir, "port"))
    try:
        srv.serve_forever()
    finally:
        cleanup()
