"""Redact a file into another file with bounded memory, and read the tail of a log.

Command logs can be hundreds of megabytes, so they are never read whole: lines are gathered
into batches of about a megabyte (one regex pass per batch, not per line, which is what keeps
this fast) and written out as they are redacted.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import BinaryIO

from agentctl.domain.redaction import Redactor

MAX_LINE_BYTES = 1 << 20  # longer lines are cut into pieces of this size
BATCH_BYTES = 1 << 20
MAX_KEY_BLOCK_BYTES = 256 << 10  # a real PEM block is a few kilobytes

_BEGIN_KEY = re.compile(rb"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_END_KEY = re.compile(rb"-----END [A-Z ]*PRIVATE KEY-----")


def redact_file(source: Path, target: Path, redactor: Redactor) -> int:
    """Write `source` to `target` with every secret the Redactor finds replaced; the count.

    Binary-safe: bytes that are not UTF-8 pass through unchanged (surrogateescape both ways).
    A private key block (BEGIN ... END over many lines) is kept in one batch so it is redacted
    whole; a block with no END within 256 KiB is redacted from its BEGIN up to the next END, or
    to the end of the file, as the Redactor does with a whole string.

    Limits: a line longer than 1 MiB is cut into 1 MiB pieces that may land in different
    batches, so a secret straddling such a cut can be missed; secrets that span lines (other
    than key blocks) are only found when both lines fall in the same batch.
    """
    count = 0
    batch: list[bytes] = []
    batch_bytes = 0
    key_bytes = 0  # bytes since an unclosed BEGIN, or 0 outside a key block
    with open(source, "rb") as reader, open(target, "wb") as writer:
        for line in iter(lambda: reader.readline(MAX_LINE_BYTES), b""):
            batch.append(line)
            batch_bytes += len(line)
            inside = _inside_key_after(line, inside=key_bytes > 0)
            key_bytes = key_bytes + len(line) if inside else 0
            if key_bytes > MAX_KEY_BLOCK_BYTES:
                count += _flush(batch, writer, redactor)
                batch, batch_bytes, key_bytes = [], 0, 0
                remainder = _skip_key_rest(reader)
                if remainder:
                    batch, batch_bytes = [remainder], len(remainder)
                    key_bytes = len(remainder) if _inside_key_after(remainder, inside=False) else 0
            elif not inside and batch_bytes >= BATCH_BYTES:
                count += _flush(batch, writer, redactor)
                batch, batch_bytes = [], 0
        count += _flush(batch, writer, redactor)
    return count


def read_tail(path: Path, max_bytes: int = 65536) -> str:
    """The last `max_bytes` of a file, decoded as UTF-8 with errors replaced; '' if missing."""
    try:
        with open(path, "rb") as reader:
            size = reader.seek(0, 2)
            reader.seek(max(0, size - max_bytes))
            return reader.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _inside_key_after(line: bytes, *, inside: bool) -> bool:
    """Whether a private key block is still open after `line`."""
    begins = [match.start() for match in _BEGIN_KEY.finditer(line)]
    ends = [match.start() for match in _END_KEY.finditer(line)]
    if begins and (not ends or begins[-1] > ends[-1]):
        return True
    if ends:
        return False
    return inside


def _skip_key_rest(reader: BinaryIO) -> bytes:
    """Drop the rest of an oversized key block (already redacted to the end of its batch), up to
    and including its END marker; what follows END on that line is returned to be kept."""
    for line in iter(lambda: reader.readline(MAX_LINE_BYTES), b""):
        end = _END_KEY.search(line)
        if end:
            return line[end.end():]
    return b""


def _flush(batch: list[bytes], writer: BinaryIO, redactor: Redactor) -> int:
    if not batch:
        return 0
    text = b"".join(batch).decode("utf-8", errors="surrogateescape")
    redacted, count = redactor.redact(text)
    writer.write(redacted.encode("utf-8", errors="surrogateescape"))
    return count
