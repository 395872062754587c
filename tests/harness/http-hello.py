#!/usr/bin/env python3
# http-hello.py PORTFILE - a loopback HTTP server for the egress tests:
# listens on 127.0.0.1 at a free port (written to PORTFILE) and answers
# every request, once its header came, "hello\n" (HTTP/1.0, 6 bytes), one
# thread per connection.  Runs until killed.
import socket, sys, threading
ANSWER = b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n"
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
def serve(c):
    b = b""
    while b"\r\n\r\n" not in b:
        d = c.recv(4096)
        if not d:
            break
        b += d
    c.sendall(ANSWER)
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,)).start()
