"""The overlay probe (a trial mount) runs once per boot, user and scratch filesystem, not in
every process: its success is remembered in the tree cache's folder, and forgotten when a real
view is refused. Real mounts in real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentctl.execution.workspaces import overlay
from agentctl.execution.workspaces.trash import TRASH_PREFIX
from tests.e2e.workers_support import wait_until
from tests.machine import unavailable

# A fresh process asks; it prints the answer and whether it left the machine's mount namespace
# (the trial mount moves it into its own first).
_ASK = """
import os, sys
from pathlib import Path
from agentctl.execution.workspaces import overlay
before = os.readlink("/proc/self/ns/mnt")
answer = overlay.supported(Path(sys.argv[1]), Path(sys.argv[2]))
print(answer, os.readlink("/proc/self/ns/mnt") != before)
"""


@pytest.fixture(autouse=True)
def mountable(tmp_path: Path) -> None:
    if not overlay.supported(tmp_path):
        unavailable("overlay mounts are refused here (not root, or no overlay in the kernel)")


def _ask(scratch: Path, remembered: Path) -> str:
    return subprocess.run([sys.executable, "-c", _ASK, str(scratch), str(remembered)],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_only_the_first_process_tries_a_mount_the_next_trust_what_it_remembered(
        tmp_path: Path) -> None:
    remembered = tmp_path / "trees"

    assert _ask(tmp_path, remembered) == "True True"  # tried: a mount namespace of its own
    assert len(list(remembered.glob(".views-mount-*"))) == 1
    # remembered: no trial mount (a normal user's process moves into a namespace of its own
    # all the same: its views are mounted there)
    assert _ask(tmp_path, remembered) == ("True False" if os.geteuid() == 0 else "True True")
    assert [path.name for path in tmp_path.iterdir()
            if path.name.startswith("agentctl-overlay-probe-")] == []


def test_a_refused_view_makes_the_next_process_try_again(tmp_path: Path) -> None:
    remembered = tmp_path / "trees"
    assert _ask(tmp_path, remembered) == "True True"

    overlay.forget(tmp_path, remembered)

    assert list(remembered.glob(".views-mount-*")) == []
    assert _ask(tmp_path, remembered) == "True True"


def test_the_trial_mounts_folder_leaves_as_trash_and_a_detached_process_empties_it(
        tmp_path: Path) -> None:
    """Removing it on a loaded disk would hold up a first run's start: it is renamed to trash
    at once (nothing of the probe's is left under its own name) and deleted in the background."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert _ask(scratch, tmp_path / "trees") == "True True"

    left = [path.name for path in scratch.iterdir()]
    assert all(name.startswith(TRASH_PREFIX + "agentctl-overlay-probe-") for name in left)
    wait_until(lambda: not any(scratch.iterdir()), timeout=120, what="the probe's trash to go")
