"""Resource limits for one sandboxed process tree: a cgroup where one can be made, rlimits else.

The cgroup is a child of agentctl's own (v1 `pids` and `memory` hierarchies, or the v2 unified
one when it has those controllers); the tree is put in it by a tiny `/bin/sh` launcher that
moves itself there, sets the rlimits, then execs bubblewrap, so nothing of the tree is ever
outside it. Afterwards every process left in the group is killed and the group removed. The
sandboxed processes cannot write `/sys/fs/cgroup` (read-only inside).

How the launcher moves itself matters: writing a pid to `cgroup.procs` takes the kernel's
global thread-group lock for writing, which waits for an RCU grace period (measured 5-20 ms
here, per process, whenever no other move happened just before). On v1 the launcher writes `0`
to `tasks` instead: the calling thread (its only one) moves alone, and the kernel skips that
lock (0.05 ms). v2 has no such path for a domain group, so there it writes `cgroup.procs`.

RLIMIT_NPROC does not bind root, so it is only the backstop where no cgroup could be made, and so
is the memory rlimit: RLIMIT_DATA (`ulimit -d`, the private writable memory a process maps, which
is what it uses), never RLIMIT_AS (what it reserves): the JVM, Node's WebAssembly, Copilot CLI's
binary and Bun each reserve far more address space than they touch, and abort under an
address-space limit of a few GB. For a normal user RLIMIT_NPROC counts every process of the
user's, not the run's: a cap on the user, not on the run. Debian's /bin/sh (dash)
names it `ulimit -p`, bash and others `-u`: the launcher tries both.

A normal user gets cgroups where one is delegated to them (systemd's `Delegate=yes`, as
`systemd-run --user --scope -p Delegate=yes` gives): a v2 group of their own whose children may
have the pids and memory controllers once the group holds no process, so agentctl moves itself
into a leaf of it first (`_delegated`), as a delegated group's owner is meant to.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import secrets
import shlex
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from agentctl.domain import cgroup_advice
from agentctl.domain.cgroup_advice import CgroupFacts
from agentctl.domain.sandbox import SandboxLimits

CGROUP_ROOT = Path("/sys/fs/cgroup")
_numbers = itertools.count(1)
_GROUP_NAME = re.compile(r"agentctl-(\d+)-\d+(?:-[0-9a-f]+)?")


@dataclass(frozen=True, slots=True)
class CgroupLayout:
    """Where agentctl may make child groups, per controller (None: not available)."""

    pids: Path | None
    memory: Path | None
    unified: bool  # one v2 group holds both

    @property
    def describe(self) -> str:
        return cgroup_advice.describe(self.facts())

    @property
    def fix(self) -> str | None:
        """What would give each run a cgroup of its own, where it has none (None: it has)."""
        return cgroup_advice.fix(self.facts())

    def facts(self) -> CgroupFacts:
        """What the words about these limits rest on: asked on each use (two small reads), so
        what is said is what the machine is now."""
        return CgroupFacts(root=os.geteuid() == 0, pids=self.pids is not None,
                           memory=self.memory is not None, unified=self.unified,
                           v2_controllers=_v2_controllers(),
                           systemd_user=Path(f"/run/user/{os.geteuid()}/systemd").is_dir())


def _v2_controllers() -> frozenset[str]:
    """The controllers the cgroup v2 hierarchy offers: at /sys/fs/cgroup on a v2-only machine,
    at /sys/fs/cgroup/unified on a hybrid one (none where neither is mounted)."""
    for where in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        if (where / "cgroup.controllers").exists():
            return frozenset(_read(where / "cgroup.controllers").split())
    return frozenset()


@cache
def layout() -> CgroupLayout:
    """Probe once per process: the own group of each controller, and whether a child group
    can be made there (tried, then removed)."""
    own = _own_groups()
    unified = CGROUP_ROOT / own.get("", "/").lstrip("/")
    controllers = _read(unified / "cgroup.controllers").split()
    if "pids" in controllers and "memory" in controllers and (
            _can_make_child(unified, "pids.max", "memory.max") or _delegated(unified)):
        where = CgroupLayout(pids=unified, memory=unified, unified=True)
    else:
        pids = CGROUP_ROOT / "pids" / own.get("pids", "/").lstrip("/")
        memory = CGROUP_ROOT / "memory" / own.get("memory", "/").lstrip("/")
        where = CgroupLayout(
            pids=pids if _can_make_child(pids, "pids.max") else None,
            memory=memory if _can_make_child(memory, "memory.limit_in_bytes") else None,
            unified=False)
    for parent in {p for p in (where.pids, where.memory) if p is not None}:
        _remove_stale(parent)
    return where


def _remove_stale(parent: Path) -> None:
    """Remove the empty groups of agentctl processes that are gone (killed before their
    `finally`): they would pile up, one per killed worker."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            match = _GROUP_NAME.fullmatch(entry.name)
            if match and not _alive(int(match.group(1))):
                with contextlib.suppress(OSError):
                    entry.rmdir()  # refused while a process is still in it


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        pass
    return True


