"""Payloads and headers written by MXNet 1.9.1 (tools/gen_recordio_fixtures.py) and by
neogluon (tests/test_recordio.py). Payloads holding the magic number at 4-byte aligned offsets
are stored as split records."""
import struct

MAGIC = struct.pack("<I", 0xCED7230A)
PAYLOADS = [b"", b"a", b"abcd", b"abcde", MAGIC, b"xxxx" + MAGIC + b"yy", b"x" + MAGIC + b"yyy",
            MAGIC + MAGIC + b"zz" + MAGIC, b"0123" * 100 + MAGIC + b"tail",
            bytes(range(256)) * 3]
HEADERS = [((0, 3.5, 7, 1), b"img"), ((5, [1, 2, 3], 9, 0), b"img2"), ((0, 0, 2**40, 3), b"")]
