"""The root's global options, kept on the command line's context until a command builds its
`State` from them: apart from `cli/context.py`, so that `agentctl --help` loads neither the
config nor the store."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RootOptions:
    """`--home` and `--config` as given (None: from the environment or the default)."""

    home: str | None = None
    config: str | None = None
