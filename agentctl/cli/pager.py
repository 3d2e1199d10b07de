"""Long output through a pager on a terminal, as git does: `less -FRX` unless AGENTCTL_PAGER or
PAGER says otherwise; straight to stdout when it is not a terminal or with `--no-pager`."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

DEFAULT = "less"
LESS_FLAGS = "FRX"  # quit when it fits one screen, pass colours, leave the screen as it was


def pager_command(enabled: bool) -> list[str] | None:
    """The pager to run, or None to write straight to stdout."""
    if not enabled or not sys.stdout.isatty():
        return None
    chosen = os.environ.get("AGENTCTL_PAGER", os.environ.get("PAGER", DEFAULT)).strip()
    if chosen in ("", "cat"):
        return None

    return shlex.split(chosen)


def page(text: str, *, enabled: bool = True) -> None:
    """Show `text` through the pager (or write it when there is none to use)."""
    command = pager_command(enabled)
    if command is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return

    environment = {**os.environ}
    environment.setdefault("LESS", LESS_FLAGS)
    try:
        pager = subprocess.Popen(command, stdin=subprocess.PIPE, env=environment)
    except OSError:  # no such pager: the text still reaches the person
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    assert pager.stdin is not None
    try:
        pager.stdin.write(text.encode("utf-8", errors="replace"))
        pager.stdin.close()
    except BrokenPipeError:  # the person quit the pager before the end
        pass
    while True:
        try:
            pager.wait()
            break
        except KeyboardInterrupt:  # Ctrl-C is the pager's to handle, as with git
            continue
