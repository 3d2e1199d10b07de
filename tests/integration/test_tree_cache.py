"""The tree cache and the views of it: the verified tree is exactly base + patch whether the
cache is cold, warm or being filled by two workers at once; the cache stays within its bound
without taking an entry a run holds. Real git repositories, real overlay mounts, real flocks
and real worker processes."""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.domain.spec import PatchBoundary
from agentctl.execution.git import run_git_process
from agentctl.execution.workspaces import cache_fill, overlay, workspace
from agentctl.execution.workspaces.discard import remove_workspace
from agentctl.execution.workspaces.patch_collector import collect_patch
from agentctl.execution.workspaces.tree_cache import (
    TreeCache,
    acquire,
    disk_usage,
    note_size,
    walked_usage,
)
from agentctl.execution.workspaces.workspace import (
    AttemptDirs,
    checkout_base,
    checkout_patched,
    clone_at,
    create_attempt_dirs,
    uses_views,
)
from tests.conftest import git, make_repo
from tests.machine import unavailable

NO_BOUNDARY = PatchBoundary(allowed_paths=(), forbidden_paths=(), lockfile_patterns=(),
                            generated_patterns=())


@pytest.fixture(autouse=True)
def mountable(tmp_path: Path) -> None:
    if not overlay.supported(tmp_path):
        unavailable("overlay mounts are refused here (not root, or no overlay in the kernel)")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    source = make_repo(tmp_path / "source", {
        "README.md": "# service\n", "src/app.py": "def greet():\n    return 'hi'\n",
        "src/gone.py": "x = 1\n", "run.sh": "#!/bin/sh\necho run\n", ".gitignore": "*.log\n",
    })
    os.symlink("src/app.py", source / "app-link")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "a link")
    return source


def snapshot(tree: Path) -> dict[str, tuple[int, bytes]]:
    """Every path below `tree` but `.git`: its mode and its bytes (a link: its target)."""
    files: dict[str, tuple[int, bytes]] = {}
    for folder, subfolders, names in os.walk(tree):
        if folder == str(tree):
            subfolders[:] = [name for name in subfolders if name != ".git"]
        for name in names:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            content = (os.readlink(path).encode() if os.path.islink(path)
                       else Path(path).read_bytes())
            files[os.path.relpath(path, tree)] = (info.st_mode, content)
    return files


def cache_digest(cache: TreeCache) -> str:
    """Paths, modes, times and bytes of every entry of the cache (its locks aside)."""
    digest = hashlib.sha256()
    for folder, subfolders, names in os.walk(cache.root):
        subfolders.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.endswith((".pin", ".build")) or name == "lock":
                continue
            info = os.lstat(path)
            digest.update(f"{path}\0{info.st_mode}\0{info.st_mtime_ns}\0".encode())
            digest.update(os.readlink(path).encode() if os.path.islink(path)
                          else Path(path).read_bytes())
    return digest.hexdigest()


