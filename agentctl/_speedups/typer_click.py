"""The names the lazy command group needs from Typer's private copy of click (`typer._click`).

Typer 0.26 and later carry their own click; its command, context and help formatter are what
Typer's groups are made of (and `formatting` holds the help's width, which the in-process test
runner sets), and Typer exports none of them publicly. This is the one module of
agentctl that names `typer._click`, so that a Typer upgrade that moves it fails here, and in
`tests/unit/test_private_apis.py` by name. There is no plain alternative, so `AGENTCTL_PLAIN`
leaves it as it is.
"""

from __future__ import annotations

from typer._click import Command, Context, HelpFormatter, formatting
from typer._click.utils import make_default_short_help

__all__ = ["Command", "Context", "HelpFormatter", "formatting", "make_default_short_help"]
