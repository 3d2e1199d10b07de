"""Filling the tree cache (`tree_cache`) with a base: agentctl's bare copy of the source and a
checkout of the commit beside it, its index settled so that a patch is collected by comparing
stat data; and the prefetch, which fills an entry while a run is being set up.

The entry's bare copy links the source's object files (as `git clone` does: git never writes an
object file in place, views never write their lower tree, and the objects are bound read-only
into attempts), so filling it copies no history.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from agentctl.debug_log import logger
from agentctl.execution.git import WorkspaceGit
from agentctl.execution.workspaces.clones import SHA, clone, copy_source
from agentctl.execution.workspaces.overlay import supported as views_supported
from agentctl.execution.workspaces.removal import force_rmtree
from agentctl.execution.workspaces.tree_cache import (
    BLOCK,
    TreeCache,
    acquire,
    cache_key,
    checkout_size,
    note_size,
    walked_usage,
)

__all__ = ["DATE_INDEX_ABOVE_BYTES", "TRACKED", "Prefetch", "builder", "cache_key", "prefetch",
           "shared_indexes"]

DATE_INDEX_ABOVE_BYTES = 2**22  # ~40,000 files: see `_settle`
_FILLING: set[str] = set()  # the cache keys this process's prefetches are filling


def builder(source: str, commit: str, *, is_url: bool, home: Path,
            should_stop: Callable[[], bool] | None) -> Callable[[Path], None]:
    """What fills a cache entry: agentctl's bare copy of the source and a checkout of the
    commit beside it, its index settled; its size is reckoned from the commit's listing while
    the checkout runs, parsed there too (walking 200,000 files after it costs half a second,
    parsing their listing a quarter)."""
    def build(folder: Path) -> None:
        copy_source(source, commit, folder / "base.git", is_url=is_url, home=home,
                    should_stop=should_stop, hardlinks=True)
        checkout = clone(folder / "base.git", folder / "repo", home, should_stop,
                         hardlinks=True)
        sized: list[int] = []
        failed: list[BaseException] = []

        def reckon() -> None:  # listed and parsed while the checkout writes the files
            try:
                listing = checkout.run("ls-tree", "-r", "-l", "-z", "--full-tree", commit,
                                       what=f"cannot list commit {commit}").stdout
                sized.append(checkout_size(listing))
                _keep_tracked(folder, listing)
            except BaseException as error:  # noqa: BLE001 - raised again on the fill's thread
                failed.append(error)

        reckoning = threading.Thread(target=reckon, name="agentctl-reckon", daemon=True)
        reckoning.start()
        try:
            checkout.run("-c", "checkout.workers=0", "-c", "core.splitIndex=true", "checkout",
                         "--quiet", "--detach", commit,
                         what=f"cannot check out commit {commit} of {source}",
                         should_stop=should_stop)
            _settle(checkout)
        finally:
            reckoning.join()
        if failed:
            raise failed[0]
        size = sized[0]
        # the folder itself, the work tree, the two small git folders beside it, the listing
        note_size(folder, BLOCK + size + walked_usage(folder / "base.git", checkout.git_dir,
                                                      folder / TRACKED))
    return build


class Prefetch:
    """The cache entry of a base being filled in a thread while the run is being set up (its
    records, its lease, its sandbox), so a cold cache costs the checkout less that time. The
    attempt's own `clone_at` waits for it (the builder's lock) and pins what it built; a fill
    that failed is redone there, where its error is reported."""

    def __init__(self, source: str, commit: str, *, is_url: bool, cache: TreeCache) -> None:
        self._stopped = threading.Event()
        self._key = cache_key(source, commit)
        _FILLING.add(self._key)
        self._thread = threading.Thread(target=self._fill, args=(source, commit, is_url, cache),
                                        name="agentctl-prefetch", daemon=True)
        self._thread.start()

    def _fill(self, source: str, commit: str, is_url: bool, cache: TreeCache) -> None:
        home = Path(tempfile.mkdtemp(prefix="agentctl-prefetch-"))
        try:
            build = builder(source, commit, is_url=is_url, home=home,
                            should_stop=self._stopped.is_set)
            acquire(cache, self._key, build, should_stop=self._stopped.is_set).release()
        except Exception as error:  # noqa: BLE001 - the attempt builds it again, and says why
            if not self._stopped.is_set():  # its reason kept, for whoever reads the debug log
                logger("agentctl.prefetch").debug(
                    "prefetch of %s at %s failed: %s: %s", source, commit,
                    type(error).__name__, error, exc_info=error)
        finally:
            _FILLING.discard(self._key)
            force_rmtree(str(home))

    def stop(self) -> None:
        """Stop a fill still under way (its git is killed, its staging removed) and wait."""
        self._stopped.set()
        self._thread.join()


def prefetch(source: str, commit: str, *, is_url: bool, cache: TreeCache | None,
             scratch: Path) -> Prefetch | None:
    """Start filling the cache entry of (`source`, `commit`) unless it is there already (or
    being filled by this process), or the run's trees will not be views of it (no cache, or no
    mounts here: the fill would be a checkout nobody uses). Call from the thread that runs the
    attempt: finding out whether views mount here mounts one, in that thread's namespace."""
    key = cache_key(source, commit)
    if cache is None or not SHA.fullmatch(commit) or key in _FILLING or (
            cache.root / key).is_dir():
        return None
    if not views_supported(scratch, cache.root):
        return None
    return Prefetch(source, commit, is_url=is_url, cache=cache)


