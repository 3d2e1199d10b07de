"""The signed checkpoint file: overwritten in place under a lock, by any number of processes at
once, and always readable as one whole record that never moves back."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from agentctl.domain.audit import CheckpointState, checkpoint_state
from agentctl.store.checkpoint import RECORD_BYTES, AuditSigner

WRITERS, ADVANCES = 4, 150


def _advance_many(root: str, first: int) -> None:
    signer = AuditSigner(Path(root))
    for seq in range(first, first + ADVANCES * WRITERS, WRITERS):
        signer.advance(seq, f"{seq:064x}")


def test_writers_at_once_leave_a_whole_signed_record_that_never_moves_back(
        tmp_path: Path) -> None:
    signer = AuditSigner(tmp_path)
    key = signer.create_key()
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_advance_many, args=(str(tmp_path), first))
               for first in range(1, WRITERS + 1)]
    for writer in writers:
        writer.start()
    seen = []
    while any(writer.is_alive() for writer in writers):
        checkpoint = signer.read()
        if checkpoint is not None:
            assert checkpoint_state(key, checkpoint, checkpoint.hash, checkpoint.seq) \
                is CheckpointState.VERIFIED, checkpoint
            seen.append(checkpoint.seq)
    assert all(writer.exitcode == 0 for writer in writers)
    assert seen == sorted(seen), "the checkpoint moved back"
    last = signer.read()
    assert last is not None and last.seq == ADVANCES * WRITERS
    assert (tmp_path / "audit.checkpoint").stat().st_size == RECORD_BYTES


def test_a_checkpoint_written_as_a_longer_file_is_replaced_whole(tmp_path: Path) -> None:
    """A record written otherwise (an earlier version's, or longer than ours) leaves nothing of
    itself behind the new one."""
    signer = AuditSigner(tmp_path)
    key = signer.create_key()
    (tmp_path / "audit.checkpoint").write_text(
        json.dumps({"seq": 1, "hash": "0" * 64, "mac": "x" * 64, "note": "y" * 600}) + "\n")
    signer.advance(2, "2" * 64)
    checkpoint = signer.read()
    assert checkpoint is not None and (checkpoint.seq, checkpoint.hash) == (2, "2" * 64)
    assert checkpoint_state(key, checkpoint, "2" * 64, 2) is CheckpointState.VERIFIED
    assert (tmp_path / "audit.checkpoint").stat().st_size == RECORD_BYTES
