"""Throw-away git workspaces: a private directory per attempt, holding agentctl's own bare copy
of the base commit, the agent's work tree cloned from it, and (after the agent) a fresh
checkout where the patch alone is verified.

Writing the files dominates preparing a workspace, so clones copy objects without a checkout
(`clones`) and the work tree is then checked out in parallel (`checkout.workers=0`: one worker
per core). The user's repository is only ever read, once, into the bare copy; nothing of the
agent's can reach it or the bare copy through git (`--no-hardlinks`, and agentctl's git never
runs in the agent's `.git`: see `git.WorkspaceGit`).

With the state home's tree cache (`tree_cache`, filled by `cache_fill`), each base is checked
out once, and the agent's work tree, the verified tree and the baseline tree are copy-on-write
views of that checkout (`overlay`): preparing one costs a mount, not a checkout, and nothing
written in a view reaches the cache. An attempt's own bare copy borrows the cached one's
objects, bound read-only. Where views cannot be mounted, each is a checkout of its own as above.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution.git import (
    GitCancelled,
    WorkspaceGit,
    copy_index,
)
from agentctl.execution.workspaces.cache_fill import TRACKED, builder, cache_key, shared_indexes
from agentctl.execution.workspaces.clones import SHA, borrowing_repository, clone, copy_source
from agentctl.execution.workspaces.discard import ATTEMPT_DIR_PREFIX, held, hold, remove_workspace
from agentctl.execution.workspaces.overlay import (
    OverlayRefused,
    bind_read_only,
    mount_view,
    upper_of,
)
from agentctl.execution.workspaces.overlay import forget as forget_views
from agentctl.execution.workspaces.overlay import supported as views_supported
from agentctl.execution.workspaces.tree_cache import TreeCache, acquire
from agentctl.execution.workspaces.tree_edit import (
    diff_paths,
    names_gitlink,
    small_and_whole,
    work_tree_tree,
)
from agentctl.execution.workspaces.upper_layer import touched

__all__ = ["AttemptDirs", "CloneCancelled", "checkout_base", "checkout_patched", "checkout_with",
           "clone_at", "create_attempt_dirs", "require_sha", "side_diff", "tracked_files",
           "uses_views", "view_layers"]

CloneCancelled = GitCancelled


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
    if not SHA.fullmatch(commit):
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
    copy_source(source, commit, dirs.base, is_url=is_url, home=dirs.root / "git-home",
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


def tracked_files(dirs: AttemptDirs, should_stop: Callable[[], bool] | None = None) -> str:
    """The base's tracked files, NUL-ended, as `git ls-files -z` lists them from the attempt's
    index: kept by the cache entry the attempt's trees are views of, else asked of git."""
    pinned = held(dirs.root)
    if pinned is not None:
        try:
            return (pinned.path / TRACKED).read_text(encoding="utf-8")
        except OSError:
            pass  # an entry filled before the listing was kept
    return dirs.git.run("ls-files", "-z", index=dirs.index, should_stop=should_stop,
                        what="cannot list the tracked files").stdout


def uses_views(dirs: AttemptDirs) -> bool:
    """Whether the attempt's trees are views of a cached checkout (made cheaply, never kept)."""
    return held(dirs.root) is not None