def _settle(checkout: WorkspaceGit) -> None:
    """Leave no entry of the index racily clean (a file as young as the index itself, which git
    would re-hash at every look): a patch is then collected by comparing stat data, re-reading
    only the files that changed. A small checkout has its files dated two seconds back and the
    index refreshed; a large one (an index over `DATE_INDEX_ABOVE_BYTES`) instead has its index
    dated in a later second than the checkout's: dating every file back makes the refresh
    re-hash every file (seconds on 200,000), and even a refresh that re-reads only the last
    second's files costs most of a second."""
    root = str(checkout.work_tree)
    index = checkout.git_dir / "index"
    shared = shared_indexes(checkout.git_dir)
    if sum(os.stat(path).st_size for path in (index, *shared)) > DATE_INDEX_ABOVE_BYTES:
        _date_later(index)
        return
    then = time.time_ns() - 2_000_000_000
    for folder, subfolders, files in os.walk(root):
        if folder == root:
            subfolders[:] = [name for name in subfolders if name != ".git"]
        for name in files:
            os.utime(os.path.join(folder, name), ns=(then, then), follow_symlinks=False)
    checkout.run("-c", "core.splitIndex=false", "update-index", "-q", "--refresh",
                 what=f"cannot index {root}")
    for path in shared:  # the index is whole again: nothing reads them
        path.unlink()


TRACKED = "tracked"  # an entry's list of the commit's files (`git ls-files -z` of its index)


def _keep_tracked(folder: Path, listing: str) -> None:
    """Keep the paths of the commit's `ls-tree -r -z` `listing` in the entry being built at
    `folder`, as `git ls-files -z` lists them from the checkout's index (what a run reads for
    the base's secret files, then without a git process)."""
    paths = (record.partition("\t")[2] for record in listing.split("\0") if record)
    (folder / TRACKED).write_text("".join(f"{path}\0" for path in paths), encoding="utf-8")


def shared_indexes(git_dir: Path) -> list[Path]:
    """The shared part of a split index (`sharedindex.<id>`), kept in its git folder: the
    cache's large checkouts split theirs, so that each index a run writes (the collector's,
    the verified view's) writes the few entries that changed, not 200,000 (0.03 s instead of
    0.11 s each, measured on the 200,000-file repository); git finds it in the GIT_DIR of
    whatever reads the index, so an attempt's own repository gets a copy."""
    return sorted(git_dir.glob("sharedindex.*"))


def _date_later(index: Path) -> None:
    """Give a fresh checkout's index a later second than any of its files: the next one. The
    checkout wrote every file and recorded its stat data before now, and no file changes after
    (the entry is built in a folder of its own, then only read), so the stat data holds at any
    later time, which is what the index's mtime says. git reads times to the second, so only
    the entries of the index's own second were racy; no wait and no rewrite of 200,000
    entries. (For the rest of this second a same-size edit in a view could look unchanged to
    stat data, which is why collection re-reads every file a view's upper layer holds.)"""
    later = (time.time_ns() // 10**9 + 1) * 10**9  # by the precise clock, ahead of the files'
    os.utime(index, ns=(later, later))
