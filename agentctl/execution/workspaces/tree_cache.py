"""A cache of base trees in the state home: one entry per (repository, commit), written once and
then only read, bounded in size, the least recently used entry evicted first.

An entry is built in `tmp/` and renamed into place (atomic: a reader sees all of it or none);
one worker builds a key while the others wait for it (`<key>.build`, an exclusive flock, which
the builder's git processes inherit: a builder killed halfway holds it until its last git has
ended, so nobody removes a folder still being written). A run pins its entry with a shared
flock on `<key>.pin` for as long as it uses it, and eviction only takes entries it can lock
exclusively, so no entry disappears under a run. `lock` serialises pinning, adding and evicting.
Locks are flocks: a worker that dies drops its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import stat
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution import lifelines
from agentctl.execution.workspaces.removal import force_rmtree

FOLDER = "trees"  # the cache's folder in the state home
KEY = re.compile(r"[0-9a-f]{32}")  # what `cache_key` gives
_WAIT_SECONDS = 0.005  # polling a lock another worker (or this run's prefetch) holds: a
# cold run waits so for its own prefetch to build the entry, and finds it built half a poll late


@dataclass(frozen=True, slots=True)
class TreeCache:
    """Where the cache lives and how large it may grow (bytes on disk)."""

    root: Path
    max_bytes: int


@dataclass(frozen=True, slots=True)
class PinnedEntry:
    """An entry held for a run: it stays until `release` (or the process ends)."""

    path: Path
    pin: int  # a descriptor holding a shared flock on the entry's pin file
    built: bool  # this call built it (the cache was cold)

    def release(self) -> None:
        os.close(self.pin)


def cache_key(source: str, commit: str) -> str:
    """The key of a base (`source` at `commit`): its tree entry's name here, and the name its
    checkout is kept under beside the baselines (`kept_checkouts`)."""
    return hashlib.sha256(f"{source}\0{commit}".encode()).hexdigest()[:32]


def in_home(home: Path, max_mb: int) -> TreeCache | None:
    """The state home's cache (`[store] tree_cache_mb`), None when it is switched off."""
    return TreeCache(home / FOLDER, max_mb * 2**20) if max_mb > 0 else None


def acquire(cache: TreeCache, key: str, build: Callable[[Path], None], *,
            should_stop: Callable[[], bool] | None = None) -> PinnedEntry:
    """The entry for `key`, pinned; built with `build(folder)` first when missing (which may
    raise, leaving nothing behind). Entries over the bound are evicted after an addition."""
    if not KEY.fullmatch(key):
        raise ValueError(f"not a cache key: {key!r}")
    (cache.root / "tmp").mkdir(parents=True, exist_ok=True)
    pinned = _pin_existing(cache, key)
    if pinned is not None:
        return pinned
    with _exclusive(cache.root / f"{key}.build", should_stop) as building:
        pinned = _pin_existing(cache, key)
        if pinned is not None:  # another worker built it while we waited
            return pinned
        for stale in (cache.root / "tmp").glob(f"{key}.*"):  # a builder that died halfway
            with suppress(OSError):  # left for `clear`: never this run's failure
                remove_tree(stale)
        staging = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=cache.root / "tmp"))
        try:
            with lifelines.holding(building):  # its git keeps the build lock while it lives
                build(staging)
            if not (staging / "size").exists():  # not known to its builder
                note_size(staging, disk_usage(staging))
            _note_place(staging)
            with _exclusive(cache.root / "lock"):
                os.rename(staging, cache.root / key)
                pin = _pin(cache, key)
                evict(cache, keep=key)
        except BaseException:
            remove_tree(staging)
            raise
    return PinnedEntry(cache.root / key, pin, built=True)


def evict(cache: TreeCache, keep: str | None = None) -> list[str]:
    """Remove the least recently used unpinned entries until the rest fit `max_bytes` (an entry
    in use, and `keep`, always stay). The caller holds `lock`. Returns the keys removed."""
    entries = []
    for key, size, used in _entries(cache):
        entries.append((used, key, size))
    total = sum(size for _, _, size in entries)
    removed: list[str] = []
    for _used, key, size in sorted(entries):
        if total <= cache.max_bytes:
            break
        if key == keep or not _remove_unpinned(cache, key):
            continue
        total -= size
        removed.append(key)
    return removed


@dataclass(frozen=True, slots=True)
class Entry:
    """An entry in place: its key and the bytes it takes on disk (as eviction counts them)."""

    key: str
    size: int


@dataclass(frozen=True, slots=True)
class Cleared:
    """What `clear` did: the entries it removed, those it kept because a run pins them, and
    the leftovers in `tmp/` it removed (by name, not key)."""

    removed: tuple[Entry, ...]
    kept: tuple[Entry, ...]
    leftovers: tuple[Entry, ...] = ()


def entries(cache: TreeCache) -> list[Entry]:
    """The entries in place, none when the cache folder does not exist (nothing is created)."""
    if not cache.root.is_dir():
        return []
    return [Entry(key, size) for key, size, _used in _entries(cache)]


