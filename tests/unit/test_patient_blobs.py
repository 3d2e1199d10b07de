"""An artifact store that cannot be written holds the attempt up to its bound, then fails it.
The store below is a stand-in for a filesystem that refuses writes for a while; the clock is
the test's, so the bound is counted, not waited."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.domain.blob import StoredBlob
from agentctl.services.lifecycle.patient_blobs import BlobOutage, PatientBlobs
from agentctl.store.blobs import BlobStore


class RefusingStore:
    """Refuses `refusals` writes with `code`, then takes them."""

    def __init__(self, refusals: int, code: int = errno.EROFS) -> None:
        self.refusals, self.code, self.tries = refusals, code, 0

    def put_bytes(self, data: bytes, /) -> StoredBlob:
        self.tries += 1
        if self.tries <= self.refusals:
            raise OSError(self.code, "Read-only file system")
        return StoredBlob("0" * 64, len(data), "artifacts/x")

    def put_file(self, path: Path, /, *, move: bool = False) -> StoredBlob:
        return self.put_bytes(path.read_bytes())

    def staging_file(self) -> Path:
        raise NotImplementedError

    def open_chunks(self, uri: str, /) -> Iterator[bytes]:
        raise NotImplementedError

    def path_for(self, uri: str, /) -> Path:
        raise NotImplementedError

    def verify(self, uri: str, sha256: str, /) -> str | None:
        raise NotImplementedError


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def patient(store: RefusingStore, seconds: float, *, stopped: bool = False,
            ) -> tuple[PatientBlobs, list[str], Clock]:
    clock, said = Clock(), list[str]()
    outage = BlobOutage(seconds, stopped=lambda: stopped, warn=said.append, sleep=clock.sleep,
                        clock=clock)
    return PatientBlobs(store, outage), said, clock


def test_a_store_read_only_for_a_while_is_waited_out_with_one_warning() -> None:
    store = RefusingStore(refusals=8)
    blobs, said, clock = patient(store, seconds=60)

    assert blobs.put_bytes(b"log").size_bytes == 3
    assert store.tries == 9
    assert len(said) == 1 and "cannot be written" in said[0] and "60 s" in said[0]
    assert 0 < clock.now < 60


def test_a_store_read_only_past_the_bound_fails_the_write_with_its_error() -> None:
    blobs, said, clock = patient(RefusingStore(refusals=10_000), seconds=5)

    with pytest.raises(OSError) as raised:
        blobs.put_bytes(b"log")
    assert raised.value.errno == errno.EROFS
    assert clock.now <= 5 and len(said) == 1


def test_a_stopped_attempt_and_an_error_of_the_request_are_not_waited_for() -> None:
    stopped, said, clock = patient(RefusingStore(refusals=1), seconds=60, stopped=True)
    with pytest.raises(OSError):
        stopped.put_bytes(b"log")
    missing, _, _ = patient(RefusingStore(refusals=1, code=errno.ENOENT), seconds=60)
    with pytest.raises(FileNotFoundError):
        missing.put_bytes(b"log")
    assert clock.now == 0 and said == []


def test_a_staged_write_cut_short_by_a_full_store_is_made_again_whole(tmp_path: Path) -> None:
    """A log redacted into a staging file of the store that fills up halfway: the whole
    write (staging file, content, move) is tried again, and no half file stays behind."""
    clock, said = Clock(), list[str]()
    outage = BlobOutage(60, stopped=lambda: False, warn=said.append, sleep=clock.sleep,
                        clock=clock)
    blobs = PatientBlobs(BlobStore(tmp_path / "artifacts"), outage)
    staged: list[Path] = []

    def write(staging: Path) -> int:
        staged.append(staging)
        with staging.open("wb") as out:
            out.write(b"half")
            if len(staged) < 3:
                raise OSError(errno.ENOSPC, "No space left on device")
            out.write(b" and whole")
        return 7

    blob, made = blobs.put_written(write)

    assert made == 7 and len(staged) == 3
    assert b"".join(blobs.open_chunks(blob.uri)) == b"half and whole"
    assert not any(path.exists() for path in staged)
    assert len(said) == 1 and "No space left" in said[0]
