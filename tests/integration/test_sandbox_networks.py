"""An attempt's network namespaces, on this machine's real bubblewrap: made once per rule set and
lent to one process at a time, so a sandboxed process pays for bwrap, not for a bridge of its
own; each process's connections are still its own; and where a namespace cannot be joined each
process brings its own bridge, with the same denials."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.domain.sandbox import SandboxProfile
from agentctl.execution.process import run_to_file
from agentctl.execution.reaper import descendants, sweep
from agentctl.execution.sandboxing.bubblewrap import check
from agentctl.execution.sandboxing.networks import MAX_IDLE, NetworkPool, can_join_networks
from agentctl.execution.sandboxing.sandbox import Sandbox
from tests.machine import unavailable

FETCH = ("python3 -c \"import urllib.request as u; "
         "u.urlopen('http://denied.example/', timeout=10)\"")


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    if not check().works:
        unavailable(f"bubblewrap cannot start here: {check().message}")
    (tmp_path / "net").mkdir()
    made = Sandbox.for_attempt(SandboxProfile(), env=dict(os.environ), hidden=[tmp_path / "net"],
                               proxy_dir=tmp_path / "net")
    yield made
    made.close()


def workspace(tmp_path: Path, name: str = "ws") -> Path:
    path = tmp_path / name
    path.mkdir(exist_ok=True)
    return path


def inside(sandbox: Sandbox, tmp_path: Path, command: str | list[str],
           place: Path | None = None) -> tuple[int | None, str, int]:
    """Run in a fresh jail: exit code, output, connections it tried."""
    where = place or workspace(tmp_path)
    jail = sandbox.jail(where)
    output = tmp_path / f"out-{threading.get_ident()}-{where.name}"
    result = run_to_file(command, cwd=where, env=dict(os.environ), output=output, timeout=60,
                         confine=jail)
    return result.exit_code, output.read_text(), len(jail.connections)


def test_the_processes_of_an_attempt_share_one_network_made_once(sandbox: Sandbox,
                                                                 tmp_path: Path) -> None:
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    first = inside(sandbox, tmp_path, "readlink /proc/self/ns/net")
    second = inside(sandbox, tmp_path, "readlink /proc/self/ns/net")
    assert first[0] == second[0] == 0
    assert first[1] == second[1] and first[1].startswith("net:[")
    assert first[1].strip() != os.readlink("/proc/self/ns/net")


def test_each_process_records_only_its_own_connections(sandbox: Sandbox,
                                                       tmp_path: Path) -> None:
    code, output, tried = inside(sandbox, tmp_path, FETCH)
    assert code != 0 and "403" in output and tried == 1
    assert inside(sandbox, tmp_path, "true")[2] == 0


def test_two_processes_at_once_get_two_networks(sandbox: Sandbox, tmp_path: Path) -> None:
    """Each waits (up to a minute) for the other's marker: both must be running at once."""
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    shared = workspace(tmp_path, "shared")
    results: dict[str, tuple[int | None, str, int]] = {}

    def one(me: str, other: str) -> None:
        place = workspace(tmp_path, me)
        script = (f"readlink /proc/self/ns/net; touch {shared}/{me}; i=0; "
                  f"while [ ! -e {shared}/{other} ] && [ $i -lt 600 ]; do sleep 0.1; "
                  f"i=$((i+1)); done; [ -e {shared}/{other} ]")
        jail = sandbox.jail(place, writable=(shared,))
        output = tmp_path / f"out-{me}"
        result = run_to_file(script, cwd=place, env=dict(os.environ), output=output,
                             timeout=90, confine=jail)
        results[me] = (result.exit_code, output.read_text(), len(jail.connections))

    threads = [threading.Thread(target=one, args=pair) for pair in (("a", "b"), ("b", "a"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results["a"][0] == results["b"][0] == 0, results
    assert results["a"][1] != results["b"][1]


def test_the_reaper_leaves_the_attempts_networks_alone(sandbox: Sandbox,
                                                       tmp_path: Path) -> None:
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    spared = frozenset(descendants())
    before = inside(sandbox, tmp_path, "readlink /proc/self/ns/net")[1]
    sweep(spared)
    after = inside(sandbox, tmp_path, FETCH)
    assert "403" in after[1] and after[2] == 1
    assert inside(sandbox, tmp_path, "readlink /proc/self/ns/net")[1] == before


def test_a_missing_command_exits_127_and_a_missing_argv_program_too(sandbox: Sandbox,
                                                                   tmp_path: Path) -> None:
    code, output, _ = inside(sandbox, tmp_path, ["agentctl-no-such-command", "x"])
    assert code == 127 and "agentctl-no-such-command: command not found" in output
    assert inside(sandbox, tmp_path, "agentctl-no-such-command")[0] == 127
    assert inside(sandbox, tmp_path, ["true"])[0] == 0


def test_without_a_joinable_namespace_each_process_brings_its_own_bridge(
        sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.networks.shared = False  # as for a user who is not root
    # both alive at once (each waits for the other's marker): a namespace that has ended may
    # hand its number to the next one, so two in turn could not be told apart
    meet = ("readlink /proc/self/ns/net; touch here.{me}; i=0; "
            "while [ ! -e here.{other} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done")
    found: dict[str, str] = {}
    threads = [threading.Thread(target=lambda me=me, other=other: found.__setitem__(
        me, inside(sandbox, tmp_path, meet.format(me=me, other=other))[1]))
        for me, other in (("a", "b"), ("b", "a"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found["a"].startswith("net:[") and found["a"] != found["b"]
    code, output, tried = inside(sandbox, tmp_path, FETCH)
    assert code != 0 and "403" in output and tried == 1
    assert inside(sandbox, tmp_path, ["agentctl-no-such-command"])[0] == 127


def test_a_network_made_on_a_thread_that_ended_still_serves(sandbox: Sandbox,
                                                            tmp_path: Path) -> None:
    """A base check beside the candidate's makes its network on a thread of its own."""
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    made: list[tuple[int | None, str, int]] = []
    thread = threading.Thread(target=lambda: made.append(
        inside(sandbox, tmp_path, "readlink /proc/self/ns/net")))
    thread.start()
    thread.join()
    code, output, tried = inside(sandbox, tmp_path, FETCH)
    assert "403" in output and tried == 1, output
    assert inside(sandbox, tmp_path, "readlink /proc/self/ns/net")[1] == made[0][1]


def test_the_first_network_is_started_before_any_process_needs_it(sandbox: Sandbox) -> None:
    """Made while the attempt clones: its bridge is up with no process run yet."""
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")

    def bridges() -> list[int]:
        found = []
        for pid, _ in descendants():
            with contextlib.suppress(OSError):
                if b"--info-fd" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
        return found

    deadline = time.monotonic() + 30
    while not bridges() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert bridges()  # bwrap and, forked from it, the namespace's first process


def test_a_network_ends_with_the_agentctl_that_made_it(tmp_path: Path) -> None:
    """Killed without closing anything, agentctl leaves no bridge behind (its stdin closes)."""
    if not check().works or not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    script = f'''
import os, sys
from pathlib import Path
from agentctl.domain.sandbox import SandboxProfile
from agentctl.execution.sandboxing.sandbox import Sandbox
sandbox = Sandbox.for_attempt(SandboxProfile(), env=dict(os.environ), hidden=(),
                              proxy_dir=Path({str(tmp_path)!r}))
with sandbox.networks.lend((), "3128") as network:
    print(network.shared.path, flush=True)
os.kill(os.getpid(), 9)
'''
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    namespace = Path(done.stdout.strip())
    assert namespace.name == "net", done.stderr
    deadline = time.monotonic() + 30
    while namespace.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not namespace.exists()


# --- shared by the attempts of one agentctl process ------------------------------------------

LISTENER = ("import socket, time; s = socket.socket(); "
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
            "s.bind(('127.0.0.1', 47123)); s.listen(); open('/tmp/up', 'w').close(); "
            "time.sleep(600)")
DIAL = ("python3 -c \"import socket; socket.create_connection(('127.0.0.1', 47123), timeout=5)\""
        " && echo reached || echo refused")


def another_attempt(tmp_path: Path, name: str) -> Sandbox:
    (tmp_path / name).mkdir()
    return Sandbox.for_attempt(SandboxProfile(), env=dict(os.environ),
                               hidden=[tmp_path / name], proxy_dir=tmp_path / name)


def test_a_later_attempt_joins_the_same_namespace_but_finds_nothing_an_earlier_one_left(
        tmp_path: Path) -> None:
    """The first attempt's process leaves a listener running and a file in /tmp; the next
    attempt's process is in the very same network namespace, yet the listener died with its
    jail, the file with its tmpfs, and only its own connection is counted against it."""
    if not check().works or not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    first = another_attempt(tmp_path, "first")
    try:
        script = (f"(python3 -c \"{LISTENER}\" &); i=0; while [ ! -e /tmp/up ] && "
                  f"[ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; {DIAL}; "
                  "echo left > /tmp/left; readlink /proc/self/ns/net; " + FETCH)
        code, before, tried = inside(first, tmp_path, script)
    finally:
        first.close()
    assert "reached" in before and "403" in before and tried == 1, before
    second = another_attempt(tmp_path, "second")
    try:
        code, after, tried = inside(second, tmp_path, f"readlink /proc/self/ns/net; {DIAL}; "
                                    "ls /tmp; " + FETCH)
    finally:
        second.close()
    namespace = next(line for line in before.splitlines() if line.startswith("net:["))
    assert namespace in after.splitlines(), (before, after)  # reused, not made again
    assert "refused" in after and "reached" not in after, after
    assert "left" not in after and "up" not in after.split(), after
    assert "403" in after and tried == 1, after


def test_namespaces_left_idle_beyond_the_bound_are_ended(sandbox: Sandbox) -> None:
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    pool = NetworkPool()
    try:
        made = []
        for number in range(MAX_IDLE + 2):
            key = (sandbox.networks.bridge_jail, (f"host-{number}.example",), "3128")
            with pool.lend(key) as network:
                assert network.shared is not None
                made.append(network.shared.path)
        deadline = time.monotonic() + 30
        while any(path.exists() for path in made[:2]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [path.exists() for path in made] == [False] * 2 + [True] * MAX_IDLE
    finally:
        pool.close()
    assert not any(path.exists() for path in made)


def test_a_namespace_whose_bridge_died_is_made_again(sandbox: Sandbox) -> None:
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    pool = NetworkPool()
    key = (sandbox.networks.bridge_jail, (), "3128")
    try:
        with pool.lend(key) as network:
            assert network.shared is not None
            dead = network.shared.path
        os.killpg(int(dead.parts[2]), 9)  # the bridge's bwrap leads its own session
        deadline = time.monotonic() + 30
        while dead.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with pool.lend(key) as network:
            assert network.shared is not None and network.alive
            assert network.shared.path != dead and network.shared.path.exists()
    finally:
        pool.close()


def pool_bridges(pool: NetworkPool) -> int:
    """The pool's bridges: its bwraps this process started (`--info-fd`, its socket folder)."""
    found = 0
    for pid, _ in descendants():
        with contextlib.suppress(OSError):
            line = Path(f"/proc/{pid}/cmdline").read_bytes()
            parent = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1]
            found += (b"--info-fd" in line and str(pool.sockets.path).encode() in line
                      and int(parent) == os.getpid())
    return found


def made_bridges(pool: NetworkPool, count: int) -> int:
    """The pool's bridges once `count` are up (or 30 s have passed)."""
    deadline = time.monotonic() + 30
    while pool_bridges(pool) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return pool_bridges(pool)


def test_two_networks_asked_for_ahead_serve_two_processes_at_once_without_a_third(
        sandbox: Sandbox) -> None:
    """The base's checks beside the candidate's: both networks made while it checks out."""
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    pool = NetworkPool()
    key = (sandbox.networks.bridge_jail, (), "3128")

    try:
        pool.prepare(key, 2)
        pool.prepare(key, 2)  # both on their way: no third
        assert made_bridges(pool, 2) == 2
        with pool.lend(key) as first, pool.lend(key) as second:
            assert first.shared is not None and second.shared is not None
            assert first.shared.path != second.shared.path
            assert pool_bridges(pool) == 2
    finally:
        pool.close()


def test_three_networks_asked_for_at_once_are_all_made_ahead(sandbox: Sandbox) -> None:
    """A fix's base beside the candidate: the candidate's network, and one for each of the
    base's reruns made at once, all asked for in one call and all made before any is lent (one
    made when a rerun asks would hold it up); three lent at once need no fourth."""
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    pool = NetworkPool()
    key = (sandbox.networks.bridge_jail, (), "3128")

    try:
        pool.prepare(key, 3)
        assert made_bridges(pool, 3) == 3
        with pool.lend(key) as first, pool.lend(key) as second, pool.lend(key) as third:
            assert len({n.shared.path for n in (first, second, third)  # type: ignore[union-attr]
                        }) == 3
            assert pool_bridges(pool) == 3
    finally:
        pool.close()

# --- started in the namespace by the thread, not by nsenter -----------------------------------

def test_a_jailed_process_is_born_in_the_shared_namespace_without_nsenter(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """The starting thread joins the namespace around the start: an `nsenter` first on the
    PATH that would fail is never run, and the thread is back in its own namespace after."""
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nsenter").write_text("#!/bin/sh\necho fake nsenter ran; exit 99\n")
    (fake / "nsenter").chmod(0o755)
    own = os.readlink("/proc/thread-self/ns/net")
    where = workspace(tmp_path)
    jail = sandbox.jail(where)
    result = run_to_file("readlink /proc/self/ns/net", cwd=where, output=tmp_path / "out",
                         env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"},
                         timeout=60, confine=jail)
    output = (tmp_path / "out").read_text()
    assert result.exit_code == 0 and "fake" not in output, output
    assert output.startswith("net:[") and output.strip() != own
    assert output == inside(sandbox, tmp_path, "readlink /proc/self/ns/net")[1]
    assert os.readlink("/proc/thread-self/ns/net") == own


def test_a_start_that_fails_leaves_the_thread_in_its_own_namespace(sandbox: Sandbox,
                                                                   tmp_path: Path) -> None:
    if not can_join_networks():
        unavailable("a network namespace can be joined only as root with nsenter")
    own = os.readlink("/proc/thread-self/ns/net")
    seen: list[str] = []

    def start(argv: list[str]) -> subprocess.Popen[bytes]:
        seen.append(os.readlink("/proc/thread-self/ns/net"))
        raise OSError("no such program")

    where = workspace(tmp_path)
    jail = sandbox.jail(where)
    with jail.confined(["true"], dict(os.environ), where) as (argv, _env):
        with pytest.raises(OSError, match="no such program"):
            jail.launch(argv, start)
    assert seen and seen[0] != own  # it was started from inside
    assert os.readlink("/proc/thread-self/ns/net") == own