def edit(tree: Path) -> None:
    """A change of every kind: content, mode, a delete, a new file, a link, an ignored file."""
    (tree / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    os.chmod(tree / "README.md", 0o755)
    (tree / "src" / "gone.py").unlink()
    (tree / "src" / "new.py").write_text("y = 2\n")
    os.symlink("README.md", tree / "readme-link")
    (tree / "debug.log").write_text("ignored\n")


def expected_tree(repo: Path, commit: str, diff: Path, where: Path) -> dict[str, tuple[int, bytes]]:
    """What a person gets: `git clone`, then `git apply` of the patch."""
    subprocess.run(["git", "clone", "-q", str(repo), str(where)], check=True)
    git(where, "checkout", "-q", commit)
    if diff.stat().st_size:
        git(where, "apply", str(diff))
    return snapshot(where)


@pytest.fixture
def attempts(tmp_path: Path) -> Iterator[list[AttemptDirs]]:
    made: list[AttemptDirs] = []
    yield made
    for dirs in made:
        remove_workspace(dirs.root)


@pytest.fixture(params=[False, True], ids=["whole index", "split index"])
def split(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether the cached checkout counts as large, and so keeps its index split."""
    if request.param:
        monkeypatch.setattr(cache_fill, "DATE_INDEX_ABOVE_BYTES", 0)
    return bool(request.param)


def attempt(tmp_path: Path, repo: Path, commit: str, cache: TreeCache,
            attempts: list[AttemptDirs]) -> AttemptDirs:
    dirs = create_attempt_dirs(tmp_path)
    attempts.append(dirs)
    clone_at(str(repo), commit, dirs, is_url=False, cache=cache)
    assert uses_views(dirs)
    return dirs


def test_the_verified_tree_is_base_plus_patch_with_the_cache_cold_and_warm(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs], split: bool) -> None:
    commit = git(repo, "rev-parse", "HEAD")
    cache = TreeCache(tmp_path / "trees", 2**30)
    for round_ in ("cold", "warm"):
        dirs = attempt(tmp_path, repo, commit, cache, attempts)
        edit(dirs.tree)
        diff = dirs.scratch / "patch.diff"
        collected = collect_patch(dirs, commit, diff, NO_BOUNDARY)
        assert {c.path for c in collected.changes} == {
            "src/app.py", "README.md", "src/gone.py", "src/new.py", "readme-link"}, round_
        tree = checkout_patched(dirs, commit, diff)
        assert tree == collected.tree
        assert snapshot(dirs.verify) == expected_tree(repo, commit, diff, tmp_path / round_)
        nothing = dirs.scratch / "nothing.diff"
        nothing.touch()
        base = checkout_base(dirs, commit)
        assert snapshot(base) == expected_tree(repo, commit, nothing, tmp_path / f"{round_}-base")
    assert len([p for p in cache.root.iterdir() if p.is_dir() and p.name != "tmp"]) == 1


@pytest.mark.parametrize("large", [False, True], ids=["files dated back", "index dated later"])
def test_the_cached_index_has_no_racily_clean_entry_to_rehash(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs], large: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every entry keeps its real size (git smudges a racily clean one to 0, and every
    collection would then re-read that file) and every file is older than the index to the
    second (what git without nanosecond times checks): collection compares stat data only.
    A large checkout gets there by dating its index into the next second, not by dating its
    files back."""
    if large:
        monkeypatch.setattr(cache_fill, "DATE_INDEX_ABOVE_BYTES", 0)
    commit = git(repo, "rev-parse", "HEAD")
    dirs = attempt(tmp_path, repo, commit, TreeCache(tmp_path / "trees", 2**30), attempts)
    listing = dirs.git.run("ls-files", "--debug", index=dirs.index, what="list").stdout
    sizes = [line.split("size: ")[1].split()[0] for line in listing.splitlines()
             if "size: " in line]
    assert sizes and "0" not in sizes, listing
    lower, _upper = workspace.view_layers(dirs) or (dirs.tree, None)
    indexed = os.stat(lower / ".git" / "index").st_mtime_ns // 10**9
    files = snapshot(lower)
    assert all(os.lstat(lower / name).st_mtime_ns // 10**9 < indexed for name in files)


def test_a_same_size_edit_with_its_times_put_back_is_still_collected(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs], split: bool) -> None:
    """Stat data is trusted only as far as git trusts it: a change cannot hide by keeping the
    size and restoring the mtime (the ctime moves)."""
    commit = git(repo, "rev-parse", "HEAD")
    dirs = attempt(tmp_path, repo, commit, TreeCache(tmp_path / "trees", 2**30), attempts)
    target = dirs.tree / "src" / "gone.py"
    before = os.lstat(target)
    target.write_text("x = 9\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    collected = collect_patch(dirs, commit, dirs.scratch / "patch.diff", NO_BOUNDARY)
    assert [c.path for c in collected.changes] == ["src/gone.py"]


def test_a_large_checkouts_index_stays_split_and_a_run_writes_none_of_the_cache(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs], split: bool) -> None:
    """A large cached checkout keeps its index split (each index a run writes then writes only
    what changed); the attempt's own repository gets a copy of the shared part, as git reads it
    from the GIT_DIR, and git touching the shared part (it does at every read) reaches no file
    of the cache. A small one keeps a whole index and no shared part."""
    commit = git(repo, "rev-parse", "HEAD")
    cache = TreeCache(tmp_path / "trees", 2**30)
    dirs = attempt(tmp_path, repo, commit, cache, attempts)
    lower, _upper = workspace.view_layers(dirs) or (dirs.tree, None)
    shared = sorted(path.name for path in (lower / ".git").glob("sharedindex.*"))
    assert len(shared) == (1 if split else 0)
    assert sorted(path.name for path in dirs.base.glob("sharedindex.*")) == shared
    before = cache_digest(cache)
    time.sleep(1.1)  # a time git sets on anything of the cache's would differ
    edit(dirs.tree)
    diff = dirs.scratch / "patch.diff"
    collected = collect_patch(dirs, commit, diff, NO_BOUNDARY)
    assert checkout_patched(dirs, commit, diff) == collected.tree
    checkout_base(dirs, commit)
    for view in (dirs.tree, dirs.verify, dirs.base_verify):
        git(view, "status", "--porcelain")  # git as a check or the agent runs it in a view
    assert snapshot(dirs.verify) == expected_tree(repo, commit, diff, tmp_path / "by-hand")
    assert cache_digest(cache) == before


WORKER = textwrap.dedent("""
    import hashlib, os, sys, time
    from pathlib import Path
    from agentctl.execution.workspaces.tree_cache import TreeCache
    from agentctl.execution.workspaces.discard import remove_workspace
    from agentctl.execution.workspaces.workspace import (checkout_patched, clone_at, create_attempt_dirs,
                                              uses_views)
    repo, commit, cache, parent, diff, go = sys.argv[1:]
    while not Path(go).exists():
        time.sleep(0.001)
    dirs = create_attempt_dirs(Path(parent))
    clone_at(repo, commit, dirs, is_url=False, cache=TreeCache(Path(cache), 2**30))
    assert uses_views(dirs)
    print(checkout_patched(dirs, commit, Path(diff)))
    for folder, subfolders, names in os.walk(dirs.verify):
        subfolders[:] = [name for name in subfolders if name != ".git"]
        for name in names:
            path = os.path.join(folder, name)
            data = os.readlink(path).encode() if os.path.islink(path) else open(path, "rb").read()
            print(os.path.relpath(path, dirs.verify), os.lstat(path).st_mode,
                  hashlib.sha256(data).hexdigest())
    remove_workspace(dirs.root)
""")


def test_two_workers_filling_the_cache_at_once_build_it_once_and_verify_the_same_tree(
        repo: Path, tmp_path: Path) -> None:
    commit = git(repo, "rev-parse", "HEAD")
    diff = tmp_path / "patch.diff"
    diff.write_text("--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def greet():\n"
                    "-    return 'hi'\n+    return 'hello'\n")
    cache, go = tmp_path / "trees", tmp_path / "go"
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(repo), commit, str(cache),
                                 str(tmp_path), str(diff), str(go)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(2)]
    go.touch()
    outputs = [worker.communicate(timeout=120) for worker in workers]
    assert [worker.returncode for worker in workers] == [0, 0], outputs
    assert outputs[0][0] == outputs[1][0]
    expected = expected_tree(repo, commit, diff, tmp_path / "by-hand")
    assert sorted(outputs[0][0].splitlines()[1:]) == sorted(
        f"{path} {mode} {hashlib.sha256(content).hexdigest()}"
        for path, (mode, content) in expected.items())
    entries = [p.name for p in cache.iterdir() if p.is_dir()]
    assert len(entries) == 2 and "tmp" in entries  # one entry, built once
    assert list((cache / "tmp").iterdir()) == []  # no half-built or discarded copy left


def test_the_cache_evicts_the_least_recently_used_entries_but_never_one_in_use(
        tmp_path: Path) -> None:
    def build(folder: Path) -> None:
        (folder / "tree").write_bytes(os.urandom(64 * 1024))

    one = TreeCache(tmp_path / "probe", 2**30)
    entry = acquire(one, "0" * 32, build)
    entry.release()
    size = int((entry.path / "size").read_text())
    cache = TreeCache(tmp_path / "trees", int(size * 2.5))  # room for two entries
    keys = [f"{n:032x}" for n in range(1, 5)]

    held = acquire(cache, keys[0], build)  # a run holds the oldest all along
    for key in keys[1:]:
        acquire(cache, key, build).release()
    present = sorted(p.name for p in cache.root.iterdir() if p.is_dir() and p.name != "tmp")
    assert present == [keys[0], keys[3]]  # the held one stayed; the older free ones went
    held.release()

    again = acquire(cache, keys[3], build)  # warm: used, not rebuilt
    assert not again.built
    again.release()
    acquire(cache, keys[1], build).release()  # cold again: the held-no-more keys[0] goes
    present = sorted(p.name for p in cache.root.iterdir() if p.is_dir() and p.name != "tmp")
    assert present == [keys[1], keys[3]]
    assert not (cache.root / f"{keys[0]}.pin").exists()


def test_the_size_a_checkout_is_reckoned_at_is_what_du_measures(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs]) -> None:
    """A cached checkout's size comes from its commit's listing, not from walking the tree
    afterwards; it is what `du` finds there (links short and long, a file of several blocks,
    folders within folders)."""
    (repo / "big.bin").write_bytes(os.urandom(3 * 4096 + 1))
    (repo / "deep" / "er" / "est").mkdir(parents=True)
    (repo / "deep" / "er" / "est" / "leaf.txt").write_text("leaf\n")
    os.symlink("x" * 100, repo / "long-link")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "sizes")
    commit = git(repo, "rev-parse", "HEAD")
    cache = TreeCache(tmp_path / "trees", 2**30)

    attempt(tmp_path, repo, commit, cache, attempts)

    (entry,) = [p for p in cache.root.iterdir() if p.is_dir() and p.name != "tmp"]
    noted = disk_usage(entry / "size", entry / "place")  # the entry's own two notes
    assert int((entry / "size").read_text()) == disk_usage(entry) - noted
    parts = (entry / "base.git", entry / "repo" / ".git", entry / "tracked")
    assert walked_usage(*parts) == disk_usage(*parts)  # what the fill counts without du
    assert walked_usage(entry) == disk_usage(entry)


