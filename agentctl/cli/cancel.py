"""Ctrl-C (or Ctrl-D) while a question waits at the terminal: the person cancelled."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer

CANCELLED = 130  # a shell's code for a command ended by SIGINT


@contextmanager
def cancellable() -> Iterator[None]:
    """Around a prompt: an interrupt ends the command with "cancelled" on a line of its own
    (the cursor was still after the question) and exit 130, never an exception's name."""
    try:
        yield
    except (KeyboardInterrupt, EOFError):
        sys.stderr.write("\nagentctl: cancelled\n")
        raise typer.Exit(CANCELLED) from None


@contextmanager
def new_line_on_interrupt() -> Iterator[None]:
    """Around a prompt whose caller ends the work an interrupt stops (a run, cancelled on
    record): only the line the question left open is ended, so the caller's words start one."""
    try:
        yield
    except (KeyboardInterrupt, EOFError):
        sys.stderr.write("\n")
        raise KeyboardInterrupt from None
