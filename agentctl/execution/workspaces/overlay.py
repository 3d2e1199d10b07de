"""Copy-on-write views of a read-only tree, as kernel overlay mounts.

A view is an overlay of the tree (lower, never written through the mount: every write copies
the file up first) with a fresh upper and work directory of its own, so many views share one
tree and none can change it. Where the kernel or the caller's rights refuse, `supported` says
no once (`refusal` says why) and callers make a full checkout instead.

Views never outlive the process that made them: before its first mount the process moves into a
mount namespace of its own (`_private_namespace`), which everything it starts afterwards (the
agent, the checks, git) inherits, so they all see the views while no other process on the
machine does. When the last of them ends, killed with -9 or not, the kernel drops the namespace
and the views with it; no sweep has to find them.

Mounting needs CAP_SYS_ADMIN over the mount namespace. Root has it. A normal user gets it in a
user namespace of agentctl's own, made with the mount namespace and mapping the user to itself
(same uid and gid inside, so files and `geteuid` are as before; only others' files show as
nobody's): kernels since 5.11 mount overlays there. Measured against bubblewrap's own overlays
(`--overlay`, which exist only inside one bwrap process, so agentctl's own git on a view would
need a bwrap each) and fuse-overlayfs (not installed, and a daemon per view): entering the
namespace costs 0.2 ms once and a view 2 ms, as root's. The kernel makes a user namespace only
for a process with one thread, so commands that run attempts call `prepare` before starting any.
Capabilities in that namespace end at `exec`: git, the checks and the agent run as the user.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import tempfile
from pathlib import Path

from agentctl.execution.workspaces.removal import force_rmtree
from agentctl.execution.workspaces.trash import TRASH_PREFIX, spawn_deleter

_MNT_DETACH = 2
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_SLAVE = 1, 32, 4096, 16384, 1 << 19
_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_NAMESPACE = "/proc/thread-self/ns/mnt"
_UNSAFE = frozenset(",:\\\n")  # characters overlay's option string would read as separators
# the C library as the interpreter loaded it: find_library("c") would start `ldconfig -p`
_libc = ctypes.CDLL(None, use_errno=True)
_supported: bool | None = None
_namespace: str | None = None  # the private mount namespace this process mounts in, once made
_refusal: str | None = None  # why views cannot be mounted in this process, once known


class OverlayRefused(OSError):
    """The kernel (or our rights) would not mount the view."""


def upper_of(layers: Path) -> Path:
    """Where a view mounted with `layers` keeps what was written in it (`mount_view`)."""
    return layers / "upper"


def mount_view(lower: Path, layers: Path, target: Path) -> None:
    """Mount a writable view of `lower` at `target`, its changes kept under `layers` (made here;
    on the same filesystem as nothing else needs to be). Raises OverlayRefused."""
    upper, work = upper_of(layers), layers / "work"
    for path in (lower, upper, work, target):
        if _UNSAFE & set(str(path)):
            raise OverlayRefused(f"cannot mount a view at {target}: {path} holds one of , : \\")
    _private_namespace()
    upper.mkdir(parents=True)
    work.mkdir()
    target.mkdir(parents=True, exist_ok=True)
    options = f"lowerdir={lower},upperdir={upper},workdir={work}"
    if os.geteuid() != 0:  # a user namespace cannot write trusted.* (a removed folder's mark)
        options += ",userxattr"
    # volatile: a view is thrown away, never remounted, so nothing in it is worth a sync (and
    # without it, unmounting syncs the whole filesystem underneath). Kernels before 5.10 refuse it.
    for extra in (",volatile", ""):
        if _libc.mount(b"overlay", str(target).encode(), b"overlay", 0,
                       (options + extra).encode()) == 0:
            return
        error = ctypes.get_errno()
        if error != errno.EINVAL:
            break
    raise OverlayRefused(error, f"cannot mount a view at {target}: {os.strerror(error)}")


def bind_read_only(source: Path, target: Path) -> None:
    """`source` again at `target`, read-only: git reading objects from there cannot even
    refresh their times (it would, to keep them from being pruned). Raises OverlayRefused."""
    _private_namespace()
    target.mkdir(parents=True, exist_ok=True)
    for flags in (_MS_BIND, _MS_BIND | _MS_REMOUNT | _MS_RDONLY):
        if _libc.mount(str(source).encode(), str(target).encode(), None, flags, None) != 0:
            error = ctypes.get_errno()
            unmount_under(target)
            raise OverlayRefused(error, f"cannot bind {source} at {target}: "
                                        f"{os.strerror(error)}")


def unmount_under(path: Path) -> None:
    """Detach every mount at or below `path`, deepest first (a busy one lazily); none is fine."""
    for point in sorted(mounts_under(path), key=len, reverse=True):
        _libc.umount2(point.encode(), _MNT_DETACH)


def mounts_under(path: Path) -> list[str]:
    """Mount points at or below `path`, from this thread's mount table (the private one where
    this process mounts its views)."""
    prefix = os.path.realpath(path) if os.path.lexists(path) else str(path)
    points = []
    try:
        with open("/proc/thread-self/mountinfo", encoding="utf-8", errors="replace") as table:
            for line in table:
                point = _unescape(line.split(" ", 5)[4])
                if point == prefix or point.startswith(prefix.rstrip("/") + "/"):
                    points.append(point)
    except OSError:
        return []
    return points


def supported(scratch: Path, remembered: Path | None = None) -> bool:
    """Whether views can be mounted here: tried once per process with an empty tree. With
    `remembered` (a folder of the state home's), a success is written down there for this boot,
    user and scratch filesystem, so later processes skip the trial mount; callers `forget` it
    when a real mount is refused all the same."""
    global _supported, _refusal
    if _supported is None and os.geteuid() != 0 and prepare() is not None:
        _supported = False  # no namespace of our own: no view, whatever was remembered
    if _supported is None:
        marker = _marker(scratch, remembered)
        if marker is not None and marker.exists():
            _supported = True
            return True
        probe = Path(tempfile.mkdtemp(prefix="agentctl-overlay-probe-", dir=scratch))
        try:
            (probe / "lower").mkdir()
            _private_namespace()
        except OverlayRefused as error:
            _supported, _refusal = False, error.strerror or str(error)
        try:
            if _supported is None:
                mount_view(probe / "lower", probe / "layers", probe / "view")
                unmount_under(probe / "view")
                _supported = True
        except OSError as error:
            _supported, _refusal = False, _refused_mount(error)
        finally:
            _throw_away(probe)
        if _supported and marker is not None:
            with contextlib.suppress(OSError):
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.touch()
    return _supported


def _throw_away(probe: Path) -> None:
    """The trial mount's folder renamed to trash and deleted by a detached low-priority process
    (`trash`), as an attempt's directory is: on a loaded disk even its nine empty folders take
    16-390 ms to remove, on the way of a first run's start (the base is resolved, the task not
    yet stored). A folder still mounted on, or one that cannot be renamed, is deleted here."""
    if not mounts_under(probe):
        try:
            os.rename(probe, probe.with_name(TRASH_PREFIX + probe.name))
        except OSError:
            pass
        else:
            spawn_deleter(probe.parent, TRASH_PREFIX)
            return
    force_rmtree(str(probe))


def prepare() -> str | None:
    """For a normal user, move this process into its own user and mount namespace now, while
    it has one thread (the kernel refuses later); a no-op for root, who mounts from any thread,
    and once done. None when views can be mounted from here on as far as the namespace goes,
    else why not (also what `refusal` says)."""
    global _refusal
    if _namespace is not None or os.geteuid() == 0:
        return None
    try:
        _private_namespace()
    except OverlayRefused as error:
        _refusal = error.strerror or str(error)
        return _refusal
    _refusal = None
    return None


def refusal() -> str | None:
    """Why views cannot be mounted in this process (the namespace or the trial mount refused),
    in words for `doctor`; None when nothing was refused."""
    return _refusal


def _refused_mount(error: OSError) -> str:
    """The trial mount's refusal, said for whoever decides what to change."""
    if error.errno == errno.ENODEV:
        return "this kernel has no overlay filesystem (modprobe overlay)"
    if os.geteuid() != 0 and error.errno in (errno.EPERM, errno.EINVAL):
        return ("this kernel does not mount overlays in a user namespace (Linux 5.11 or later "
                f"does): {os.strerror(error.errno)}")
    return f"this kernel refused an overlay mount: {error.strerror or error}"