def test_a_size_the_builder_knows_is_the_one_kept(tmp_path: Path) -> None:
    def build(folder: Path) -> None:
        (folder / "tree").write_bytes(os.urandom(256 * 1024))
        note_size(folder, 12345)

    entry = acquire(TreeCache(tmp_path / "trees", 2**30), "b" * 32, build)
    entry.release()
    assert int((entry.path / "size").read_text()) == 12345


def test_what_a_builder_that_died_halfway_left_is_removed_by_the_next_build(
        tmp_path: Path) -> None:
    cache = TreeCache(tmp_path / "trees", 2**30)
    key = "a" * 32
    dead = cache.root / "tmp" / f"{key}.halfway"
    (dead / "repo").mkdir(parents=True)

    acquire(cache, key, lambda folder: (folder / "tree").write_text("x")).release()

    assert not dead.exists()
    assert (cache.root / key / "tree").read_text() == "x"


def test_what_a_dead_builder_left_that_cannot_be_removed_never_fails_the_next_build(
        tmp_path: Path) -> None:
    """A folder of the dead builder's that will not go (here: something is mounted in it) is
    left for `cache clear`; the entry is built all the same."""
    if os.geteuid() != 0:
        pytest.skip("mounting the tmpfs that keeps the folder needs root")
    cache = TreeCache(tmp_path / "trees", 2**30)
    key = "c" * 32
    stuck = cache.root / "tmp" / f"{key}.halfway" / "repo"
    stuck.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(stuck)], check=True)

    def build(folder: Path) -> None:
        (folder / "tree").write_text("x")

    try:
        acquire(cache, key, build).release()
    finally:
        subprocess.run(["umount", "-l", str(stuck)], check=False)

    assert (cache.root / key / "tree").read_text() == "x"


