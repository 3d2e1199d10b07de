"""agentctl's own log: what failed where no one waits for an answer (a background cache fill, the
concurrent baseline, a worker's LISTEN, a trace export). `logging` is imported with the first
logger asked for, so a command, or a run's start-up, where nothing failed never loads it. With
AGENTCTL_DEBUG set, agentctl's log (not the libraries') is shown on stderr as well."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging


def logger(name: str) -> logging.Logger:
    """The logger `name` ("agentctl.<part>"); the first one asked for with AGENTCTL_DEBUG set
    shows agentctl's log on stderr."""
    import logging

    shown = logging.getLogger("agentctl")
    if os.environ.get("AGENTCTL_DEBUG") and not shown.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        shown.addHandler(handler)
        shown.setLevel(logging.DEBUG)
    return logging.getLogger(name)
