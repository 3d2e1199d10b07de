"""agentctl's own log: `logging` loaded by its first line, shown on stderr with AGENTCTL_DEBUG."""

from __future__ import annotations

import os
import subprocess
import sys

# One debug line and one warning through the log, then whether `logging` was loaded before them.
WRITE = """
import sys
before = "logging" in sys.modules
from agentctl.debug_log import logger
loaded = "logging" in sys.modules
logger("agentctl.prefetch").debug("prefetch failed: %s", "why")
logger("agentctl.baseline").warning("the baseline stopped")
print(before, loaded)
"""


def written(**env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "AGENTCTL_DEBUG"}
    return subprocess.run([sys.executable, "-c", WRITE], capture_output=True, text=True,
                          env={**environment, **env}, timeout=60, check=True)


def test_the_log_loads_logging_with_its_first_line_and_shows_warnings_only() -> None:
    done = written()
    assert done.stdout.split() == ["False", "False"]  # importing the log loads no `logging`
    assert done.stderr == "the baseline stopped\n"  # Python's last resort: warnings only


def test_agentctl_debug_shows_agentctls_log_on_stderr_by_name() -> None:
    done = written(AGENTCTL_DEBUG="1")
    assert done.stderr.splitlines() == ["agentctl.prefetch: prefetch failed: why",
                                        "agentctl.baseline: the baseline stopped"]
