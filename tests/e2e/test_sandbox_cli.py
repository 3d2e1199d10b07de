"""The sandbox from the command line: `sandbox check`, a run refused where bubblewrap cannot
start (bwrap's own words, a hint, exit 2, nothing created), `--no-sandbox` said loudly and
carried into the spec, the verdict and `run show`/`verdict explain`, and a sandboxed run's
connections in its tree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench

DOCSTRING = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
             "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}
# What bwrap says in a container whose seccomp profile forbids namespaces (as measured).
FAILING_BWRAP = ("#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because "
                 "the kernel does not allow non-privileged user namespaces' >&2\nexit 1\n")


@pytest.fixture
def bench(tmp_path: Path, repo_maker: Any, run_agentctl: Any) -> Bench:
    bench = Bench(tmp_path, run_agentctl)
    bench.plan("docstring.toml", DOCSTRING)
    bench.repo = repo_maker(tmp_path / "calc", CALC_FILES)  # type: ignore[attr-defined]
    return bench


def broken_bwrap(tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "bwrap"
    script.write_text(FAILING_BWRAP)
    script.chmod(0o755)
    return {"AGENTCTL_BWRAP": str(script)}


def test_sandbox_check_says_it_works_here(bench: Bench) -> None:
    result = bench.cli("sandbox", "check", "--json")
    document = result.json()
    assert document["works"] is True
    assert document["bubblewrap"] and document["mode"] == "on"
    assert str(document["version"]).startswith("bubblewrap ")  # asked only where shown
    assert bench.cli("sandbox", "check").stdout.startswith("sandbox      works")


def test_sandbox_check_names_what_fails_and_exits_1(bench: Bench, tmp_path: Path) -> None:
    result = bench.cli("sandbox", "check", "--json", expect=(1,), env=broken_bwrap(tmp_path))
    document = result.json()
    assert document["works"] is False
    assert "No permissions to create new namespace" in document["message"]
    assert "--no-sandbox" in document["hint"]


def test_a_run_is_refused_where_the_sandbox_cannot_start(bench: Bench, tmp_path: Path,
                                                         error_line: Any) -> None:
    task = bench.submit(bench.repo, "--verify", UNITTEST)  # type: ignore[attr-defined]
    result = bench.cli("run", "start", task, "--agent", f"script:{bench.cwd / 'docstring.toml'}",
                       expect=(2,), env=broken_bwrap(tmp_path))

    line = error_line(result.stderr)
    assert "the sandbox cannot start: bwrap: No permissions to create new namespace" in line
    assert "--no-sandbox" in line
    assert bench.run_count() == 0


def test_no_sandbox_is_loud_recorded_and_needs_a_human(bench: Bench, tmp_path: Path) -> None:
    bench.config('[policy]\nmax_autonomy = "auto_pr"\n[judge]\nstrict = false\n')
    task = bench.submit(bench.repo, "--verify", UNITTEST,  # type: ignore[attr-defined]
                        "--autonomy", "auto_pr")
    result = bench.cli("run", "start", task, "--agent", f"script:{bench.cwd / 'docstring.toml'}",
                       "--no-sandbox", "--json", env=broken_bwrap(tmp_path))
    run = result.json()

    assert "WARNING: the sandbox is OFF" in result.stderr
    assert run["executionSpec"]["sandbox"]["mode"] == "off"
    assert run["verdict"]["prEligibility"] == "ELIGIBLE_AFTER_HUMAN_APPROVAL"
    assert any("sandbox was off" in reason for reason in run["verdict"]["reasons"])
    explained = bench.explain(run["runId"])
    assert explained["sandbox"]["mode"] == "off"
    assert any(link["check"] == "sandbox" and not link["passed"] for link in explained["chain"])
    assert "OFF" in bench.cli("run", "show", run["runId"]).stdout
    assert "sandbox OFF" in bench.cli("verdict", "explain", run["runId"]).stdout


def test_a_sandboxed_run_shows_its_profile_and_its_denied_connections(bench: Bench) -> None:
    bench.config('[sandbox.network]\nallow = ["pypi.org:443"]\n')
    bench.plan("fetch.toml", DOCSTRING, {
        "tool": "shell.run", "on_error": "continue",
        "command": "python3 -c \"import urllib.request as u; u.urlopen('http://blocked.test/')\""})
    task = bench.submit(bench.repo, "--verify", UNITTEST)  # type: ignore[attr-defined]
    run = bench.start(task, f"script:{bench.cwd / 'fetch.toml'}")

    assert run["executionSpec"]["sandbox"]["networkAllow"] == ["pypi.org:443"]
    assert "network pypi.org:443" in bench.cli("run", "show", run["runId"]).stdout
    tree = bench.tree(run["runId"])
    calls = [s["toolCall"] for s in tree["attempts"][-1]["steps"] if s["toolCall"]]
    denied = [c for c in calls if c["toolName"] == "net.connect"]
    assert [c["decision"] for c in denied] == ["DENIED_BY_POLICY"]
    assert "blocked.test:80" in denied[0]["denialReason"]
    assert "sandbox on" in bench.cli("verdict", "explain", run["runId"]).stdout


@pytest.mark.parametrize(("text", "named"), [
    ('[sandbox.network]\nallow = ["https://pypi.org"]\n', "sandbox.network"),
    ('[sandbox]\nmode = "sometimes"\n', "mode"),
    ('[sandbox]\nmax_processes = 0\n', "max_processes"),
])
def test_a_bad_sandbox_setting_is_one_line_and_exit_2(bench: Bench, text: str, named: str,
                                                      error_line: Any) -> None:
    bench.config(text)
    result = bench.cli("sandbox", "check", expect=(2,))
    assert named in error_line(result.stderr)


def test_task_submit_run_is_refused_before_the_task_is_stored(bench: Bench, tmp_path: Path,
                                                               error_line: Any,
                                                               state_of: Any) -> None:
    result = bench.cli("task", "submit", "--repo", str(bench.repo),  # type: ignore[attr-defined]
                       "--type", "bug_fix", "--instruction", "x", "--run", expect=(2,),
                       env=broken_bwrap(tmp_path))
    assert "the sandbox cannot start" in error_line(result.stderr)
    state = state_of(bench.home)
    assert state is None or state.get("task", 0) == 0