def _attach(source: str, commit: str, dirs: AttemptDirs, *, is_url: bool, cache: TreeCache,
            should_stop: Callable[[], bool] | None) -> bool:
    """Pin the cached checkout of (`source`, `commit`), built first when the cache is cold;
    agentctl's own repository borrows its objects (anything new is written to its own), and the
    work tree is a view of it. False (nothing pinned) when the view cannot be mounted."""
    home = dirs.root / "git-home"
    build = builder(source, commit, is_url=is_url, home=home, should_stop=should_stop)
    entry = acquire(cache, cache_key(source, commit), build, should_stop=should_stop)
    try:
        mount_view(entry.path / "repo", dirs.layers(dirs.tree), dirs.tree)
    except OverlayRefused:
        entry.release()
        remove_workspace(dirs.root / "layers")
        forget_views(dirs.root, cache.root)
        return False
    hold(dirs.root, entry)
    borrowed = dirs.root / "layers" / "objects"
    try:
        bind_read_only(entry.path / "base.git" / "objects", borrowed)
    except OverlayRefused as error:
        raise InfrastructureFailure(str(error)) from None
    borrowing_repository(dirs.base, commit, borrowed)
    for shared in shared_indexes(entry.path / "repo" / ".git"):  # copied: git touches it
        copy_index(shared, dirs.base / shared.name)
    copy_index(entry.path / "repo" / ".git" / "index", dirs.index)
    return True


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
    patch's: in a view of a large checkout, reckoned from the paths the patch wrote (see
    `_patch_view`); else written by git from the index the patch was applied to."""
    require_sha(commit)
    if uses_views(dirs):
        checkout = _view(dirs, dirs.verify)
        if not names_gitlink(diff) and not small_and_whole(checkout.git_dir / "index",
                                                            checkout.git_dir):
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


def checkout_with(dirs: AttemptDirs, commit: str, diffs: Sequence[Path], dest: Path, *,
                  should_stop: Callable[[], bool] | None = None) -> Path:
    """A fresh checkout of `commit` at `dest` with `diffs` (a part of the patch, a task's test
    patch) applied by git in order, which writes nothing beyond a symbolic link: where one side
    of the patch runs beside the other side's base (`test_side`)."""
    require_sha(commit)
    if uses_views(dirs):
        checkout = _view(dirs, dest)
    else:
        remove_workspace(dest)
        checkout = _clone_base(dirs, dest, should_stop)
        checkout.run("-c", "checkout.workers=0", "checkout", "--quiet", "--detach", commit,
                     what=f"cannot check out commit {commit} for the evidence runs",
                     should_stop=should_stop)
    for diff in diffs:
        if diff.stat().st_size:
            checkout.run("apply", "--index", "--whitespace=nowarn", str(diff.resolve()),
                         what="cannot apply a part of the patch to a fresh checkout",
                         should_stop=should_stop)
    return dest


def side_diff(dirs: AttemptDirs, commit: str, paths: Iterable[str], out: Path) -> Path:
    """The patch's changes to `paths` alone, as git gives them from the verified tree's index
    (staged by `checkout_patched`, read before any check runs there), into `out`."""
    checkout = WorkspaceGit(git_dir=dirs.verify / ".git", work_tree=dirs.verify,
                            home=dirs.root / "git-home")
    specs = [f":(literal){path}" for path in paths]
    with out.open("wb") as sink:
        if specs:  # no path: an empty diff, not the whole patch
            checkout.run("diff", "--cached", "--binary", "--full-index", "--no-renames",
                         "--no-ext-diff", "--no-textconv", commit, "--", *specs,
                         what="cannot split the patch into its sides", stdout=sink)
    return out


def texts_of(dirs: AttemptDirs, commit: str, path: str) -> tuple[str | None, str | None]:
    """`path` as the base `commit` has it and as the verified tree's index has it (staged by
    `checkout_patched`), each None where it is not there: git's blobs, never a link followed."""
    checkout = WorkspaceGit(git_dir=dirs.verify / ".git", work_tree=dirs.verify,
                            home=dirs.root / "git-home")
    out: list[str | None] = []
    for spec in (f"{commit}:{path}", f":{path}"):
        result = checkout.run_bytes("cat-file", "blob", spec, what=f"cannot read {path}",
                                    check=False)
        out.append(result.stdout.decode("utf-8", errors="replace")
                   if result.returncode == 0 else None)
    return out[0], out[1]


def base_texts(dirs: AttemptDirs, commit: str, paths: Sequence[str]) -> dict[str, str]:
    """Those of `paths` the base `commit` has as files, with their text, in one git call."""
    checkout = WorkspaceGit(git_dir=dirs.verify / ".git", work_tree=dirs.verify,
                            home=dirs.root / "git-home")
    out = checkout.run_bytes("cat-file", "--batch", stdin=b"".join(
        f"{commit}:{path}\n".encode() for path in paths), what="cannot read the base's files",
        ).stdout
    texts: dict[str, str] = {}
    position = 0
    for path in paths:
        end = out.index(b"\n", position)
        header = out[position:end].split(b" ")
        if len(header) != 3:  # "<name> missing"
            position = end + 1
            continue
        size = int(header[2])
        if header[1] == b"blob":
            texts[path] = out[end + 1:end + 1 + size].decode("utf-8", errors="replace")
        position = end + 1 + size + 1
    return texts


def _clone_base(dirs: AttemptDirs, dest: Path,
                should_stop: Callable[[], bool] | None) -> WorkspaceGit:
    return clone(dirs.base, dest, dirs.root / "git-home", should_stop, hardlinks=False)
