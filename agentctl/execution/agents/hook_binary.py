"""The compiled hook (`agentctl/hooks/hook.c`), built on first use where a C compiler is.

The CLI starts its hook twice per tool call, and a Python start alone costs more than the
hook's whole budget: the compiled one starts in about a millisecond. It is built once per
source and compiler into agentctl's home (`cache/hook/<digest>/`: never a workspace, which the
agent writes), under a temporary name renamed into place, so a run never starts a half-written
one. No compiler, a failed build or `AGENTCTL_NATIVE_HOOK=off`: the Python hook, which answers
the same (`agentctl doctor` says which one runs, and why).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentctl.hooks import hook

SOURCE = Path(hook.__file__).with_name("hook.c")
SWITCH = "AGENTCTL_NATIVE_HOOK"  # "off": the Python hook; "auto" (or unset): compiled if it can
COMPILER = "cc"
NAME = "agentctl-hook"
BUILD_SECONDS = 120.0
FLAGS = ("-std=c99", "-O2")


@dataclass(frozen=True, slots=True)
class HookChoice:
    """The hook a run's CLI starts: the compiled one at `binary`, or the Python one (None)."""

    binary: Path | None
    why: str  # which, and why: "native", "native, built now", "Python: no C compiler ..."


def cache_dir(state_home: Path) -> Path:
    return state_home / "cache" / "hook"


def native_hook(cache: Path | None, env: Mapping[str, str]) -> HookChoice:
    """The compiled hook in `cache`, built there when it lacks; or why the Python one runs."""
    switch = env.get(SWITCH, "auto").strip().lower() or "auto"
    if switch == "off":
        return HookChoice(None, f"Python: {SWITCH}=off")
    if switch != "auto":
        return HookChoice(None, f"Python: {SWITCH}={switch!r} is neither auto nor off")
    if cache is None:
        return HookChoice(None, "Python: no state home to build the native one in")
    compiler = shutil.which(COMPILER, path=env.get("PATH", ""))  # none: no compiler
    if compiler is None:
        return HookChoice(None, f"Python: no C compiler ({COMPILER}) on PATH")
    try:
        source = SOURCE.read_bytes()
        said = subprocess.run([compiler, "--version"], capture_output=True, text=True,
                              errors="replace", timeout=BUILD_SECONDS, check=False,
                              stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired) as error:
        return HookChoice(None, f"Python: {compiler} --version failed: {error}")
    target = cache / digest(source, compiler, said) / NAME
    if os.access(target, os.X_OK):
        return HookChoice(target, "native")
    return _build(compiler, target)


def digest(source: bytes, compiler: str, version_output: str) -> str:
    """What names a build: the source, the compiler and its version line, the flags."""
    version = (version_output.splitlines() or [""])[0]
    return hashlib.sha256(b"\0".join([source, compiler.encode(), version.encode(),
                                      " ".join(FLAGS).encode()])).hexdigest()[:32]


def _build(compiler: str, target: Path) -> HookChoice:
    partial = target.with_name(f".{NAME}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([compiler, *FLAGS, "-o", str(partial), str(SOURCE)],
                              capture_output=True, text=True, errors="replace",
                              timeout=BUILD_SECONDS, check=False, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            return HookChoice(None, f"Python: {compiler} could not build the native one: "
                                    f"{said[:200]}")
        partial.chmod(0o755)
        os.replace(partial, target)  # whole or not at all, for a run building it alongside
    except (OSError, subprocess.TimeoutExpired) as error:
        return HookChoice(None, f"Python: the native one could not be built in "
                                f"{target.parent}: {error}")
    finally:
        partial.unlink(missing_ok=True)
    return HookChoice(target, "native, built now")
