"""The signed checkpoint of the event chain's head, and the key that signs it, as two files in
the state home beside (never inside) the database.

Every transaction that appends events moves the checkpoint forward; it never moves back, so a
log cut after the fact is shorter than its checkpoint. The key is made with a new, empty log (or
by `agentctl audit sign` for a home that predates signing) and is never recreated behind the
user's back: a missing key is a finding, not a reason to start over. The sandbox hides the
state home from agents, which is what keeps the key out of their reach.
"""

from __future__ import annotations

import contextlib
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
        try:
            data = json.loads(self.checkpoint_path.read_text())
            return Checkpoint(seq=int(data["seq"]), hash=str(data["hash"]), mac=str(data["mac"]))
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError):
            return Checkpoint(seq=0, hash="", mac="unreadable")  # fails its signature check

    def advance(self, seq: int, head_hash: str, *, force: bool = False) -> None:
        """Checkpoint this head unless a later one is already there. Cheap: one small file
        replaced under a lock, once per committed transaction, not per event."""
        key = self.key()
        if key is None:
            return  # an unsigned (legacy) home: `audit verify` says so
        with open(self._lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            current = self.read()
            if current is not None and current.seq >= seq and not force:
                return
            signed = sign(key, seq, head_hash)
            staging = self.checkpoint_path.with_name(f".{CHECKPOINT_FILENAME}.{os.getpid()}")
            staging.write_text(json.dumps({"seq": signed.seq, "hash": signed.hash,
                                           "mac": signed.mac}) + "\n")
            try:
                os.replace(staging, self.checkpoint_path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    staging.unlink()
