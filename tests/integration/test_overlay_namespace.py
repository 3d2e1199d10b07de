"""Views are mounted in a mount namespace of the process's own: never from a thread left in
the machine's namespace, where a mount would outlive the process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agentctl.execution.workspaces import overlay
from tests.machine import unavailable

# Runs in a fresh interpreter: this test process may have moved into a namespace already.
SCRIPT = """
import sys, threading
from pathlib import Path
from agentctl.execution.workspaces import overlay

root = Path(sys.argv[1])
(root / "lower").mkdir()
(root / "lower" / "file").write_text("base")
started = threading.Event()
go = threading.Event()
outcome = []

def early():
    started.set()
    go.wait()
    try:
        overlay.mount_view(root / "lower", root / "early-layers", root / "early")
        outcome.append("mounted")
    except overlay.OverlayRefused as error:
        outcome.append(f"refused: {error}")

thread = threading.Thread(target=early)
thread.start()
started.wait()
try:
    overlay.mount_view(root / "lower", root / "layers", root / "view")
except overlay.OverlayRefused as error:  # a normal user: no namespace once threads run
    go.set()
    thread.join()
    print(f"refused: {error}")
    print(outcome[0])
    sys.exit(0)
late = []
later = threading.Thread(target=lambda: late.append(overlay.mounts_under(root / "view")))
later.start()
later.join()
go.set()
thread.join()
print((root / "view" / "file").read_text())
print(late == [[str(root / "view")]])
print(outcome[0])
"""


def test_a_thread_left_in_the_machines_mount_namespace_cannot_mount_a_view(
        tmp_path: Path) -> None:
    if not overlay.supported(tmp_path):
        unavailable("overlay mounts are refused here (not root, or no overlay in the kernel)")
    root = tmp_path.resolve()
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(root)], capture_output=True,
                          text=True, timeout=60, check=False)

    assert done.returncode == 0, done.stderr
    if os.geteuid() != 0:  # the user namespace views need is made only while one thread runs
        main, early = done.stdout.splitlines()
        assert main.startswith("refused: ") and "already runs threads" in main
        assert early.startswith("refused: ") and "already runs threads" in early
        return
    view, seen_by_later_thread, early = done.stdout.splitlines()
    assert view == "base"
    assert seen_by_later_thread == "True"  # a thread started after the move is in it
    assert early.startswith("refused: ") and "mount namespace" in early
    assert overlay.mounts_under(root) == []  # nothing left here: it ended with the process