def test_a_dead_builders_git_holds_the_build_until_it_ends(tmp_path: Path) -> None:
    """A helper git started during a build (here: a process that outlives the build) keeps the
    key's build lock: the next builder waits for it rather than removing what it writes."""
    cache = TreeCache(tmp_path / "trees", 2**30)
    key = "d" * 32
    helper: list[int] = []

    def build(folder: Path) -> None:
        started = run_git_process(["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"],
                                  env=os.environ, what="helper")
        helper.append(int(started.stdout))
        (folder / "tree").write_text("x")

    acquire(cache, key, build).release()
    try:
        descriptor = os.open(cache.root / f"{key}.build", os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(descriptor)
    finally:
        os.kill(helper[0], signal.SIGKILL)


def test_collection_in_a_view_looks_only_where_the_view_was_written(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs]) -> None:
    """The cost follows the change: folders the upper layer does not name are not walked.
    (Shown by changing the cached tree behind the view's back, which nothing else does.)"""
    commit = git(repo, "rev-parse", "HEAD")
    cache = TreeCache(tmp_path / "trees", 2**30)
    dirs = attempt(tmp_path, repo, commit, cache, attempts)
    (dirs.tree / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    (entry,) = [p for p in cache.root.iterdir() if p.is_dir() and p.name != "tmp"]
    (entry / "repo" / "README.md").write_text("# changed behind the view's back\n")

    collected = collect_patch(dirs, commit, dirs.scratch / "patch.diff", NO_BOUNDARY)

    assert [c.path for c in collected.changes] == ["src/app.py"]


def test_a_prefetched_entry_is_the_one_the_attempt_then_uses(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs]) -> None:
    """The entry filled while the run was being set up is what the attempt pins: shown by
    moving the source away once it is filled (building again would fail)."""
    commit = git(repo, "rev-parse", "HEAD")
    cache = TreeCache(tmp_path / "trees", 2**30)
    early = cache_fill.prefetch(str(repo), commit, is_url=False, cache=cache, scratch=tmp_path)
    assert early is not None
    entry = cache.root / cache_fill.cache_key(str(repo), commit)
    for _ in range(600):
        if entry.is_dir():
            break
        time.sleep(0.05)
    early.stop()
    assert entry.is_dir()
    assert cache_fill.prefetch(str(repo), commit, is_url=False, cache=cache,
                               scratch=tmp_path) is None  # there already
    hidden = repo.rename(tmp_path / "moved-away")

    dirs = attempt(tmp_path, repo, commit, cache, attempts)

    nothing = dirs.scratch / "nothing.diff"
    nothing.touch()
    assert snapshot(dirs.tree) == expected_tree(hidden, commit, nothing, tmp_path / "by-hand")
    assert list((cache.root / "tmp").iterdir()) == []