def leftovers(cache: TreeCache) -> list[Entry]:
    """What builders and removers that died left in `tmp/` (half-built or half-removed
    entries), by folder name with its bytes on disk; a folder a live builder works in is not.
    A probe, like `is_pinned`."""
    found = [child for child in _in_tmp(cache) if not _locked(cache.root / _build_file(child))]
    return [Entry(child.name, disk_usage(child)) for child in found]


def is_pinned(cache: TreeCache, key: str) -> bool:
    """Whether a live run holds the entry right now: its pin file's lock cannot be taken
    exclusively. A probe: it creates nothing and leaves the entry's last use alone."""
    return _locked(cache.root / f"{key}.pin")


def _locked(path: Path) -> bool:
    """Whether a process holds a flock on `path` (one that does not exist: no)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)  # drops the probe's lock, if it got it
    return False


def clear(cache: TreeCache) -> Cleared:
    """Remove every entry no live run pins, as eviction does (each renamed out of place whole,
    then deleted, under `lock`, so no worker takes half an entry for a whole one); the pinned
    ones stay. Nothing is created when the cache folder does not exist."""
    if not cache.root.is_dir():
        return Cleared((), ())
    (cache.root / "tmp").mkdir(exist_ok=True)
    removed: list[Entry] = []
    kept: list[Entry] = []
    with _exclusive(cache.root / "lock"):
        for key, size, _used in list(_entries(cache)):
            (removed if _remove_unpinned(cache, key) else kept).append(Entry(key, size))
        left = [entry for child in _in_tmp(cache)
                if (entry := _remove_leftover(cache, child)) is not None]
    return Cleared(tuple(removed), tuple(kept), tuple(left))


def _remove_leftover(cache: TreeCache, child: Path) -> Entry | None:
    """Remove a folder of `tmp/` unless its key is being built (None then). The caller holds
    `lock`, which every eviction holds while it deletes, so a `.evicted.` folder seen here is
    a dead remover's; the key's build lock keeps off a builder, and its clean-up of the key's
    stale folders, while this one goes."""
    with _if_free(cache.root / _build_file(child)) as free:
        if not free:
            return None  # a live builder's
        size = disk_usage(child)
        remove_tree(child)
    return Entry(child.name, size)


def _in_tmp(cache: TreeCache) -> list[Path]:
    """The folders in `tmp/` named after an entry's key: being built, or being removed."""
    folder = cache.root / "tmp"
    if not folder.is_dir():
        return []
    return [child for child in folder.iterdir()
            if KEY.fullmatch(child.name.partition(".")[0]) and child.is_dir()]


def _build_file(child: Path) -> str:
    """The lock file of the key a folder of `tmp/` belongs to."""
    return f"{child.name.partition('.')[0]}.build"


def _remove_unpinned(cache: TreeCache, key: str) -> bool:
    """Remove the entry unless a run pins it (False then). The caller holds `lock`: the entry
    is renamed into `tmp/` first, so the key is gone at once and no reader sees a part of it."""
    pin_file = cache.root / f"{key}.pin"
    with _if_free(pin_file) as free:
        if not free:
            return False  # a run uses it
        doomed = Path(tempfile.mkdtemp(prefix=f"{key}.evicted.", dir=cache.root / "tmp"))
        os.rename(cache.root / key, doomed / "entry")
        pin_file.unlink()
    remove_tree(doomed)
    return True


def disk_usage(*paths: Path) -> int:
    """Bytes on disk under `paths`, a file linked twice counted once: `du`, as walking 200,000
    files from Python takes a second more. Raises OSError when du gives no total."""
    result = subprocess.run(["du", "-s", "-c", "-B1", "--", *map(str, paths)],
                            capture_output=True, text=True, check=False)
    try:  # du prints the total even when some folder could not be read (exit status 1)
        return int(result.stdout.splitlines()[-1].split("\t", 1)[0])
    except (IndexError, ValueError):
        raise OSError(f"cannot measure {paths[0]}: {result.stderr.strip()}") from None


def walked_usage(*paths: Path) -> int:
    """What `disk_usage` gives for `paths`, walked here without starting `du`: for a fill's
    own git folders and notes (the base's object files, a few packs or a few hundred loose
    ones, and git's small files), where the process costs more than the walk. Every path is
    counted with what it holds, a file linked twice once."""
    seen: set[tuple[int, int]] = set()
    total = 0
    pending = [os.fspath(path) for path in paths]
    while pending:
        path = pending.pop()
        status = os.lstat(path)
        if (status.st_dev, status.st_ino) in seen:
            continue
        seen.add((status.st_dev, status.st_ino))
        total += status.st_blocks * 512
        if stat.S_ISDIR(status.st_mode):
            pending.extend(os.path.join(path, name) for name in os.listdir(path))
    return total


