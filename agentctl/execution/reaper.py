"""Nothing an agent started outlives its phase: not a process group, a whole process tree.

A child that calls `setsid` (or double-forks a daemon) leaves its process group, so killing the
group is not enough. agentctl makes its own process a child subreaper (Linux
`PR_SET_CHILD_SUBREAPER`): an orphaned descendant is re-parented to agentctl instead of init,
so every process a run started stays in agentctl's process tree, where `sweep` finds and kills
it. (The OS sandbox adds a PID namespace on top; this holds without it.)
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
from collections.abc import Callable, Iterator
from functools import cache

_PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 50  # a fork loop may make new children between a scan and its kills
# Processes (and their trees) no sweep touches while they are kept: a network bridge that lasts
# the attempt, a check on the base running beside the candidate's. Started under the lock, so
# no sweep sees one between its start and its keeping.
_kept_lock = threading.Lock()
_kept: set[int] = set()


def become_subreaper() -> bool:
    """Adopt orphaned descendants; False where the kernel has no such thing (not Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


Process = tuple[int, int]  # (pid, start time in clock ticks): a pid alone may be reused


def descendants(pid: int | None = None, *, itself: bool = False) -> set[Process]:
    """Every live process below `pid` (default: this one), from /proc; `itself` too."""
    root = os.getpid() if pid is None else pid
    return _below(_processes(root)[0], root, itself=itself)


_Table = tuple[dict[int, list[Process]], dict[int, Process]]  # children by parent; each by pid


def _processes(root: int) -> tuple[_Table, list[Process]]:
    """Every live process below `root` (and `root`) by its parent and by its pid, and `root`'s
    exited children (zombies): one look serves a sweep's every question. Read down the tree
    from each thread's `children` file, a few files for a run's processes: a scan of /proc
    reads one per process on the machine (257 here, 11 ms of CPU a sweep, three sweeps a run);
    that scan where the kernel keeps no such file."""
    if not _children_files():
        return _scanned(root)
    children: dict[int, list[Process]] = {}
    by_pid: dict[int, Process] = {}
    exited: list[Process] = []
    fields = _stat_fields(str(root))
    if fields and fields[0] != b"Z":
        by_pid[root] = (root, int(fields[19]))
    pending = [root]
    while pending:
        parent = pending.pop()
        for pid in _child_pids(parent):
            fields = _stat_fields(str(pid))
            if not fields:
                continue  # gone meanwhile (reaped)
            process = (pid, int(fields[19]))
            if fields[0] == b"Z":  # runs nothing; its parent (we, for adopted ones) reaps it
                if parent == root:
                    exited.append(process)
                continue
            children.setdefault(parent, []).append(process)
            by_pid[pid] = process
            pending.append(pid)
    return (children, by_pid), exited


def _scanned(root: int) -> tuple[_Table, list[Process]]:
    """`_processes` from one scan of /proc: a file per process on the machine."""
    children: dict[int, list[Process]] = {}
    by_pid: dict[int, Process] = {}
    exited: list[Process] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = _stat_fields(name)
        if not fields:
            continue  # gone meanwhile
        process = (int(name), int(fields[19]))
        if fields[0] == b"Z":
            if int(fields[1]) == root:
                exited.append(process)
            continue
        children.setdefault(int(fields[1]), []).append(process)
        by_pid[process[0]] = process
    return (children, by_pid), exited


@cache
def _children_files() -> bool:
    """Whether this kernel lists each thread's children (`/proc/PID/task/TID/children`)."""
    own = os.getpid()
    return os.path.exists(f"/proc/{own}/task/{own}/children")


def _child_pids(pid: int) -> list[int]:
    """The children of every thread of `pid` (a child belongs to the thread that forked it; an
    adopted orphan to one of ours); none when it is gone."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for thread in threads:
        try:
            descriptor = os.open(f"/proc/{pid}/task/{thread}/children", os.O_RDONLY)
        except OSError:
            continue  # the thread has ended
        try:
            found += [int(child) for child in os.read(descriptor, 1 << 20).split()]
        except OSError:
            continue
        finally:
            os.close(descriptor)
    return found


def _below(table: _Table, root: int, *, itself: bool) -> set[Process]:
    children, by_pid = table
    found: set[Process] = {by_pid[root]} if itself and root in by_pid else set()
    pending = list(children.get(root, ()))
    while pending:
        current = pending.pop()
        found.add(current)
        pending.extend(children.get(current[0], ()))
    return found


@contextlib.contextmanager
def kept() -> Iterator[Callable[[int], None]]:
    """Start a process inside and give its pid to the callback: it and its tree are left alone
    by every sweep until `release(pid)`."""
    with _kept_lock:
        yield _kept.add


def release(pid: int) -> None:
    """A kept process has ended: what it left behind is the next sweep's again."""
    with _kept_lock:
        _kept.discard(pid)


def sweep(spared: set[Process] | frozenset[Process] = frozenset()) -> int:
    """Kill every descendant of this process that was not already running when `spared` was
    taken (`descendants()` at the start of the phase) and is not kept, and reap the orphans it
    adopted, killed here or exited before; the number killed."""
    killed: set[int] = set()
    exited: list[Process] = []
    for _ in range(_ROUNDS):
        with _kept_lock:
            table, exited = _processes(os.getpid())
            alive = _below(table, os.getpid(), itself=False) - spared
            for root in _kept:
                alive -= _below(table, root, itself=True)
            for child, _started in alive:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(child, signal.SIGKILL)
                    killed.add(child)
        if not alive:
            break
        _reap(killed)
    _reap(killed)
    _reap_exited([process for process in exited if process[0] not in killed], spared)
    return len(killed)


def _reap_exited(exited: list[Process], spared: set[Process] | frozenset[Process]) -> None:
    """Collect every child of ours that had exited on its own by the sweep's last look (`exited`),
    whatever its group, unless it was there when `spared` was taken or is kept: an orphan we
    adopted has no one else to, and left alone it stays a zombie for as long as we live. Our own
    processes are not taken from their owners: those of the phase were waited for before its
    sweep, kept ones are left alone."""
    with _kept_lock:
        for process in exited:
            if process[0] in _kept or process in spared:
                continue
            with contextlib.suppress(ChildProcessError):
                os.waitpid(process[0], os.WNOHANG)


def _reap(pids: set[int]) -> None:
    """Collect the exit status of killed processes that are (now) our children: orphans we
    adopted have no one else to. Other children of ours are none of this function's business."""
    for pid in list(pids):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _stat_fields(pid: str) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state first); None when the
    process is gone. Raw reads: a text file object per process costs more than the read."""
    try:
        descriptor = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        try:
            stat = os.read(descriptor, 4096)
        finally:
            os.close(descriptor)
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2:].split()
