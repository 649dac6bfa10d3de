"""Reading a gzip-compressed trace (``.jsonl.gz``, what the trace directory keeps) as far as
its stream goes, never past a size limit however small the file."""

from __future__ import annotations

import zlib
from typing import IO

GZIP_MAGIC = b"\x1f\x8b"


class NotGzip(ValueError):
    """The file starts like gzip but nothing of it decompresses."""


def gunzip(head: bytes, rest: IO[bytes], limit: int) -> bytes:
    """``head`` and the rest of the file decompressed, at most ``limit + 1`` bytes (the
    caller reports a trace over the limit). A run that crashed leaves a stream without its
    end: what decompresses is returned, and the reader reports the last line cut off; so is
    what decoded before a corrupt part."""
    z = zlib.decompressobj(wbits=31)
    out = bytearray()
    chunk = head
    try:
        while chunk and len(out) <= limit:
            out += z.decompress(chunk, limit + 1 - len(out))
            chunk = z.unconsumed_tail or rest.read(1 << 20)
            if z.eof:
                break
    except zlib.error as exc:
        if not out:
            raise NotGzip(str(exc)) from None
    return bytes(out)
