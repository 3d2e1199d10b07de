"""agentctl's own git copies of a base: the bare copy of the source (a local repository cloned,
a URL fetched) with a branch of its own at the base, and clones of that copy with no remote.
Both the attempt's workspace (`workspace`) and the tree cache's entries (`cache_fill`) are made
of these, through agentctl's hardened git (`git.trusted_git`, `git.hardened_argv`).
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Callable
from pathlib import Path

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution.git import (
    FULL_COMMIT_ID,
    WorkspaceGit,
    hardened_argv,
    hardened_env,
    run_git_process,
    trusted_git,
)

SHA = re.compile(r"[0-9a-fA-F]{7,64}")  # a commit id as git prints it
BASE_REF = "refs/heads/agentctl-base"  # the bare copy's own branch at the base commit

__all__ = ["BASE_REF", "SHA", "borrowing_repository", "clone", "copy_source", "holds_object"]


def copy_source(source: str, commit: str, base: Path, *, is_url: bool, home: Path,
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
        if FULL_COMMIT_ID.fullmatch(commit) and holds_object(base / "objects", commit):
            _write_branch(base, commit)
            return
    WorkspaceGit(git_dir=base, work_tree=base.parent, home=home).run(
        "update-ref", BASE_REF, commit, what=f"cannot check out commit {commit} of {source}")


def _write_branch(base: Path, commit: str) -> None:
    """`BASE_REF` at `commit` in the fresh bare clone `base` of a local repository, written as
    `git update-ref` writes it there (a loose ref, which wins over a packed one of the same
    name; a bare repository keeps no reflog), without its process (one git process fewer on a
    cold cache's fill)."""
    ref = base / BASE_REF
    ref.parent.mkdir(parents=True, exist_ok=True)
    ref.write_text(f"{commit}\n", encoding="ascii")


def holds_object(objects: Path, name: str) -> bool:
    """Whether the object folder `objects` holds object `name` itself (loose, or in a pack by
    its version-2 index), as `git update-ref` makes sure before it writes a ref: else that
    git reports the missing commit."""
    if (objects / name[:2] / name[2:]).is_file():
        return True
    wanted = bytes.fromhex(name)
    width = len(wanted)
    names = 8 + 256 * 4  # the header and the fan-out table, then the names, sorted
    for path in (objects / "pack").glob("pack-*.idx"):
        if path.stat().st_size < names:
            continue
        with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as idx:
            if idx[:8] != b"\xfftOc\x00\x00\x00\x02":
                continue
            first = wanted[0]  # the fan-out: how many names start with a smaller byte, and ours
            low = int.from_bytes(idx[4 + 4 * first:8 + 4 * first], "big") if first else 0
            high = int.from_bytes(idx[8 + 4 * first:12 + 4 * first], "big")
            while low < high:
                middle = (low + high) // 2
                found = idx[names + middle * width:names + (middle + 1) * width]
                if found == wanted:
                    return True
                low, high = (middle + 1, high) if found < wanted else (low, middle)
    return False


def borrowing_repository(base: Path, commit: str, objects: Path) -> None:
    """A bare repository at `base` whose objects are `objects`' (an alternate: anything new is
    written to its own), with its branch `BASE_REF` at `commit` and HEAD on it: what `git init
    --bare --template=`, the alternates file and `git update-ref` make, written here (the
    layout of gitrepository-layout(5), loose refs; two git processes fewer on every attempt
    that borrows a cached base, whose objects hold `commit`)."""
    if not FULL_COMMIT_ID.fullmatch(commit):  # a loose ref holds a whole id
        raise InfrastructureFailure(f"invalid commit id {commit!r}")
    for folder in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):
        (base / folder).mkdir(parents=True)
    (base / "objects" / "info" / "alternates").write_text(f"{objects}\n", encoding="utf-8")
    (base / BASE_REF).write_text(f"{commit}\n", encoding="ascii")
    head = base / "HEAD"
    head.write_text(f"ref: {BASE_REF}\n", encoding="ascii")
    sha256 = len(commit) == 64  # a SHA-256 repository's: git reads it only so declared
    (base / "config").write_text(
        f"[core]\n\trepositoryformatversion = {1 if sha256 else 0}\n\tfilemode = "
        f"{'true' if _keeps_modes(head) else 'false'}\n\tbare = true\n"
        + ("[extensions]\n\tobjectformat = sha256\n" if sha256 else ""), encoding="utf-8")


def _keeps_modes(probe: Path) -> bool:
    """Whether the file system keeps the executable bit, as git probes it at `init` (a chmod
    refused counts as no)."""
    mode = probe.stat().st_mode
    try:
        probe.chmod(mode ^ 0o100)
        kept = probe.stat().st_mode != mode
        probe.chmod(mode)
    except OSError:
        return False
    return kept


def clone(source: Path, dest: Path, home: Path, should_stop: Callable[[], bool] | None, *,
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
