"""Socket folders left by a killed process are removed by the next one made; a live process's
folder is left alone. Real processes holding real locks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from agentctl.execution.sandboxing.socket_dirs import PREFIX, SocketDir, sweep

_HOLD = """
import sys, time
from pathlib import Path
from agentctl.execution.sandboxing.socket_dirs import SocketDir
made = SocketDir(Path(sys.argv[1]))
print(made.path, flush=True)
time.sleep(600)
"""


def _holder(parent: Path) -> tuple[subprocess.Popen[str], Path]:
    process = subprocess.Popen([sys.executable, "-c", _HOLD, str(parent)],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def test_the_folder_of_a_killed_process_goes_with_the_next_one_made(tmp_path: Path) -> None:
    killed, left = _holder(tmp_path)
    alive, held = _holder(tmp_path)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert left.is_dir()  # a killed process removes nothing

        made = SocketDir(tmp_path)

        assert not left.exists()
        assert held.is_dir()  # its process lives
        assert made.path.is_dir() and made.path.name.startswith(PREFIX)
        made.remove()
        assert not made.path.exists()
    finally:
        alive.kill()
        alive.wait()


def test_the_sweep_leaves_a_folder_being_made_and_anything_not_a_folder(tmp_path: Path) -> None:
    being_made = tmp_path / f"{PREFIX}new"
    being_made.mkdir()  # no lock file yet: its maker has not taken it
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "holder.lock").write_text("")
    link = tmp_path / f"{PREFIX}link"
    os.symlink(elsewhere, link)

    assert sweep(tmp_path) == []
    assert being_made.is_dir() and elsewhere.is_dir() and link.is_symlink()


_SWEEP = """
import sys
from pathlib import Path
from agentctl.execution.sandboxing.socket_dirs import sweep
parent = Path(sys.argv[1])
while not (parent / "stop").exists():
    sweep(parent)
"""


def test_a_folder_being_made_is_never_swept_from_under_its_maker(tmp_path: Path) -> None:
    """Three runs starting at once: each sweeps while the others make their folders. A sweep
    that saw the lock file before its maker held it removed a live run's folder (its socket's
    bind then failed: "verify failed: [Errno 2]")."""
    sweepers = [subprocess.Popen([sys.executable, "-c", _SWEEP, str(tmp_path)])
                for _ in range(2)]
    try:
        lost = 0
        for _ in range(1500):
            made = SocketDir(tmp_path)
            lost += not (made.path / "holder.lock").is_file()
            made.remove()
    finally:
        (tmp_path / "stop").write_text("")
        for sweeper in sweepers:
            sweeper.wait(timeout=60)
    assert lost == 0
