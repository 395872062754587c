#!/usr/bin/env python3
# proxy-get.py REQUEST - for the egress tests' tasks: sends REQUEST (its
# \r \n escapes decoded) to the egress proxy named by $HTTP_PROXY, as a
# client of that variable writes it, reads the answer to its end and
# prints its first line.
import os, socket, sys
p = os.environ["HTTP_PROXY"].rsplit(":", 1)[1]
s = socket.create_connection(("127.0.0.1", int(p)))
s.sendall(sys.argv[1].encode().decode("unicode_escape").encode())
b = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    b += d
print(b.split(b"\r\n")[0].decode())