@dataclass
class Cgroup:
    """The groups one process tree runs in."""

    directories: tuple[Path, ...]
    memory_limited: bool
    pids_limited: bool
    unified: bool = False

    def joins(self) -> tuple[tuple[Path, str], ...]:
        """(file, what a single-threaded process writes to it) to move itself into each group:
        on v1 its own thread by `tasks` (no global lock, see above), on v2 its pid."""
        if self.unified:
            return tuple((d / "cgroup.procs", "$$") for d in self.directories)
        return tuple((d / "tasks", "0") for d in self.directories)

    def kill_all(self) -> int:
        """SIGKILL whatever is still in the group (a daemon that escaped everything else)."""
        killed: set[int] = set()
        for pause in _pauses(0.5):
            alive = {int(p) for d in self.directories
                     for p in _read(d / "cgroup.procs").split() if p.isdigit()}
            if not alive:
                break
            for pid in alive:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
            time.sleep(pause)
        return len(killed)

    def remove(self) -> None:
        for directory in self.directories:
            for pause in _pauses(0.4):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # still busy for a moment after the last process died
                    time.sleep(pause)


def _pauses(total: float) -> Iterator[float]:
    """Waits that start at 0.1 ms and double up to 20 ms, about `total` seconds in all: a
    sandbox's last process (bubblewrap's init, which outlives the leader that reported the exit
    status) is usually gone a fraction of a millisecond after its leader, rarely later; a first
    wait of 1 ms cost every sandboxed process ~0.7 ms."""
    pause, waited = 0.0001, 0.0
    while waited < total:
        yield pause
        waited += pause
        pause = min(pause * 2, 0.02)


@contextlib.contextmanager
def limited(limits: SandboxLimits) -> Iterator[tuple[list[str], Cgroup | None]]:
    """The launcher prefix that puts a command under `limits`, and the cgroup (if any); the
    cgroup's processes are killed and the group removed on the way out."""
    group = _make_group(limits)
    try:
        yield launcher(limits, group), group
    finally:
        if group is not None:
            group.kill_all()
            group.remove()


def launcher(limits: SandboxLimits, group: Cgroup | None) -> list[str]:
    """`/bin/sh -c '<join the cgroup>; ulimit ...; exec "$@"' agentctl-limits`."""
    joins = group.joins() if group is not None else ()
    lines = [f"echo {value} > {shlex.quote(str(f))} || {{ echo 'agentctl: cannot join the "
             f"cgroup {f.parent.name}' >&2; exit 125; }}" for f, value in joins]
    lines.append(f"ulimit -f {limits.max_file_size_mb * 2048}")  # 512-byte blocks
    if group is None or not group.memory_limited:
        lines.append(f"ulimit -d {limits.max_memory_mb * 1024} 2>/dev/null")
    if (group is None or not group.pids_limited) and os.geteuid() != 0:
        lines.append(f"{{ ulimit -u {limits.max_processes} || ulimit -p {limits.max_processes}; }}"
                     " 2>/dev/null")
    lines.append('exec "$@"')
    return ["/bin/sh", "-c", "; ".join(lines), "agentctl-limits"]


def _make_group(limits: SandboxLimits) -> Cgroup | None:
    where = layout()
    # The token: a group a killed agentctl left behind keeps its name, and pids are reused
    name = f"agentctl-{os.getpid()}-{next(_numbers)}-{secrets.token_hex(4)}"
    made: list[Path] = []
    pids_limited = memory_limited = False
    try:
        if where.unified and where.pids is not None:
            group = where.pids / name
            group.mkdir()
            made.append(group)
            pids_limited = _write(group / "pids.max", str(limits.max_processes))
            memory_limited = _write(group / "memory.max", str(limits.max_memory_mb << 20))
            _write(group / "memory.swap.max", "0")
        else:
            if where.pids is not None:
                group = where.pids / name
                group.mkdir()
                made.append(group)
                pids_limited = _write(group / "pids.max", str(limits.max_processes))
            if where.memory is not None:
                group = where.memory / name
                group.mkdir()
                made.append(group)
                memory_limited = _write(group / "memory.limit_in_bytes",
                                        str(limits.max_memory_mb << 20))
                _write(group / "memory.memsw.limit_in_bytes", str(limits.max_memory_mb << 20))
    except OSError:
        Cgroup(tuple(made), False, False).remove()
        return None
    if not made:
        return None
    return Cgroup(tuple(made), memory_limited=memory_limited, pids_limited=pids_limited,
                  unified=where.unified)


def _own_groups() -> dict[str, str]:
    groups: dict[str, str] = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            groups[name] = path
    return groups


def _can_make_child(parent: Path, *limits: str) -> bool:
    """Whether a child group can be made under `parent` with `limits` (its files) there to
    write: a v2 child has them only where its parent enables the controllers for children."""
    probe = parent / f"agentctl-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return all(os.access(probe / limit, os.W_OK) for limit in limits)
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def _delegated(group: Path) -> bool:
    """A v2 group delegated to this user (theirs to write, its children without pids and
    memory yet): move this process into a leaf of it, so the group holds no process and may
    enable both for its children (the kernel refuses while it holds one), and enable them.
    False, and nothing moved, where the group is not ours or another process is in it."""
    if os.geteuid() == 0 or not os.access(group / "cgroup.subtree_control", os.W_OK):
        return False
    leaf = group / f"agentctl-{os.getpid()}-0"  # removed with the stale ones once we are gone
    try:
        leaf.mkdir(exist_ok=True)
        (leaf / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        with contextlib.suppress(OSError):
            leaf.rmdir()
        return False
    if _write(group / "cgroup.subtree_control", "+pids +memory"):
        return _can_make_child(group, "pids.max", "memory.max")
    return False  # another process is in the group: the leaf holds us, harmlessly


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except OSError:
        return False
    return True


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
