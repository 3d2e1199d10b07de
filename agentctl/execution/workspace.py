"""Throw-away git workspaces: a private directory per attempt, holding agentctl's own bare copy
of the base commit, the agent's work tree cloned from it, and (after the agent) a fresh
checkout where the patch alone is verified.

Writing the files dominates preparing a workspace, so clones copy objects without a checkout
and the work tree is then checked out in parallel (`checkout.workers=0`: one worker per core).
The user's repository is only ever read, once, into the bare copy; nothing of the agent's can
reach it or the bare copy through git (`--no-hardlinks`, and agentctl's git never runs in the
agent's `.git`: see `git.WorkspaceGit`).

With the state home's tree cache (`tree_cache`), each base is checked out once, and the agent's
work tree, the verified tree and the baseline tree are copy-on-write views of that checkout
(`overlay`): preparing one costs a mount, not a checkout, and nothing written in a view reaches
the cache. The cache's bare copy links the source's object files (as `git clone` does: git
never writes an object file in place, views never write their lower tree, and the objects are
bound read-only into attempts), so filling it copies no history. Where views cannot be
mounted, each is a checkout of its own as above.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution.discard import ATTEMPT_DIR_PREFIX, held, hold, remove_workspace
from agentctl.execution.git import (
    GitCancelled,
    WorkspaceGit,
    copy_index,
    hardened_argv,
    hardened_env,
    one_line,
    run_git_process,
    trusted_git,
)
from agentctl.execution.overlay import (
    OverlayRefused,
    bind_read_only,
    mount_view,
    upper_of,
)
from agentctl.execution.overlay import forget as forget_views
from agentctl.execution.overlay import supported as views_supported
from agentctl.execution.removal import force_rmtree
from agentctl.execution.tree_cache import (
    BLOCK,
    TreeCache,
    acquire,
    checkout_size,
    disk_usage,
    note_size,
)
from agentctl.execution.tree_edit import diff_paths, names_gitlink, work_tree_tree
from agentctl.execution.upper_layer import touched

_SHA = re.compile(r"[0-9a-fA-F]{7,64}")
BASE_REF = "refs/heads/agentctl-base"

__all__ = ["AttemptDirs", "CloneCancelled", "Prefetch", "checkout_base", "checkout_patched",
           "clone_at", "create_attempt_dirs", "one_line", "prefetch", "require_sha",
           "uses_views", "view_layers"]

CloneCancelled = GitCancelled
DATE_INDEX_ABOVE_BYTES = 2**22  # ~40,000 files: see `_settle`
_FILLING: set[str] = set()  # the cache keys this process's prefetches are filling


@dataclass(frozen=True, slots=True)
class AttemptDirs:
    """An attempt's private (0700) directory and what it holds."""

    root: Path

    @property
    def tree(self) -> Path:
        """The agent's work tree (a git clone of the base commit)."""
        return self.root / "repo"

    @property
    def scratch(self) -> Path:
        """Logs, the task file, tool output: outside the work tree, never in a patch."""
        return self.root / "scratch"

    @property
    def base(self) -> Path:
        """agentctl's bare copy of the base commit: the GIT_DIR of its own git calls."""
        return self.root / "base.git"

    @property
    def index(self) -> Path:
        """agentctl's index of the work tree, written right after the checkout (its stat
        cache spares re-hashing unchanged files when the patch is collected)."""
        return self.root / "index"

    @property
    def verify(self) -> Path:
        """A fresh checkout of the base commit with the patch applied: what is verified."""
        return self.root / "verify"

    @property
    def base_verify(self) -> Path:
        """A clean checkout of the base commit, where the plan runs for the baseline."""
        return self.root / "base-verify"

    @property
    def git(self) -> WorkspaceGit:
        return WorkspaceGit(git_dir=self.base, work_tree=self.tree, home=self.root / "git-home")

    def layers(self, view: Path) -> Path:
        """Where the view at `view` (the work tree, the verified tree) keeps its writes."""
        return self.root / "layers" / view.name


def require_sha(commit: str) -> str:
    """A commit id as git prints it; anything else is refused before it reaches a command line."""
    if not _SHA.fullmatch(commit):
        raise InfrastructureFailure(f"invalid commit id {commit!r}: expected a hexadecimal sha")
    return commit


def create_attempt_dirs(parent: Path | None = None) -> AttemptDirs:
    """A new private (0700) directory under `parent` (default: the system temp dir), symlinks
    resolved."""
    dirs = AttemptDirs(Path(tempfile.mkdtemp(prefix=ATTEMPT_DIR_PREFIX, dir=parent)).resolve())
    dirs.scratch.mkdir()
    (dirs.root / "git-home").mkdir()
    return dirs


