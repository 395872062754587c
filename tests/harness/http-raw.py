#!/usr/bin/env python3
# http-raw.py ADDR [FILE] - sends the bytes of FILE (stdin when absent) to
# ADDR (HOST:PORT or unix:PATH) as they are, then prints what came back
# until the server closes the connection (10 s at most): for requests no
# HTTP client library would send (a folded line, two Authorization
# fields, a head of 20 KiB).  Exits 1 when it cannot connect.
import socket
import sys

addr = sys.argv[1]
data = open(sys.argv[2], 'rb').read() if len(sys.argv) > 2 else \
    sys.stdin.buffer.read()
try:
    if addr.startswith('unix:'):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr[5:])
    else:
        host, port = addr.rsplit(':', 1)
        s = socket.create_connection((host, int(port)))
except OSError as e:
    print('connect: %s' % e, file=sys.stderr)
    sys.exit(1)
s.settimeout(10)
try:
    s.sendall(data)
except OSError:
    pass    # the server may refuse before it read everything
out = b''
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
except OSError:
    pass
sys.stdout.write(out.decode('utf-8', 'replace'))
