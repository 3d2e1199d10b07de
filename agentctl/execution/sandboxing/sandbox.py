"""Every process a run spawns, inside bubblewrap: what it sees, what it may reach, how it ends.

The flag set is the one measured to hold as root on this machine kind (see the project notes):
all namespaces unshared (a user namespace with no nested ones, no capabilities, a pid namespace
that dies with its parent, a new session), `/` read-only with a private `/dev`, `/proc`
(`/proc/sys` read-only), `/tmp`, `/run` and HOME; the homes, the state home, the original
repository and the attempt's own directory hidden under empty tmpfs; the toolchain dirs the run
was started with bound back read-only; the workspace read-write. The network namespace has only
loopback: `netbridge` forwards `127.0.0.1:3128` to an allowlisting proxy (`egress`).

What can be made once is made once per attempt: `Sandbox.for_attempt` resolves bwrap, the hidden
and toolchain paths. A network namespace with its bridge is made once per rule set for the whole
agentctl process and lent to one process at a time (`networks`: the thread that starts the
process joins it around the start, `Jail.launch`, else `nsenter --net`; then bwrap with every
namespace but the network unshared), so a process pays for bwrap and its cgroup, and an attempt
for neither a Python bridge nor a new namespace. Where a namespace cannot be joined (not root,
no `nsenter`) each process brings its own bridge.

`Sandbox` is one attempt's (its proxy, its hidden paths, its networks); `Sandbox.jail(...)` is
one process's, and is what `process.run_to_file(confine=...)` takes.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from agentctl.domain.sandbox import ConnectAttempt, SandboxProfile
from agentctl.execution.sandboxing.bubblewrap import NAMESPACE_FLAGS, check
from agentctl.execution.sandboxing.egress import EgressProxy
from agentctl.execution.sandboxing.limits import layout, limited
from agentctl.execution.sandboxing.netbridge import PROXY_PORT, PROXY_SOCKET, bridge_argv
from agentctl.execution.sandboxing.networks import Network, Networks, can_join_networks, entered, nsenter_argv

PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
TOOLCHAIN_LEAVES = frozenset({"bin", "sbin", "shims"})
# Where the user's own things live; hidden, then the toolchain dirs in them bound back.
HOME_ROOTS = (Path("/root"), Path("/home"))
PRIVATE_DIRS = (Path("/tmp"), Path("/var/tmp"), Path("/run"))
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "agentctl agent", "GIT_AUTHOR_EMAIL": "agent@agentctl.invalid",
                "GIT_COMMITTER_NAME": "agentctl agent",
                "GIT_COMMITTER_EMAIL": "agent@agentctl.invalid"}
# Where a model vendor's CLI goes when no base URL is set: allowed for the agent process only.
DEFAULT_MODEL_ENDPOINTS = ("api.anthropic.com:443", "api.openai.com:443")
MODEL_URL_VARIABLES = ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "CODEX_BASE_URL",
                       "GOOGLE_GEMINI_BASE_URL")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
# bubblewrap's NAMESPACE_FLAGS in a network namespace joined before bwrap starts (`--unshare-all`
# less the network)
JOINED_NET_FLAGS = ("--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-uts",
                    "--unshare-cgroup-try", *NAMESPACE_FLAGS[2:])
# Inside a joined namespace the command runs without the bridge in front: this says "not found"
# (127) or "cannot execute" (126) the way the bridge and `process.run_to_file` do.
EXEC_SHIM = ("/bin/sh", "-c", 'command -v "$1" >/dev/null 2>&1 || { echo "agentctl: $1: command '
             'not found" >&2; exit 127; }; exec "$@"', "agentctl-exec")
Started = TypeVar("Started")  # what a caller's start of a process gives (a Popen)


# --- what a process sees --------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class View:
    """The filesystem of one sandboxed process, in mount order."""

    hidden: tuple[Path, ...]  # empty tmpfs over each
    home: Path  # HOME inside: a private tmpfs, or `home_source` bound read-write
    home_source: Path | None = None
    read_only: tuple[Path, ...] = ()  # bound back read-only (toolchains, the task file)
    writable: tuple[Path, ...] = ()  # besides the workspace (an agent's own state dir)
    workspace: Path


def bwrap_argv(binary: Path, view: View, cwd: Path,
               sockets: Sequence[tuple[Path, Path]] = (), *, joined_net: bool = False,
               ) -> list[str]:
    """bwrap's command line for `view` (up to the `--` before the command); with `joined_net`
    it keeps the network namespace it is started in (one of `networks`' shared ones)."""
    argv = [str(binary), *(JOINED_NET_FLAGS if joined_net else NAMESPACE_FLAGS), "--ro-bind",
            "/", "/", "--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]
    covered = [path for path in _outermost((*PRIVATE_DIRS, *view.hidden)) if path.is_dir()]
    for path in covered:
        argv += ["--tmpfs", str(path)]
    if view.home_source is not None:
        argv += ["--bind", str(view.home_source), str(view.home)]
    else:
        argv += ["--dir", str(view.home)]
    # Each path once, none inside another: one inside a dir bound already is visible through
    # it, and bwrap would make its mount point there, following a link in place (a venv's
    # `bin/python`, named by a check, in agentctl's own venv under /tmp) to an absolute target
    # it resolves outside the new root: "Can't create file".
    for path in _outermost(view.read_only):
        # what no tmpfs covers is visible read-only already (and bwrap cannot make a mount
        # point on the read-only root: a venv's `bin/python` symlink named by a command)
        if any(_within(path, place) for place in covered):
            argv += ["--ro-bind-try", str(path), str(path)]
    for path in view.writable:
        argv += ["--bind-try", str(path), str(path)]
    argv += ["--bind", str(view.workspace), str(view.workspace)]
    for source, target in sockets:
        argv += ["--bind", str(source), str(target)]
    argv += ["--chdir", str(cwd)]
    return argv


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """Each path once, without those already under another (a tmpfs hides what is below)."""
    unique = sorted({Path(os.path.abspath(p)) for p in paths}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in unique:
        if not any(_within(path, other) for other in kept):
            kept.append(path)
    return kept


def _within(path: Path, place: Path) -> bool:
    """`path.is_relative_to(place)` for absolute paths, on their text: pathlib's builds a new
    path and raises underneath, and a run asks this thousands of times (2 ms an attempt)."""
    text, prefix = str(path), str(place)
    return text == prefix or text.startswith(prefix if prefix.endswith("/") else prefix + "/")


def real_homes(env: Mapping[str, str]) -> tuple[Path, ...]:
    homes = [Path(p) for p in (env.get("HOME"), os.environ.get("HOME")) if p]
    with contextlib.suppress(KeyError):
        homes.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return tuple(dict.fromkeys(Path(os.path.abspath(h)) for h in homes if h != Path("/")))


def toolchain_dirs(path_value: str, hidden: Sequence[Path],
                   extra: Iterable[Path] = ()) -> tuple[Path, ...]:
    """The directories of the PATH (and of the running interpreter) that fall in a hidden place,
    as the toolchain roots to bind back read-only: `~/.pyenv/shims` gives `~/.pyenv`, a venv's
    `bin` the venv. Never a hidden root itself: `~/bin` gives `~/bin`, not the whole home."""
    roots = [*HOME_ROOTS, *PRIVATE_DIRS, *hidden]
    interpreter = Path(sys.executable)
    candidates = [Path(p) for p in path_value.split(os.pathsep) if p.startswith("/")]
    candidates += [interpreter.parent, Path(sys.prefix), Path(sys.base_prefix), *extra]
    with contextlib.suppress(OSError):
        candidates.append(interpreter.resolve().parent)
    found: list[Path] = []
    for candidate in candidates:
        for path in {candidate, _resolved(candidate)}:
            if not path.is_dir() or not any(_within(path, r) for r in roots):
                continue
            root = path.parent if path.name in TOOLCHAIN_LEAVES else path
            if any(_within(r, root) for r in roots):  # would uncover a whole hidden place
                root = path
            if not any(_within(r, path) and r != path for r in roots):
                found.append(root)
    return tuple(_outermost(found))


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def configured_dirs(entries: Sequence[str], home: Path) -> tuple[Path, ...]:
    """`[sandbox] read_only`: `~` is the user's home; relative entries mean nothing here."""
    out = []
    for entry in entries:
        text = str(home) + entry[1:] if entry == "~" or entry.startswith("~/") else entry
        if text.startswith("/"):
            out.append(Path(os.path.abspath(text)))
    return tuple(out)


def model_endpoints(env: Mapping[str, str]) -> tuple[str, ...]:
    """`host:port` of the model APIs an agent process may reach: its base URLs if set, else the
    vendors' default API hosts."""
    found = []
    for name in MODEL_URL_VARIABLES:
        value = env.get(name)
        if value:
            parts = urlsplit(value)
            if parts.hostname:
                found.append(f"{parts.hostname}:{parts.port or (80 if parts.scheme == 'http' else 443)}")
    return tuple(found) or DEFAULT_MODEL_ENDPOINTS


def loopback_forwards(endpoints: Iterable[str]) -> tuple[tuple[int, str], ...]:
    """(port inside, `host:port`) for each endpoint on this machine's loopback (a local model
    server): inside the sandbox's own network namespace that address would be nobody's."""
    out = []
    for endpoint in endpoints:
        host, _, port = endpoint.rpartition(":")
        if host.strip("[]") in LOOPBACK_HOSTS and port.isdigit() and int(port) != PROXY_PORT:
            out.append((int(port), endpoint))
    return tuple(dict.fromkeys(out))


@cache
def interpreter_binds() -> tuple[str, ...]:
    """bwrap arguments that bind agentctl's own interpreter back (read-only) where a jail hides
    it under a fresh /tmp or /run: the network bridge runs on it, and a checkout (and its venv)
    may well live in /tmp."""
    hidden = tuple(directory for directory in toolchain_dirs("", ())
                   if any(directory.is_relative_to(root) for root in PRIVATE_DIRS))
    return tuple(arg for directory in hidden
                 for arg in ("--ro-bind", str(directory), str(directory)))


def program_dirs(command: str, path_value: str) -> tuple[Path, ...]:
    """Where an agent CLI the operator configured lives, to be visible read-only: the npm
    prefix holding its `node_modules` (its package, vendored binaries and helpers), else its
    directory; never a whole home or `/`."""
    found = shutil.which(command, path=path_value or None)
    if found is None:
        return ()
    out: list[Path] = []
    for program in {Path(os.path.abspath(found)), _resolved(Path(found))}:
        modules = next((p for p in reversed(program.parents) if p.name == "node_modules"), None)
        root = modules.parent if modules is not None else program.parent
        if root == Path("/") or root in HOME_ROOTS or root.parent == Path("/home") or \
                any(root == home for home in real_homes({})):
            root = program.parent
        out.append(root)
    return tuple(_outermost(out))


# --- one attempt, one process -----------------------------------------------------------------

@dataclass
class Sandbox:
    """An attempt's sandbox: its profile, what it hides and binds back, its proxy, its networks."""

    profile: SandboxProfile
    binary: Path
    hidden: tuple[Path, ...]
    toolchains: tuple[Path, ...]
    proxy: EgressProxy
    home: Path
    writable: tuple[Path, ...] = ()
    networks: Networks = field(init=False)

    def __post_init__(self) -> None:
        # A bridge's jail is not --die-with-parent: that follows the thread that started it (a
        # check on the base runs on a thread of its own). It ends when its stdin closes.
        flags = [flag for flag in NAMESPACE_FLAGS if flag != "--die-with-parent"]
        bridge_jail = [str(self.binary), *flags, "--ro-bind", "/", "/", "--dev", "/dev",
                       "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run",
                       *interpreter_binds()]
        self.networks = Networks(bridge_jail, self.proxy, shared=can_join_networks())
        self.prepare_networks(1)  # made while the attempt clones (unless there is one)

    def prepare_networks(self, count: int) -> None:
        """Have `count` networks for shell.run and the checks made before they are needed:
        two when the base's checks run beside the candidate's, one more for each of a fix's
        base reruns made at once (`baseline.networks_beside`)."""
        self.networks.prepare(tuple(self.profile.network_allow), str(PROXY_PORT), count)

    @classmethod
    def for_attempt(cls, profile: SandboxProfile, *, env: Mapping[str, str],
                    hidden: Iterable[Path], proxy_dir: Path) -> Sandbox:
        status = check()
        if not status.works or status.bubblewrap is None:
            raise OSError(status.refusal())
        homes = real_homes(env)
        hidden_paths = tuple(_outermost([*HOME_ROOTS, *homes, *hidden]))
        extra = [Path(env["VIRTUAL_ENV"])] if env.get("VIRTUAL_ENV") else []
        toolchains = (*toolchain_dirs(env.get("PATH", ""), hidden_paths, extra),
                      *configured_dirs(profile.read_only, homes[0] if homes else Path("/root")))
        return cls(profile=profile, binary=status.bubblewrap.path, hidden=hidden_paths,
                   toolchains=tuple(dict.fromkeys(toolchains)), proxy=EgressProxy(proxy_dir),
                   home=Path(env.get("HOME") or (homes[0] if homes else "/tmp/home")),
                   writable=configured_dirs(profile.writable,
                                            homes[0] if homes else Path("/root")))

    def jail(self, workspace: Path, *, allow: Sequence[str] = (), home: Path | None = None,
             read_only: Sequence[Path] = (), writable: Sequence[Path] = (),
             forward: Sequence[tuple[int, str]] = ()) -> Jail:
        """One process's confinement: `workspace` read-write, a network whose gate to the proxy
        has the profile's rules plus `allow`; `home` (a host dir) as its HOME, else a fresh
        one; `forward` loopback ports inside tunnelled through the proxy (`loopback_forwards`)."""
        view = View(hidden=self.hidden, home=self.home, home_source=home,
                    read_only=(*self.toolchains, *read_only),
                    writable=(*self.writable, *writable),
                    workspace=workspace)
        return Jail(self, view, (*self.profile.network_allow, *allow), tuple(forward))

    def describe(self) -> dict[str, object]:
        """What the attempt's processes run under on this machine, for the record."""
        return {"bubblewrap": str(self.binary), "hidden": [str(p) for p in self.hidden],
                "toolchains": [str(p) for p in self.toolchains],
                "writable": [str(p) for p in self.writable],
                "cgroups": layout().describe, "networkAllow": list(self.profile.network_allow)}

    def close(self) -> None:
        self.proxy.close()


@dataclass
class Jail:
    """One process's sandbox; after it ran, the connections it tried."""

    sandbox: Sandbox
    view: View
    rules: tuple[str, ...]
    forwards: tuple[tuple[int, str], ...] = ()
    connections: list[ConnectAttempt] = field(default_factory=list)
    joining: Path | None = field(default=None, init=False)  # its shared namespace, while lent

    @contextlib.contextmanager
    def confined(self, argv: Sequence[str], env: Mapping[str, str],
                 cwd: Path) -> Iterator[tuple[list[str], dict[str, str]]]:
        """The command line and environment that run `argv` in here (start it with `launch`);
        on the way out, every process left in its cgroup is killed and the connections it tried
        are kept."""
        ports = ",".join([str(PROXY_PORT), *(f"{port}={target}"
                                             for port, target in self.forwards)])
        with self.sandbox.networks.lend(self.rules, ports) as network:
            self.joining = network.shared.path if network.shared is not None else None
            try:
                with limited(self.sandbox.profile.limits) as (launcher, _group):
                    command = self._command(network, argv, cwd, env.get("PATH", ""))
                    yield [*launcher, *command], self.inside_env(env)
            finally:
                self.joining = None
                self.connections.extend(network.take())

    def launch(self, argv: list[str], start: Callable[[list[str]], Started]) -> Started:
        """`start(argv)`, for a command line `confined` gave: where this thread can join the
        shared network namespace itself, it does so around `start` alone (which must open no
        socket), and the command line goes without `nsenter`, one exec less; else as given."""
        if self.joining is not None:
            prefix = nsenter_argv(self.joining)
            at = next((i for i in range(len(argv) - len(prefix) + 1)
                       if argv[i:i + len(prefix)] == prefix), None)
            if at is not None:
                with entered(self.joining) as joined:
                    if joined:
                        return start([*argv[:at], *argv[at + len(prefix):]])
        return start(argv)

    def _command(self, network: Network, argv: Sequence[str], cwd: Path,
                 env_path: str) -> list[str]:
        if network.shared is None:
            inner = bwrap_argv(self.sandbox.binary, self.view, cwd,
                               sockets=[(network.gate.socket_path, PROXY_SOCKET)])
            return [*inner, "--", *bridge_argv(PROXY_SOCKET, network.ports), *argv]
        inner = bwrap_argv(self.sandbox.binary, self.view, cwd, joined_net=True)
        shim = () if self._found_inside(argv[0], env_path) else EXEC_SHIM
        return [*nsenter_argv(network.shared.path), *inner, "--", *shim, *argv]

    def _found_inside(self, program: str, path_value: str) -> bool:
        """Whether `program` is an executable the sandbox shows (found on the host in a place
        that is not hidden, or is bound back): then no shim is needed to say it is not."""
        found = shutil.which(program, path=path_value or None)
        if found is None:
            return False
        where = Path(os.path.abspath(found))
        shown = (*self.view.read_only, *self.view.writable, self.view.workspace)
        return not any(_within(where, p) for p in (*PRIVATE_DIRS, *self.view.hidden)) \
            or any(_within(where, p) for p in shown)

    def inside_env(self, env: Mapping[str, str]) -> dict[str, str]:
        inside = {**GIT_IDENTITY, **env, "HOME": str(self.view.home), "TMPDIR": "/tmp"}
        for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            inside[name] = PROXY_URL
        for name in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
            inside.pop(name, None)
        return inside

    @property
    def denied(self) -> tuple[ConnectAttempt, ...]:
        return tuple(c for c in self.connections if not c.allowed)
