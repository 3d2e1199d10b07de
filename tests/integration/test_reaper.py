"""The sweep of leftover processes and what it must leave alone: a process kept while it runs
beside the phase that sweeps (a base check beside the candidate's, a network bridge)."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from agentctl.execution.process import run_to_file
from agentctl.execution.reaper import descendants, kept, release, sweep


def test_a_kept_process_and_its_children_outlive_a_sweep_until_released() -> None:
    spared = frozenset(descendants())
    with kept() as keep:
        process = subprocess.Popen(["/bin/sh", "-c", "sleep 60 & wait"])
        keep(process.pid)
    try:
        while not descendants(process.pid):  # the shell has forked its sleep: both exist to spare
            assert process.poll() is None
        assert sweep(spared) == 0
        assert process.poll() is None
        assert len(descendants(process.pid)) == 1  # its sleep, too
    finally:
        release(process.pid)
    assert sweep(spared) >= 1
    process.wait(timeout=10)
    assert not descendants() - spared


def test_a_kept_run_is_not_swept_while_it_runs(tmp_path: Path) -> None:
    """The run waits for a marker written only after the sweep: swept, it would not exit 0."""
    spared = frozenset(descendants())
    marker = tmp_path / "swept"
    results = []

    def run() -> None:
        results.append(run_to_file(
            f"while [ ! -e {marker} ]; do sleep 0.05; done", cwd=tmp_path, env=dict(os.environ),
            output=tmp_path / "out", timeout=60, kept=True))

    thread = threading.Thread(target=run)
    thread.start()
    while not descendants():
        pass
    sweep(spared)
    marker.touch()
    thread.join()
    assert results[0].exit_code == 0