def forget(scratch: Path, remembered: Path) -> None:
    """A view was refused after all: the next process tries the mount again."""
    global _supported
    _supported = None
    marker = _marker(scratch, remembered)
    if marker is not None:
        with contextlib.suppress(OSError):
            marker.unlink()


def _marker(scratch: Path, remembered: Path | None) -> Path | None:
    """The file saying views mounted for this boot, user and scratch filesystem."""
    if remembered is None:
        return None
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as boot:
            boot_id = boot.read().strip()
        device = os.stat(scratch).st_dev
    except OSError:
        return None
    return remembered / f".views-mount-{boot_id}-{os.geteuid()}-{device}"


def _private_namespace() -> None:
    """Move this process into a mount namespace of its own the first time it mounts; from then
    on, refuse to mount from a thread that is not in it (one started before the move: a mount
    there would be the machine's, and outlive us). Mounts made in it propagate nowhere (slave:
    the machine's later mounts still show here, ours never show there). Raises OverlayRefused."""
    global _namespace
    if _namespace is None:
        # unshare moves the calling thread only: threads it starts later follow it, as do
        # the processes it starts. Propagation is changed at once, before anything is mounted.
        uid, gid = os.geteuid(), os.getegid()
        as_user = uid != 0
        if _libc.unshare(_CLONE_NEWNS | (_CLONE_NEWUSER if as_user else 0)) != 0:
            error = ctypes.get_errno()
            raise OverlayRefused(error, _refused_namespace(error, as_user))
        if as_user:
            _map_to_itself(uid, gid)
        if _libc.mount(b"none", b"/", None, _MS_REC | _MS_SLAVE, None) != 0:
            error = ctypes.get_errno()
            raise OverlayRefused(error, "cannot make a mount namespace of agentctl's own: "
                                        f"{os.strerror(error)}")
        _namespace = os.readlink(_NAMESPACE)
    if os.readlink(_NAMESPACE) != _namespace:
        raise OverlayRefused(errno.EPERM, "cannot mount a view from a thread outside agentctl's "
                                          "mount namespace")


def _map_to_itself(uid: int, gid: int) -> None:
    """The new user namespace's only ids: the user's own (groups cannot be changed in it,
    which the kernel requires before a process without privilege maps its group)."""
    for name, line in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as table:
            table.write(line)


def _refused_namespace(error: int, as_user: bool) -> str:
    """Why the namespace views are mounted in could not be made, with what would change it."""
    if not as_user:
        return (f"cannot make a mount namespace of agentctl's own: {os.strerror(error)} (a "
                "container must grant CAP_SYS_ADMIN)")
    if error == errno.EINVAL:
        return ("cannot make a user namespace of agentctl's own: this process already runs "
                "threads (a normal user's views are prepared before any starts)")
    if error == errno.ENOSPC:
        return ("this kernel allows no more user namespaces (sysctl user.max_user_namespaces "
                "is 0 or reached)")
    return ("this kernel does not let a normal user make a user namespace "
            f"({os.strerror(error)}: sysctl kernel.unprivileged_userns_clone=1, or an "
            "AppArmor or seccomp rule allowing it)")


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace(
        "\\134", "\\")