def test_a_prefetch_stopped_before_it_filled_the_entry_leaves_nothing(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs]) -> None:
    """Stopped while another builder holds the entry (here: the test), the fill gives up; the
    attempt then builds the entry itself."""
    commit = git(repo, "rev-parse", "HEAD")
    cache = TreeCache(tmp_path / "trees", 2**30)
    key = cache_fill.cache_key(str(repo), commit)
    cache.root.mkdir(parents=True)
    holder = os.open(cache.root / f"{key}.build", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        early = cache_fill.prefetch(str(repo), commit, is_url=False, cache=cache,
                                    scratch=tmp_path)
        assert early is not None
        early.stop()
    finally:
        os.close(holder)
    assert not (cache.root / key).exists()
    assert list((cache.root / "tmp").iterdir()) == []

    dirs = attempt(tmp_path, repo, commit, cache, attempts)
    assert (cache.root / key).is_dir() and uses_views(dirs)


def test_a_view_is_verified_with_the_patch_staged_as_in_a_checkout_of_its_own(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs], split: bool) -> None:
    """The view's tree is reckoned from what the patch wrote, and a check that asks git what
    changed (`git diff --exit-code`, `git status`) sees what it sees in a checkout of its own:
    the patch staged, nothing unstaged."""
    commit = git(repo, "rev-parse", "HEAD")
    dirs = attempt(tmp_path, repo, commit, TreeCache(tmp_path / "trees", 2**30), attempts)
    edit(dirs.tree)
    diff = dirs.scratch / "patch.diff"
    collected = collect_patch(dirs, commit, diff, NO_BOUNDARY)
    assert checkout_patched(dirs, commit, diff) == collected.tree
    upper = dirs.root / "layers" / dirs.verify.name / "upper"
    assert not (upper / "src" / "gone.py").exists()  # src/ was emptied and made again (see
    # the next test): its upper folder is opaque, with no whiteout for the file it hides
    assert snapshot(dirs.verify) == expected_tree(repo, commit, diff, tmp_path / "by-hand")
    own = create_attempt_dirs(tmp_path)
    attempts.append(own)
    clone_at(str(repo), commit, own, is_url=False)
    assert not uses_views(own)
    assert checkout_patched(own, commit, diff) == collected.tree
    for verified in (dirs.verify, own.verify):
        assert git(verified, "diff", "--name-only") == ""
        assert git(verified, "diff", "--cached", "--name-only").split() == \
            ["README.md", "readme-link", "src/app.py", "src/gone.py", "src/new.py"]


def test_a_patch_that_empties_a_folder_and_fills_it_again_verifies_as_base_plus_patch(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs]) -> None:
    """git apply removes a folder it empties (the old files of a modification go first) and
    makes it again: the overlay then hides the base's files below it without a whiteout for
    each, and the reckoned tree still has them gone (the diff names them)."""
    commit = git(repo, "rev-parse", "HEAD")
    dirs = attempt(tmp_path, repo, commit, TreeCache(tmp_path / "trees", 2**30), attempts)
    for name in ("app.py", "gone.py"):
        (dirs.tree / "src" / name).unlink()
    (dirs.tree / "src" / "fresh.py").write_text("z = 3\n")
    diff = dirs.scratch / "patch.diff"
    collected = collect_patch(dirs, commit, diff, NO_BOUNDARY)
    assert checkout_patched(dirs, commit, diff) == collected.tree
    assert snapshot(dirs.verify) == expected_tree(repo, commit, diff, tmp_path / "by-hand")


