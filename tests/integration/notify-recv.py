#!/usr/bin/env python3
# notify-recv.py PORTFILE OUTDIR MODE [SECONDS] - a loopback webhook
# receiver for the notify tests (python3's http.server): binds an
# ephemeral port on 127.0.0.1, writes it to PORTFILE, and for every POST
# stores the request as OUTDIR/N.json ({"path", "headers", "body"}).
# MODE: ok (answers 200), fail (answers 500), slow (waits SECONDS, then
# 200), hang (never answers; keeps the connection open), flaky (500
# once, then 200).
import http.server, json, os, sys, threading, time

portfile, outdir, mode = sys.argv[1], sys.argv[2], sys.argv[3]
secs = float(sys.argv[4]) if len(sys.argv) > 4 else 5.0
count = [0]
lock = threading.Lock()


class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode("utf-8", "replace")
        with lock:
            count[0] += 1
            k = count[0]
        with open(os.path.join(outdir, "%d.json" % k), "w") as f:
            json.dump({"path": self.path, "headers": dict(self.headers),
                       "body": body}, f)
        if mode == "hang":
            time.sleep(3600)
        if mode == "slow":
            time.sleep(secs)
        code = 500 if mode == "fail" or (mode == "flaky" and k == 1) else 200
        self.send_response(code)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *a):
        pass


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
# A client that gave up (timeouts are the point of some modes) is no
# error worth a traceback.
srv.handle_error = lambda request, address: None
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
