"""The signed checkpoint of the event chain's head, and the key that signs it, as two files in
the state home beside (never inside) the database.

Every transaction that appends events moves the checkpoint forward; it never moves back, so a
log cut after the fact is shorter than its checkpoint. The key is made with a new, empty log (or
by `agentctl audit sign` for a home that predates signing) and is never recreated behind the
user's back: a missing key is a finding, not a reason to start over. The sandbox hides the
state home from agents, which is what keeps the key out of their reach.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from pathlib import Path

from agentctl.domain.audit import Checkpoint, sign

KEY_FILENAME = "audit.key"
CHECKPOINT_FILENAME = "audit.checkpoint"


class AuditSigner:
    def __init__(self, root: Path) -> None:
        self.key_path = root / KEY_FILENAME
        self.checkpoint_path = root / CHECKPOINT_FILENAME
        self._lock_path = root / (CHECKPOINT_FILENAME + ".lock")
        self._key: bytes | None = None

    def key(self) -> bytes | None:
        if self._key is None:
            try:
                self._key = bytes.fromhex(self.key_path.read_text().strip())
            except (FileNotFoundError, ValueError):
                return None
        return self._key

    def create_key(self) -> bytes:
        """A new key, written only if there is none (two processes racing keep the first)."""
        key = secrets.token_bytes(32)
        try:
            descriptor = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            self._key = None
            existing = self.key()
            assert existing is not None, f"{self.key_path} exists but is not a key"
            return existing
        with os.fdopen(descriptor, "w") as handle:
            handle.write(key.hex() + "\n")
        self._key = key
        return key

    def read(self) -> Checkpoint | None:
        """The checkpoint as last written (never half of a write: writers hold the lock)."""
        try:
            lock = open(self._lock_path, "rb")  # a read makes no file
        except FileNotFoundError:  # no checkpoint was ever written here
            return self._read()
        with lock:
            fcntl.flock(lock, fcntl.LOCK_SH)
            return self._read()

    def _read(self) -> Checkpoint | None:
        try:
            data = json.loads(self.checkpoint_path.read_text())
            return Checkpoint(seq=int(data["seq"]), hash=str(data["hash"]), mac=str(data["mac"]))
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError):
            return Checkpoint(seq=0, hash="", mac="unreadable")  # fails its signature check

    def advance(self, seq: int, head_hash: str, *, force: bool = False) -> None:
        """Checkpoint this head unless a later one is already there. Cheap: one small record
        overwritten under a lock, once per committed transaction, not per event."""
        key = self.key()
        if key is None:
            return  # an unsigned (legacy) home: `audit verify` says so
        with open(self._lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            current = self._read()
            if current is not None and current.seq >= seq and not force:
                return
            signed = sign(key, seq, head_hash)
            _overwrite(self.checkpoint_path, json.dumps(
                {"seq": signed.seq, "hash": signed.hash, "mac": signed.mac}))


RECORD_BYTES = 256
"""The checkpoint file's size: its JSON (under 200 bytes) padded with spaces, which JSON
ignores, so every write is one write of the same bytes' span."""


def _overwrite(path: Path, text: str) -> None:
    """`text` as the file's one record, written in place at its start: a single write within
    one disk sector, so a crash leaves the old record or the new one. Not a new file renamed
    over it: ext4 makes such a rename flush the new file's data first, 4 ms (15 at worst) behind
    a disk busy writing a checkout, and a run commits ~20 times."""
    record = text.ljust(RECORD_BYTES - 1).encode() + b"\n"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(descriptor, record, 0)
        if os.fstat(descriptor).st_size > len(record):  # a longer record (not ours): cut
            os.ftruncate(descriptor, len(record))
    finally:
        os.close(descriptor)
