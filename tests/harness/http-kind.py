#!/usr/bin/env python3
# http-kind.py KIND ADDR PORTFILE LOG - a server for the egress attacks
# (tests/security/s13*): on ADDR (IPv4 or IPv6) at a free port (written
# to PORTFILE once listening), each GET is logged (its path, one line
# in LOG) and answered "KIND-body\n"; KIND udp instead receives
# datagrams, logging "datagram" for each.  Runs until killed.
import http.server, socket, sys
kind, addr, portfile, log = sys.argv[1:5]
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
if kind == "udp":
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((addr, 0))
    open(portfile, "w").write(str(s.getsockname()[1]))
    while True:
        s.recvfrom(65536)
        open(log, "a").write("datagram\n")
class S(http.server.ThreadingHTTPServer):
    address_family = fam
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(log, "a").write(self.path + "\n")
        body = (kind + "-body\n").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = S((addr, 0), H)
open(portfile, "w").write(str(srv.server_address[1]))
srv.serve_forever()