def clone_at(source: str, commit: str, dirs: AttemptDirs, *, is_url: bool,
             should_stop: Callable[[], bool] | None = None,
             cache: TreeCache | None = None) -> None:
    """The bare copy of `source` at `commit`, and the work tree checked out (HEAD detached) from
    it. The work tree keeps no remote: an agent's `git push` or `git fetch` reaches nothing.
    With `cache` (and where views can be mounted) the work tree is a copy-on-write view of the
    cached checkout, and so are the verified and the baseline trees later.
    Raises InfrastructureFailure (CloneCancelled when `should_stop` fired)."""
    require_sha(commit)
    if cache is not None and views_supported(dirs.root, cache.root) and _attach(
            source, commit, dirs, is_url=is_url, cache=cache, should_stop=should_stop):
        return
    _copy_source(source, commit, dirs.base, is_url=is_url, home=dirs.root / "git-home",
                 should_stop=should_stop)
    checkout = _clone_base(dirs, dirs.tree, should_stop)
    checkout.run("-c", "checkout.workers=0", "checkout", "--quiet", "--detach", commit,
                 what=f"cannot check out commit {commit} of {source}", should_stop=should_stop)
    copy_index(dirs.tree / ".git" / "index", dirs.index)


def view_layers(dirs: AttemptDirs) -> tuple[Path, Path] | None:
    """The agent's work tree as (the cached tree it is a view of, its upper layer), or None
    when it is a checkout of its own."""
    pinned = held(dirs.root)
    if pinned is None:
        return None
    return pinned.path / "repo", upper_of(dirs.layers(dirs.tree))


def uses_views(dirs: AttemptDirs) -> bool:
    """Whether the attempt's trees are views of a cached checkout (made cheaply, never kept)."""
    return held(dirs.root) is not None


def _copy_source(source: str, commit: str, base: Path, *, is_url: bool, home: Path,
                 should_stop: Callable[[], bool] | None, hardlinks: bool = False) -> None:
    """agentctl's bare copy of `source`, with a branch of its own at `commit`, so that clones of
    the copy carry the base even when no branch of the source points at it (a fetched commit,
    a tag, a reflog entry)."""
    if is_url:
        _fetch_commit(source, commit, base, should_stop)
    else:
        if not Path(source).exists():
            raise InfrastructureFailure(f"cannot clone {source}: the repository does not exist")
        links = () if hardlinks else ("--no-hardlinks",)  # git copies across filesystems
        trusted_git(["clone", "--quiet", "--bare", *links, "--", source, str(base)],
                    what=f"cannot clone {source}", should_stop=should_stop)
    WorkspaceGit(git_dir=base, work_tree=base.parent, home=home).run(
        "update-ref", BASE_REF, commit, what=f"cannot check out commit {commit} of {source}")


def _attach(source: str, commit: str, dirs: AttemptDirs, *, is_url: bool, cache: TreeCache,
            should_stop: Callable[[], bool] | None) -> bool:
    """Pin the cached checkout of (`source`, `commit`), built first when the cache is cold;
    agentctl's own repository borrows its objects (anything new is written to its own), and the
    work tree is a view of it. False (nothing pinned) when the view cannot be mounted."""
    home = dirs.root / "git-home"
    build = _builder(source, commit, is_url=is_url, home=home, should_stop=should_stop)
    entry = acquire(cache, _key(source, commit), build, should_stop=should_stop)
    try:
        mount_view(entry.path / "repo", dirs.layers(dirs.tree), dirs.tree)
    except OverlayRefused:
        entry.release()
        remove_workspace(dirs.root / "layers")
        forget_views(dirs.root, cache.root)
        return False
    hold(dirs.root, entry)
    run_git_process(hardened_argv("init", "--quiet", "--bare", "--template=", str(dirs.base)),
                    env=hardened_env(home), what=f"cannot create {dirs.base}")
    borrowed = dirs.root / "layers" / "objects"
    try:
        bind_read_only(entry.path / "base.git" / "objects", borrowed)
    except OverlayRefused as error:
        raise InfrastructureFailure(str(error)) from None
    (dirs.base / "objects" / "info" / "alternates").write_text(f"{borrowed}\n",
                                                              encoding="utf-8")
    dirs.git.run("update-ref", BASE_REF, commit, what=f"cannot check out commit {commit}")
    for shared in _shared_indexes(entry.path / "repo" / ".git"):  # copied: git touches it
        copy_index(shared, dirs.base / shared.name)
    copy_index(entry.path / "repo" / ".git" / "index", dirs.index)
    return True


