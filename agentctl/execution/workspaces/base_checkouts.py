"""Clean checkouts of a base commit kept beside the cached baselines, so a run whose baseline
came from the cache does not clone the base again to rerun a flipping test there.

One kept checkout per (repository, base commit), at `<root>/<digest>`. An attempt claims it by
renaming it to a name of its own in the same directory (atomic: two workers never share one),
works in it, and gives it back cleaned (`git clean -ffdx`, a forced checkout of the commit).
It is given back only if nothing under its `.git` but objects, logs, the index and HEAD changed
while it was out, so no hook, config or ref a test wrote reaches the next run; else, and when
another checkout was kept meanwhile, it is deleted. An attempt whose trees are views of the
tree cache (see `workspace`) mounts a view instead and keeps nothing.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution.git import WorkspaceGit
from agentctl.execution.workspaces.discard import remove_workspace
from agentctl.execution.workspaces.tree_cache import cache_key
from agentctl.execution.workspaces.workspace import (
    AttemptDirs,
    checkout_base,
    uses_views,
)

# What git itself changes in a checkout while tests run in it, and a forced checkout resets.
_VOLATILE = frozenset({"objects", "logs", "index", "HEAD", "ORIG_HEAD", "FETCH_HEAD"})


def _fingerprint(checkout: Path) -> str:
    """A digest of the checkout's `.git`, less what git changes on its own."""
    digest = hashlib.sha256()
    root = checkout / ".git"
    for folder, subfolders, files in os.walk(root):
        relative = os.path.relpath(folder, root)
        if relative == ".":
            subfolders[:] = [d for d in subfolders if d not in _VOLATILE]
            files = [f for f in files if f not in _VOLATILE]
        subfolders.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.join(relative, name).encode() + b"\0")
            try:
                with open(path, "rb") as handle:
                    digest.update(handle.read() + b"\0")
            except OSError:
                digest.update(b"unreadable\0")
    return digest.hexdigest()


@dataclass
class BaseCheckout:
    """The attempt's checkout of the base commit: a kept one when there is one, else a clone;
    with `root`, given back there (clean) at `release`, else left in the attempt's directory."""

    dirs: AttemptDirs
    repository: str
    commit: str
    root: Path | None = None
    path: Path | None = None
    reused: bool = False
    _opened: str = field(default="", repr=False)

    def ensure(self, should_stop: Callable[[], bool] | None = None) -> Path:
        """The checkout, claimed or cloned on first use (once per attempt)."""
        if self.path is not None:
            return self.path
        if self.root is None or uses_views(self.dirs):  # a view costs less than keeping one
            self.path = checkout_base(self.dirs, self.commit, should_stop=should_stop)
            return self.path
        self.root.mkdir(parents=True, exist_ok=True)
        claimed = Path(tempfile.mkdtemp(prefix=f"{self._key}.", dir=self.root))
        try:
            os.rename(self.root / self._key, claimed)  # onto the empty dir: atomic
            self.reused = True
        except OSError:
            claimed.rmdir()  # none kept (or another attempt holds it): cloned there
        try:
            self.path = checkout_base(self.dirs, self.commit, should_stop=should_stop,
                                      dest=claimed)
        except BaseException:
            remove_workspace(claimed)
            raise
        self._opened = _fingerprint(claimed)
        return self.path

    def release(self) -> None:
        """Give the checkout back, clean, for the next run on this base; else delete it."""
        if self.root is None or self.path is None or uses_views(self.dirs):
            return
        path, self.path = self.path, None
        try:
            if _fingerprint(path) == self._opened:
                git = WorkspaceGit(git_dir=path / ".git", work_tree=path,
                                   home=self.dirs.root / "git-home")
                changed = git.run("status", "--porcelain", "--ignored", "-z",
                                  "--untracked-files=all", what=f"cannot read {path}").stdout
                head = (path / ".git" / "HEAD").read_text(encoding="utf-8").strip()
                if changed or head != self.commit:  # most base runs leave nothing behind
                    git.run("clean", "-ffdxq", what=f"cannot clean {path}")
                    git.run("-c", "checkout.workers=0", "checkout", "--quiet", "--force",
                            "--detach", self.commit, what=f"cannot reset {path}")
                os.rename(path, self.root / self._key)
                return
        except (InfrastructureFailure, OSError):
            pass  # not kept: the next run clones
        try:
            remove_workspace(path)
        except InfrastructureFailure:
            pass  # a name no run claims: it only takes room

    @property
    def _key(self) -> str:
        return cache_key(self.repository, self.commit)
