"""The test commands a repository's build files imply, offered by the dialog when a request
names none: apart from `requests`, which every submit loads, so that a submit pays for no
build-file detection."""

from __future__ import annotations

from pathlib import Path

from agentctl.execution.verification.test_detection import detect_test_commands


def detected_test_commands(repository: Path) -> tuple[str, ...]:
    """The test commands a repository's build files imply, offered when a request names none."""
    return detect_test_commands(repository)
