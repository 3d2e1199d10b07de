"""Runs whose trees are views of the tree cache: whatever a run writes, in its workspace, its
verified tree, its baseline tree or at the cache itself, the cache entry stays as it was built.
Real overlay mounts, the real sandbox, a `command:` agent and checks that write everywhere."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from agentctl.domain.enums import StepType
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.execution.workspaces import overlay
from agentctl.execution.workspaces.tree_cache import TreeCache
from tests.machine import unavailable
from tests.pipeline.conftest import UNITTEST, Harness

# Writes into every file it can reach below each folder it is given, in place (no new inode),
# after making it writable; truncates, deletes, links and renames some; plants a git hook.
HOSTILE = r'''
import os, sys
for root in sys.argv[1:]:
    for folder, subfolders, files in os.walk(root):
        for name in subfolders + files:
            path = os.path.join(folder, name)
            try:
                os.chmod(path, 0o777, follow_symlinks=False)
            except OSError:
                pass
        for name in files:
            path = os.path.join(folder, name)
            try:
                with open(path, "r+b") as handle:
                    handle.write(b"hostile")
                os.utime(path, (0, 0))
                os.link(path, path + ".linked")
            except OSError:
                pass
    for name in ("hooks/post-checkout", "config"):
        try:
            with open(os.path.join(root, ".git", name), "a") as handle:
                handle.write("\n# hostile\n")
        except OSError:
            pass
    try:
        os.truncate(os.path.join(root, "README.md"), 0)
        os.replace(os.path.join(root, "test_calc.py"), os.path.join(root, "moved.py"))
    except OSError:
        pass
'''


def cache_state(cache: Path) -> dict[str, str]:
    """Every path's mode, mtime and bytes in the cache's entries (their lock files aside)."""
    state = {}
    for folder, subfolders, names in os.walk(cache):
        subfolders.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.endswith((".pin", ".build")) or name == "lock":
                continue
            info = os.lstat(path)
            data = os.readlink(path).encode() if os.path.islink(path) else Path(path).read_bytes()
            state[path] = f"{info.st_mode} {info.st_mtime_ns} {hashlib.sha256(data).hexdigest()}"
    return state


on_sqlite = pytest.mark.parametrize("harness", ["sqlite"], indirect=True)  # the store plays no part


@on_sqlite
def test_a_run_that_writes_everywhere_it_can_leaves_the_cache_unchanged(
        harness: Harness, tmp_path: Path) -> None:
    if not overlay.supported(tmp_path):
        unavailable("overlay mounts are refused here (not root, or no overlay in the kernel)")
    cache = TreeCache(tmp_path / "trees", 2**30)
    warm = harness.record(harness.execute(harness.submit(parse_agent_spec("noop", harness.root)),
                                          tree_cache=cache))
    (clone,) = [s for s in warm.steps if s.type is StepType.CLONE_REPOSITORY]
    assert clone.attributes["treeView"] is True
    before = cache_state(cache.root)
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE)
    attack = f"{sys.executable} {script} . {cache.root}"

    record = harness.record(harness.execute(harness.submit(
        parse_agent_spec(f"command:{attack}", harness.root), verify=(f"{attack}; {UNITTEST}",)),
        tree_cache=cache))

    (patch,) = record.patches
    assert patch.file_changes  # it did write its workspace
    checks = [c for report in record.verifications for c in report.checks]
    assert any(c.baseline_commit for c in checks)  # the base's tree was attacked too
    assert cache_state(cache.root) == before
    assert overlay.mounts_under(tmp_path) == []  # every view unmounted with its attempt


@on_sqlite
def test_a_run_sees_the_same_tree_with_and_without_the_cache(harness: Harness) -> None:
    """The view is the checkout: same patch, same verified tree, same verdict."""
    agent = parse_agent_spec(
        "command:python3 -c \"open('calc/__init__.py','a').write('# ok\\n')\"", harness.root)
    viewed = harness.run(agent)
    cloned = harness.record(harness.execute(harness.submit(agent), tree_cache=None))
    assert [p.tree_id for p in viewed.patches] == [p.tree_id for p in cloned.patches]
    assert viewed.verdict is not None and cloned.verdict is not None
    assert viewed.verdict.status is cloned.verdict.status
