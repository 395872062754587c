#!/usr/bin/env python3
"""png-count.py PNG X0 Y0 X1 Y1 RRGGBB [TOL] - how many pixels of the
box [X0, X1) x [Y0, Y1) of an 8-bit RGB or RGBA PNG (what Chromium's
--screenshot writes) are within TOL (default 8) of colour RRGGBB in each
channel.  Standard library only: zlib and the five PNG row filters."""
import struct
import sys
import zlib


def rows(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("png-count: %s is no PNG" % path)
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or inter:
                sys.exit("png-count: only 8-bit RGB(A), not interlaced")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev = zlib.decompress(idat), w * bpp, bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(
            raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        yield line, bpp
        prev = line


def main():
    path, x0, y0, x1, y1, hexc = sys.argv[1:7]
    tol = int(sys.argv[7]) if len(sys.argv) > 7 else 8
    x0, y0, x1, y1 = int(x0), int(y0), int(x1), int(y1)
    want = [int(hexc[i:i + 2], 16) for i in (0, 2, 4)]
    n = 0
    for y, (line, bpp) in enumerate(rows(path)):
        if y >= y1:
            break
        if y < y0:
            continue
        for x in range(max(0, x0), min(x1, len(line) // bpp)):
            px = line[x * bpp:x * bpp + 3]
            if all(abs(px[k] - want[k]) <= tol for k in range(3)):
                n += 1
    print(n)


main()
