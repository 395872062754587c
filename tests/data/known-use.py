# known-use.py - a task whose use is known, for the accounting tests:
# touches 200 MB (one page in every 4 KiB of a bytearray, so all of it is
# resident) and then spins until it has used 1 s of CPU time itself.
import time

b = bytearray(200 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
t = time.process_time()
while time.process_time() - t < 1.0:
    pass
