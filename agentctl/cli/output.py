"""stdout carries data (tables, JSON); stderr carries diagnostics and progress."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING

from agentctl.cli.render.style import escape, printable
from agentctl.domain.serialize import to_json

if TYPE_CHECKING:
    from rich.console import Console

    from agentctl.services.ports import StepDone


def emit_json(data: object) -> None:
    sys.stdout.write(json.dumps(to_json(data), indent=2, ensure_ascii=False) + "\n")


@lru_cache(maxsize=1)
def out() -> Console:
    # Not a terminal (a pipe, a test): no colour, and wide enough that ids are never wrapped.
    return _console(width=None if sys.stdout.isatty() else 200)


@lru_cache(maxsize=1)
def err() -> Console:
    return _console(stderr=True)


def _console(*, width: int | None = None, stderr: bool = False) -> Console:
    """A Rich console, imported on first use: `--json` and the commands that only write plain
    lines never load Rich."""
    from rich.console import Console

    return Console(width=width, stderr=stderr, highlight=False, emoji=False)


# -q: no progress and no hints; -v: every progress update kept as a line. Set by the root.
verbosity = 0


def note(message: str) -> None:
    """A diagnostic line on stderr (plain, so scripts can read it)."""
    sys.stderr.write(message + "\n")


def hint(message: str) -> None:
    """What to type next: a note that -q leaves out."""
    if verbosity >= 0:
        note(message)


class LiveStatus:
    """A status line on stderr while long work runs, updated by calling it, with the time
    since it began; `paused()` clears it while a prompt waits for an answer. On a terminal,
    each phase or check that ends leaves a line with its result and duration (`step_done`),
    and a retry says which attempt it is. When stderr is not a terminal (a CI log), each
    update is a plain line instead, so long work is never silent."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.text = ""
        self.attempt_number = 1
        self.started = time.monotonic()
        self.quiet = verbosity < 0
        self._status = err().status(_Elapsed(self)) \
            if sys.stderr.isatty() and not self.quiet else None

    def __enter__(self) -> LiveStatus:
        if self._status is not None:
            self._status.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._status is not None:
            self._status.stop()

    def __call__(self, text: str) -> None:
        if self.quiet:
            return
        if self._status is not None:
            self.text = text
            if verbosity > 0:
                self._keep(f"[dim]· {escape(text)}[/]")
        else:
            note(f"agentctl: {printable(text)}")

    def attempt(self, number: int) -> None:
        self.attempt_number = number
        if number > 1:
            self._keep(f"[yellow]↻[/] attempt {number}")

    def step_done(self, done: StepDone) -> None:
        if done.type.value not in _KEPT_STEPS:
            return
        mark = {"SUCCEEDED": "[green]✓[/]", "SKIPPED": "[dim]-[/]"}.get(done.status.value,
                                                                      "[red]✗[/]")
        what = _KEPT_STEPS[done.type.value] or done.title
        detail = f"  {escape(done.detail)}" if done.detail else ""
        self._keep(f"{mark} {escape(what)}{detail}  [dim]{_seconds(done.seconds)}[/]")

    def notice(self, text: str) -> None:
        if self._status is None:
            note(text)
        else:
            err().print(escape(text), highlight=False)

    def _keep(self, line: str) -> None:
        if self._status is not None:
            err().print(line, highlight=False)

    @contextmanager
    def paused(self) -> Iterator[None]:
        if self._status is None:
            yield
            return
        self._status.stop()
        try:
            yield
        finally:
            self._status.start()


# The steps worth a line of their own (by their title where it says more: a check's name; a
# patch applied by the agent, `apply fix.diff`, apart from the verified tree's fresh checkout).
_KEPT_STEPS = {"CLONE_REPOSITORY": "workspace", "MODEL_PLANNING": "agent",
               "APPLY_PATCH": None, "RUN_VERIFIER": None, "JUDGE_DIFF": "judge"}


def _seconds(seconds: float) -> str:
    return f"{seconds:.1f}s" if seconds < 120 else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class _Elapsed:
    """The live line, drawn afresh on every refresh so the elapsed time keeps counting."""

    def __init__(self, live: LiveStatus) -> None:
        self.live = live

    def __rich__(self) -> str:
        live = self.live
        attempt = f"attempt {live.attempt_number} · " if live.attempt_number > 1 else ""
        text = f": {escape(live.text)}" if live.text else ""
        return (f"{escape(live.message)}{text}  [dim]{attempt}"
                f"{_seconds(time.monotonic() - live.started)}[/]")


def live_status(message: str) -> LiveStatus:
    return LiveStatus(message)