def _key(source: str, commit: str) -> str:
    """The tree cache's key of a base."""
    return hashlib.sha256(f"{source}\0{commit}".encode()).hexdigest()[:32]


def _builder(source: str, commit: str, *, is_url: bool, home: Path,
             should_stop: Callable[[], bool] | None) -> Callable[[Path], None]:
    """What fills a cache entry: agentctl's bare copy of the source and a checkout of the
    commit beside it, its index settled; its size is reckoned from the commit's listing while
    the checkout runs, parsed there too (walking 200,000 files after it costs half a second,
    parsing their listing a quarter)."""
    def build(folder: Path) -> None:
        _copy_source(source, commit, folder / "base.git", is_url=is_url, home=home,
                     should_stop=should_stop, hardlinks=True)
        checkout = _clone(folder / "base.git", folder / "repo", home, should_stop,
                          hardlinks=True)

        def reckon() -> int:  # listed and parsed while the checkout writes the files
            return checkout_size(checkout.run("ls-tree", "-r", "-l", "-z", "--full-tree",
                                              commit, what=f"cannot list commit {commit}").stdout)

        with ThreadPoolExecutor(1) as pool:
            reckoned = pool.submit(reckon)
            checkout.run("-c", "checkout.workers=0", "-c", "core.splitIndex=true", "checkout",
                         "--quiet", "--detach", commit,
                         what=f"cannot check out commit {commit} of {source}",
                         should_stop=should_stop)
            _settle(checkout)
            size = reckoned.result()
        # the folder itself, the work tree and the two small git folders beside it
        note_size(folder, BLOCK + size + disk_usage(folder / "base.git", checkout.git_dir))
    return build