def test_a_patch_that_adds_a_submodule_is_verified_through_an_index_of_every_file(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs]) -> None:
    """A work tree holds no commit id for a submodule: such a patch is applied to the view's
    index too, as in a checkout of its own, and gives the collected tree."""
    commit = git(repo, "rev-parse", "HEAD")
    dirs = attempt(tmp_path, repo, commit, TreeCache(tmp_path / "trees", 2**30), attempts)
    inner = make_repo(dirs.tree / "vendored", {"lib.py": "v = 1\n"})
    diff = dirs.scratch / "patch.diff"
    collected = collect_patch(dirs, commit, diff, NO_BOUNDARY)
    assert [c.path for c in collected.changes] == ["vendored"], inner
    assert "Subproject commit" in diff.read_text()
    assert checkout_patched(dirs, commit, diff) == collected.tree


def test_the_cache_links_the_sources_object_files_and_leaves_them_as_they_were(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs]) -> None:
    """Filling the cache copies no history (the pack is linked, as `git clone` links it), and
    neither a run nor evicting the entry changes a byte or a mode of the source's objects."""
    from agentctl.execution.workspaces.tree_cache import evict

    git(repo, "gc", "-q")
    packs = sorted((repo / ".git" / "objects" / "pack").iterdir())
    before = {pack: (os.lstat(pack).st_mode, pack.read_bytes()) for pack in packs}
    commit = git(repo, "rev-parse", "HEAD")
    cache = TreeCache(tmp_path / "trees", 2**30)
    dirs = attempt(tmp_path, repo, commit, cache, attempts)
    lower, _upper = workspace.view_layers(dirs) or (dirs.tree, None)
    cached = lower.parent / "base.git" / "objects" / "pack"
    assert {os.lstat(pack).st_ino for pack in packs} == {
        os.lstat(cached / pack.name).st_ino for pack in packs}
    (dirs.tree / "src" / "app.py").write_text("changed\n")
    remove_workspace(dirs.root)
    assert evict(TreeCache(cache.root, 0)) and not lower.exists()
    assert {pack: (os.lstat(pack).st_mode, pack.read_bytes()) for pack in packs} == before


def test_a_prefetch_that_fails_leaves_its_reason_in_the_debug_log(
        repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The attempt builds the entry again and says why it cannot; the prefetch's own failure
    is no longer swallowed without a word."""
    missing = "0" * 40  # a commit the repository does not have
    cache = TreeCache(tmp_path / "trees", 2**30)
    with caplog.at_level(logging.DEBUG, logger="agentctl.prefetch"):
        early = cache_fill.prefetch(str(repo), missing, is_url=False, cache=cache,
                                    scratch=tmp_path)
        assert early is not None
        early._thread.join()  # the fill ends on its own: not stopped
    (record,) = [r for r in caplog.records if r.name == "agentctl.prefetch"]
    assert record.getMessage().startswith(f"prefetch of {repo} at {missing} failed: ")
    assert record.exc_info is not None


def test_the_bases_tracked_files_are_read_from_the_entry_as_git_lists_them_from_the_index(
        repo: Path, tmp_path: Path, attempts: list[AttemptDirs]) -> None:
    """The cache entry keeps the commit's file list from its fill (the listing that sizes it):
    a run reads the base's secret files there, not from a `git ls-files` of its own; an entry
    filled before it kept one is asked of git, with the same answer."""
    (repo / "dir with space").mkdir()
    (repo / "dir with space" / "tab\there.env").write_text("KEY=1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "odd names")
    commit = git(repo, "rev-parse", "HEAD")
    dirs = attempt(tmp_path, repo, commit, TreeCache(tmp_path / "trees", 2**30), attempts)
    by_git = dirs.git.run("ls-files", "-z", index=dirs.index, what="list").stdout
    assert "dir with space/tab\there.env\0" in by_git and "app-link\0" in by_git
    assert workspace.tracked_files(dirs) == by_git
    lower, _upper = workspace.view_layers(dirs) or (dirs.tree, None)
    kept = lower.parent / cache_fill.TRACKED
    assert kept.read_text() == by_git
    kept.unlink()
    assert workspace.tracked_files(dirs) == by_git
