"""The sweep of leftover processes and what it must leave alone: a process kept while it runs
beside the phase that sweeps (a base check beside the candidate's, a network bridge)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

from agentctl.execution import reaper
from agentctl.execution.git import kept_from_sweeps, run_git_process
from agentctl.execution.process import run_to_file
from agentctl.execution.reaper import become_subreaper, descendants, kept, release, sweep


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


def test_a_git_started_inside_kept_from_sweeps_is_not_swept_while_it_runs(
        tmp_path: Path) -> None:
    """The base's checkout runs its git beside the attempt's sweeps: the git (an alias that waits
    for a marker written only after the sweep) would fail, swept."""
    spared = frozenset(descendants())
    marker = tmp_path / "swept"
    results: list[int | Exception] = []

    def checkout() -> None:
        try:
            with kept_from_sweeps():
                results.append(run_git_process(
                    ["git", "-c", f"alias.wait=!while [ ! -e {marker} ]; do sleep 0.05; done",
                     "wait"], env=dict(os.environ), cwd=tmp_path, what="waiting").returncode)
        except Exception as error:  # noqa: BLE001 - the test reads it
            results.append(error)

    thread = threading.Thread(target=checkout)
    thread.start()
    while not descendants() - spared:
        pass
    assert sweep(spared) == 0
    marker.touch()
    thread.join()
    assert results == [0]


def _zombie_children() -> set[int]:
    zombies = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if fields[0] == "Z" and int(fields[1]) == os.getpid():
                zombies.add(int(entry.name))
    return zombies


def test_a_sweep_reaps_an_adopted_orphan_that_exited_in_a_session_of_its_own() -> None:
    assert become_subreaper()
    spared = frozenset(descendants())
    before = _zombie_children()
    subprocess.run(["/bin/sh", "-c", "(setsid true &); sleep 0.2"], check=True)
    while not _zombie_children() - before:  # the orphan is ours now, and has exited
        time.sleep(0.01)

    sweep(spared)

    assert not _zombie_children() - before


def test_a_sweep_leaves_the_exit_status_of_our_own_spared_and_kept_processes_to_us() -> None:
    assert become_subreaper()
    spared_process = subprocess.Popen(["/bin/sh", "-c", "sleep 0.2; exit 3"])
    spared = frozenset(descendants())
    with kept() as keep:
        kept_process = subprocess.Popen(["/bin/sh", "-c", "exit 4"])
        keep(kept_process.pid)
    try:
        while not {spared_process.pid, kept_process.pid} <= _zombie_children():
            time.sleep(0.01)
        sweep(spared)
        assert spared_process.wait(timeout=10) == 3
        assert kept_process.wait(timeout=10) == 4
    finally:
        release(kept_process.pid)


def test_the_tree_read_from_each_threads_children_is_the_one_a_scan_of_proc_finds() -> None:
    """A grandchild, a child another thread started, an adopted orphan and an exited one: the
    sweep's look down its own tree sees what a scan of every process on the machine sees."""
    assert become_subreaper()
    spared = frozenset(descendants())
    started: list[subprocess.Popen[bytes]] = []
    thread = threading.Thread(target=lambda: started.append(subprocess.Popen(["sleep", "60"])))
    thread.start()
    thread.join()
    started.append(subprocess.Popen(["/bin/sh", "-c", "sleep 60 & wait"]))
    subprocess.run(["/bin/sh", "-c", "(setsid sleep 60 &)"], check=True)  # an orphan, ours now
    exited = subprocess.Popen(["true"])
    try:
        while len(descendants() - spared) < 4 or exited.pid not in _zombie_children():
            time.sleep(0.01)
        walked, scanned = reaper._processes(os.getpid()), reaper._scanned(os.getpid())
        alive = reaper._below(walked[0], os.getpid(), itself=True)
        assert alive == reaper._below(scanned[0], os.getpid(), itself=True)
        assert {process.pid for process in started} < {pid for pid, _ in alive - spared}
        assert exited.pid in {pid for pid, _ in walked[1]}
        assert set(walked[1]) == set(scanned[1])
    finally:
        assert sweep(spared) >= 4
        for process in [*started, exited]:
            process.wait(timeout=10)