class Prefetch:
    """The cache entry of a base being filled in a thread while the run is being set up (its
    records, its lease, its sandbox), so a cold cache costs the checkout less that time. The
    attempt's own `clone_at` waits for it (the builder's lock) and pins what it built; a fill
    that failed is redone there, where its error is reported."""

    def __init__(self, source: str, commit: str, *, is_url: bool, cache: TreeCache) -> None:
        self._stopped = threading.Event()
        _FILLING.add(_key(source, commit))
        self._thread = threading.Thread(target=self._fill, args=(source, commit, is_url, cache),
                                        name="agentctl-prefetch", daemon=True)
        self._thread.start()

    def _fill(self, source: str, commit: str, is_url: bool, cache: TreeCache) -> None:
        home = Path(tempfile.mkdtemp(prefix="agentctl-prefetch-"))
        try:
            build = _builder(source, commit, is_url=is_url, home=home,
                             should_stop=self._stopped.is_set)
            acquire(cache, _key(source, commit), build,
                    should_stop=self._stopped.is_set).release()
        except Exception:  # the attempt builds it again, and says why it cannot
            pass
        finally:
            _FILLING.discard(_key(source, commit))
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
    key = _key(source, commit)
    if cache is None or not _SHA.fullmatch(commit) or key in _FILLING or (
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
    shared = _shared_indexes(checkout.git_dir)
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


def _shared_indexes(git_dir: Path) -> list[Path]:
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


def _view(dirs: AttemptDirs, target: Path) -> WorkspaceGit:
    """A fresh view of the pinned checkout at `target` (anything there before is removed), and
    git for it: the view's own `.git`, pristine from the cache."""
    layers = dirs.layers(target)
    remove_workspace(target)
    remove_workspace(layers)
    pinned = held(dirs.root)
    assert pinned is not None, "views are made only for an attempt holding a cache entry"
    mount_view(pinned.path / "repo", layers, target)
    return WorkspaceGit(git_dir=target / ".git", work_tree=target, home=dirs.root / "git-home")


def checkout_patched(dirs: AttemptDirs, commit: str, diff: Path, *,
                     should_stop: Callable[[], bool] | None = None) -> str:
    """A fresh checkout of `commit` from agentctl's own copy, with the patch applied to its
    work tree (and index, in a checkout of its own), and nothing else of the agent's: where
    verification runs. The id of the tree it holds, for the caller to compare with the
    patch's: in a view, reckoned from the paths the patch wrote (see `_patch_view`)."""
    require_sha(commit)
    if uses_views(dirs):
        checkout = _view(dirs, dirs.verify)
        if not names_gitlink(diff):
            return _patch_view(dirs, checkout, commit, diff, should_stop)
    else:
        checkout = _clone_base(dirs, dirs.verify, should_stop)
        checkout.run("-c", "checkout.workers=0", "checkout", "--quiet", "--detach", commit,
                     what=f"cannot check out commit {commit} for verification",
                     should_stop=should_stop)
    if diff.stat().st_size:
        checkout.run("apply", "--index", "--whitespace=nowarn", str(diff.resolve()),
                     what="cannot apply the patch to a fresh checkout", should_stop=should_stop)
    return checkout.run("write-tree", what="cannot write the verified tree").stdout.strip()


def _patch_view(dirs: AttemptDirs, view: WorkspaceGit, commit: str, diff: Path,
                should_stop: Callable[[], bool] | None) -> str:
    """Apply the patch to a fresh view's files and index, as in a checkout of its own (a check
    that asks git what changed sees the patch staged either way), and reckon the view's tree
    from the paths that may differ from the base: what its upper layer holds (every write went
    there) and what the diff names (a folder emptied and made again hides the base's files
    below it without a mark for each), not with a `write-tree` that writes the index of every
    file once more."""
    if diff.stat().st_size:
        view.run("apply", "--index", "--whitespace=nowarn", str(diff.resolve()),
                 what="cannot apply the patch to a fresh checkout", should_stop=should_stop)
    upper = upper_of(dirs.layers(dirs.verify))
    # agentctl's own repository: blobs it stages land there (the collected ones are there)
    staging = WorkspaceGit(git_dir=dirs.base, work_tree=view.work_tree, home=view.home)
    written = {os.fsencode(path) for path in touched(upper)}  # its own .git aside
    return work_tree_tree(staging, commit, written | diff_paths(staging, diff),
                          dirs.scratch / "verify.index")


def checkout_base(dirs: AttemptDirs, commit: str, *,
                  should_stop: Callable[[], bool] | None = None, dest: Path | None = None) -> Path:
    """A clean checkout of `commit` from agentctl's own copy at `dest` (default
    `dirs.base_verify`), made unless it is there already: the baseline runs there, as the
    patch's checks run on `checkout_patched`."""
    require_sha(commit)
    where = dest or dirs.base_verify
    if not where.exists():
        if uses_views(dirs):
            _view(dirs, where)
            return where
        checkout = _clone_base(dirs, where, should_stop)
        checkout.run("-c", "checkout.workers=0", "checkout", "--quiet", "--detach", commit,
                     what=f"cannot check out commit {commit} for the baseline",
                     should_stop=should_stop)
    return where


def _clone_base(dirs: AttemptDirs, dest: Path,
                should_stop: Callable[[], bool] | None) -> WorkspaceGit:
    return _clone(dirs.base, dest, dirs.root / "git-home", should_stop, hardlinks=False)


def _clone(source: Path, dest: Path, home: Path, should_stop: Callable[[], bool] | None, *,
           hardlinks: bool) -> WorkspaceGit:
    """A clone of agentctl's bare copy `source` at `dest`, without a remote, and git for it
    that reads nothing but its own fresh config. Objects are copied, not linked, unless
    `hardlinks` (within the cache, which nothing writes to)."""
    links = () if hardlinks else ("--no-hardlinks",)
    # The one transport agentctl's own git may use: a local clone of its own copy.
    run_git_process(hardened_argv("-c", "protocol.file.allow=always", "clone", "--quiet",
                                  "--no-checkout", *links, "--", str(source), str(dest)),
                    env=hardened_env(home), what=f"cannot clone the base into {dest}",
                    should_stop=should_stop)
    clone = WorkspaceGit(git_dir=dest / ".git", work_tree=dest, home=home)
    clone.run("remote", "remove", "origin", what=f"cannot detach {dest} from its origin")
    return clone


def _fetch_commit(url: str, commit: str, base: Path,
                  should_stop: Callable[[], bool] | None) -> None:
    """Just the commit when the server lets us ask for it by id; else every branch and tag."""
    trusted_git(["init", "--quiet", "--bare", str(base)], what=f"cannot create {base}")
    shallow = trusted_git(["-C", str(base), "fetch", "--quiet", "--no-tags", "--depth=1", "--",
                           url, commit], what=f"cannot fetch {commit} from {url}", check=False,
                          should_stop=should_stop)
    if shallow.returncode == 0:
        return
    trusted_git(["-C", str(base), "fetch", "--quiet", "--", url,
                 "+refs/heads/*:refs/remotes/source/*", "+refs/tags/*:refs/tags/*"],
                what=f"cannot fetch {url}", should_stop=should_stop)