BLOCK = 4096  # what `du` counts in, on the filesystems a state home lives on
_INLINE_LINK = 60  # ext4 keeps a link's target this short in its inode: no block
# `ls-tree -r -l -z` records: "<mode> <type> <id> <size>\t<path>\0", the size padded to 7
_SIZE = re.compile(r" +(\d+)\t")
_LINK_SIZE = re.compile(r"120000 blob [0-9a-f]+ +(\d+)\t")
_FOLDER = re.compile(r"\t([^\0]*)/[^/\0]*\0")


def checkout_size(listing: str) -> int:
    """Bytes a checkout takes on disk, its `.git` aside, as `du` counts them, from the commit's
    `git ls-tree -r -l -z --full-tree` listing (read from the objects, so while the checkout is
    still being written): each file's size rounded up to a block (a link's target is kept in
    its inode when short), a block for a submodule's empty folder and for each folder. Parsed
    by pattern, 200,000 records at once: walking them after the checkout costs half a second."""
    sizes = Counter(_SIZE.findall(listing))  # a few hundred distinct sizes, not 200,000
    blocks = sum(count * ((int(size) + BLOCK - 1) // BLOCK) for size, count in sizes.items())
    blocks -= sum(1 for size in _LINK_SIZE.findall(listing) if 0 < int(size) < _INLINE_LINK)
    blocks += listing.count("160000 commit ")
    folders = {""}
    for folder in set(_FOLDER.findall(listing)):
        while folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    return (blocks + len(folders)) * BLOCK


def note_size(folder: Path, size: int) -> None:
    """Record the bytes an entry being built in `folder` takes on disk, known to its builder
    (else `acquire` measures the entry, walking all of it)."""
    (folder / "size").write_text(f"{size}\n", encoding="ascii")


def remove_tree(path: Path) -> None:
    """Delete a folder of the cache's (read-only object files included); gone already is fine."""
    if os.path.lexists(path):
        force_rmtree(str(path))


def _entries(cache: TreeCache) -> Iterator[tuple[str, int, float]]:
    """(key, size, last use) of each entry in place."""
    for child in cache.root.iterdir():
        if not KEY.fullmatch(child.name) or not child.is_dir():
            continue
        try:
            size = int((child / "size").read_text(encoding="ascii"))
        except (OSError, ValueError):
            try:
                size = disk_usage(child)
            except OSError:
                if not child.exists():  # evicted meanwhile (a reader does not hold `lock`)
                    continue
                raise
        try:
            used = (cache.root / f"{child.name}.pin").stat().st_mtime
        except OSError:
            used = 0.0
        yield child.name, size, used


def _pin_existing(cache: TreeCache, key: str) -> PinnedEntry | None:
    """The entry pinned, or None when there is none; one that is not where it was built (the
    home was copied or restored: see `_note_place`) is removed and is then none."""
    with _exclusive(cache.root / "lock"):
        entry = cache.root / key
        if not entry.is_dir():
            return None
        if not _in_place(entry) and _remove_unpinned(cache, key):
            return None
        return PinnedEntry(entry, _pin(cache, key), built=False)


_PLACE = "place"  # an entry's file naming the inode its folder was built in


def _note_place(folder: Path) -> None:
    """Record the inode of the entry's folder (a rename into place keeps it). A checkout's index
    holds each file's inode and change time, which a view of the entry, hard-linked, shares; a
    copy of the entry (`cp -a` of the home, a restored backup) has new ones, and git then takes
    every file for changed and refuses to apply a patch to it."""
    (folder / _PLACE).write_text(f"{os.stat(folder).st_ino}\n", encoding="ascii")


def _in_place(entry: Path) -> bool:
    """Whether the entry's folder is the one it was built in (an entry made before entries
    noted their place counts as in place, as it always did)."""
    try:
        noted = int((entry / _PLACE).read_text(encoding="ascii"))
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return noted == os.stat(entry).st_ino


def _pin(cache: TreeCache, key: str) -> int:
    """A shared lock on the entry's pin file, whose mtime is the entry's last use."""
    pin_file = cache.root / f"{key}.pin"
    descriptor = os.open(pin_file, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(descriptor, fcntl.LOCK_SH)
    os.utime(descriptor)
    return descriptor


@contextmanager
def _if_free(path: Path) -> Iterator[bool]:
    """An exclusive flock on `path` when no process holds one (True), else False at once."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(descriptor)


@contextmanager
def _exclusive(path: Path, should_stop: Callable[[], bool] | None = None) -> Iterator[int]:
    """An exclusive flock on `path`, waited for (giving up when `should_stop` fires); the
    descriptor holding it."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | (fcntl.LOCK_NB if should_stop else 0))
                break
            except BlockingIOError:
                if should_stop is not None and should_stop():
                    raise InfrastructureFailure(
                        "cancelled while another worker was caching the base") from None
                time.sleep(_WAIT_SECONDS)
        yield descriptor
    finally:
        os.close(descriptor)
