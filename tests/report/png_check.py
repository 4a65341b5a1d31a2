#!/usr/bin/env python3
"""png_check.py: decodes a PNG (8-bit RGB or RGBA, no interlace: what
Chromium's --screenshot writes) with zlib alone and prints what the report
test asserts on:

    width height nonwhite_fraction distinct_colours top_nonwhite_row

nonwhite: a pixel whose R, G or B is below 245. Exit status 1 when the
file is not a PNG this script can read (the message says why)."""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if not hdr:
        raise ValueError("no IHDR chunk")
    width, height, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("unsupported PNG (depth %d, colour type %d, interlace %d)"
                         % (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev, off = [], bytearray(stride), 0
    for _ in range(height):
        ftype = raw[off]
        line = bytearray(raw[off + 1:off + 1 + stride])
        off += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    if len(sys.argv) != 2:
        print("usage: png_check.py FILE.png", file=sys.stderr)
        return 2
    try:
        width, height, bpp, rows = decode(sys.argv[1])
    except (OSError, ValueError, zlib.error, struct.error) as e:
        print("png_check: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 1
    nonwhite, colours, top = 0, set(), -1
    for y, line in enumerate(rows):
        for x in range(0, width * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if r < 245 or g < 245 or b < 245:
                nonwhite += 1
                if top < 0:
                    top = y
            if len(colours) < 100000:
                colours.add((r, g, b))
    print("%d %d %.4f %d %d" % (width, height, nonwhite / float(width * height), len(colours), top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
