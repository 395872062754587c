#!/usr/bin/env python3
# sif-http.py DIR PORTFILE LOGFILE - serves DIR over HTTP on 127.0.0.1 at a
# free port (written to PORTFILE once listening) for the SIF cache tests.
# Each GET is appended to LOGFILE as "GET /path" (flushed at once, so a
# test can count pulls).  Paths under /slow/ serve the same file as
# without the prefix, in 4 KiB pieces 0.1 s apart, so that a test can kill
# a puller mid-transfer.  A query string is ignored (presigned URLs).
import http.server
import os
import sys
import time

root, portfile, logfile = sys.argv[1], sys.argv[2], sys.argv[3]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        with open(logfile, "a") as f:
            f.write("GET %s\n" % self.path)
        slow = self.path.startswith("/slow/")
        rel = self.path[len("/slow/"):] if slow else self.path.lstrip("/")
        # A query (a presigned URL's) does not name the file.
        path = os.path.join(root, os.path.basename(rel.split("?")[0]))
        if not os.path.isfile(path):
            self.send_error(404)
            return
        with open(path, "rb") as f:
            data = f.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            if not slow:
                self.wfile.write(data)
                return
            for i in range(0, len(data), 4096):
                self.wfile.write(data[i:i + 4096])
                self.wfile.flush()
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
tmp = portfile + ".tmp"
with open(tmp, "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(tmp, portfile)
srv.serve_forever()
