"""Which release an agent CLI's `--version` names, and whether agentctl's tests ran it."""

from __future__ import annotations

import pytest

from agentctl.domain.agent_clis import AGENT_CLIS, release_tested, version_in


@pytest.mark.parametrize(("said", "version"), [
    ("2.1.197 (Claude Code)\n", "2.1.197"),
    ("codex-cli 0.171.0\n", "0.171.0"),
    ("GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.\n", "1.0.102"),
    ("v1.18.33\n", "1.18.33"),
    ("0.62.0-nightly.20261201\n", "0.62.0-nightly.20261201"),
    ("node 22 ready\nsomething 10.4\n", None),
    ("", None),
])
def test_the_first_dotted_release_is_the_version(said: str, version: str | None) -> None:
    assert version_in(said) == version


def test_a_release_the_tests_ran_is_tested_and_any_other_names_those_that_were() -> None:
    assert release_tested("codex", "0.171.0") == (True, "tested by agentctl")
    tested, note = release_tested("claude", "9.0.0")
    assert not tested
    assert note == f"not tested by agentctl (tested: {', '.join(AGENT_CLIS['claude'].tested)})"
