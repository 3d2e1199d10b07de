"""The run page, opened in a real headless Chromium: what a reviewer sees, with nothing fetched.

One run serves the module: an allowed edit, a denied `git push`, a verifier that fails like a
flaky network once (so a second attempt runs) and a log too big to scan (kept INTERNAL_ONLY).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.browser import Rendered, render
from tests.e2e.runs_support import CALC_FILES, Bench
from tests.e2e.workers_support import FLAKY_VERIFIER

INTERNAL = "INTERNAL-ONLY-LOG-LINE"  # printed by a check, not in its command
CONFIG = """\
[sandbox]
mode = "off"
[budget]
max_attempts = 2
backoff_initial_seconds = 0
[verification]
commands = [{flaky}, {internal}]
baseline = "never"
reruns = 0
redact_logs_up_to_bytes = 300
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl
         ) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("page")
    repo = repo_maker(root / "calc", CALC_FILES)
    bench = Bench(root, run_agentctl)
    script = root / "flaky.py"
    script.write_text(FLAKY_VERIFIER)
    flaky = json.dumps(f'python3 {script} {root / "calls"} 1 "fatal: repository timeout"')
    (root / "chatty.py").write_text(f"print({INTERNAL!r} * 40)\n")
    bench.config(CONFIG.format(flaky=flaky, internal=json.dumps(f"python3 {root / 'chatty.py'}")))
    plan = bench.plan("plan.toml",
                      {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
                       "new": "def add(a, b):\n    \"\"\"The sum.\"\"\"\n"},
                      {"tool": "shell.run", "command": "git push origin main"})
    task = bench.submit(repo)
    run = bench.start(task, f"script:{plan}")
    tree = bench.tree(run["runId"])
    page, public = root / "page.html", root / "public.html"
    bench.cli("run", "report", run["runId"], "--format", "html", "--output", str(page))
    bench.cli("run", "report", run["runId"], "--format", "html", "--public", "--output",
              str(public))
    yield {"bench": bench, "run": run, "tree": tree, "page": page, "public": public,
           "root": root}


@pytest.fixture(scope="module")
def rendered(made: dict[str, Any]) -> Rendered:
    return render(made["page"], made["root"] / "browser")


class _Elements(HTMLParser):
    """The rendered DOM's elements, as (tag, attributes, text inside) for simple queries."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str], list[str]]] = []
        self._open: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {k: v or "" for k, v in attrs}, []))
        if tag not in ("meta", "link", "br", "img", "input"):
            self._open.append(len(self.found) - 1)

    def handle_endtag(self, tag: str) -> None:
        while self._open and self.found[self._open.pop()][0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        for index in self._open:
            self.found[index][2].append(data)

    def with_class(self, tag: str, name: str) -> list[tuple[dict[str, str], str]]:
        return [(attrs, "".join(text)) for t, attrs, text in self.found
                if t == tag and name in attrs.get("class", "").split()]


def elements(dom: str) -> _Elements:
    parser = _Elements()
    parser.feed(dom)
    return parser


def test_the_run_retried_and_denied_a_call(made: dict[str, Any]) -> None:
    attempts = made["tree"]["attempts"]
    assert [a["status"] for a in attempts] == ["FAILED", "COMPLETED"]
    decisions = [s["toolCall"]["decision"] for s in attempts[-1]["steps"] if s["toolCall"]]
    assert "DENIED_BY_COMMAND_GUARD" in decisions


def test_page_shows_the_verdict_text(made: dict[str, Any], rendered: Rendered) -> None:
    verdict = made["run"]["verdict"]["status"]
    found = elements(rendered.dom)
    shown = [text for t, attrs, text in found.found if attrs.get("id") == "verdict"]
    assert shown and verdict in "".join(shown[0])
    assert made["run"]["verdict"]["prEligibility"] in rendered.dom


def test_timeline_has_one_bar_per_step_and_marks_the_retry(made: dict[str, Any],
                                                           rendered: Rendered) -> None:
    found = elements(rendered.dom)
    bars = found.with_class("rect", "bar")
    steps = [s["stepId"] for a in made["tree"]["attempts"] for s in a["steps"]]
    assert sorted(attrs["data-step"] for attrs, _ in bars) == sorted(steps)
    retried = found.with_class("g", "retried")
    assert [attrs["data-attempt"] for attrs, _ in retried] == \
        [made["tree"]["attempts"][1]["attemptId"]]


def test_denied_call_is_marked_in_the_timeline_and_the_tree(made: dict[str, Any],
                                                            rendered: Rendered) -> None:
    denied = [s for s in made["tree"]["attempts"][-1]["steps"]
              if s["toolCall"] and s["toolCall"]["decision"] != "ALLOWED"]
    found = elements(rendered.dom)
    bars = {attrs["data-step"] for attrs, _ in found.with_class("rect", "denied")}
    rows = {attrs["data-step"]: text for attrs, text in found.with_class("tr", "denied")}
    assert {s["stepId"] for s in denied} <= bars
    for step in denied:
        assert "DENIED_BY_COMMAND_GUARD" in rows[step["stepId"]]
        assert step["toolCall"]["matchedRule"] in rows[step["stepId"]]


def test_spend_and_sandbox_are_on_the_page(made: dict[str, Any], rendered: Rendered) -> None:
    calls = [s for a in made["tree"]["attempts"] for s in a["steps"] if s["toolCall"]]
    budget = made["run"]["budget"]
    text = re.sub(r"<[^>]+>", " ", rendered.dom)
    denied = sum(s["toolCall"]["decision"] != "ALLOWED" for s in calls)
    assert f"{len(calls)} of {budget['maxToolCalls']} ({denied} denied)" in text
    assert f"2 of {budget['maxAttempts']}" in text
    assert "OFF" in text and "unsandboxed" in text  # this module's runs are unsandboxed


def test_page_requests_nothing_and_logs_no_console_error(rendered: Rendered) -> None:
    assert rendered.urls == []
    assert rendered.console == []
    assert not re.search(r'(src|href)="https?:', rendered.dom)
    assert rendered.screenshot.stat().st_size > 10_000


def test_diff_hunks_are_tagged_with_the_step_and_tool(made: dict[str, Any],
                                                      rendered: Rendered) -> None:
    edit = next(s for s in made["tree"]["attempts"][-1]["steps"]
                if s["toolCall"] and s["toolCall"]["toolName"] == "fs.replace")
    found = elements(rendered.dom)
    heads = [text for _, text in found.with_class("div", "hunk-head")]
    assert heads and all(f"step {edit['sequenceNumber']} · fs.replace" in h for h in heads)


def test_verdict_chain_and_internal_log_on_the_page(made: dict[str, Any],
                                                    rendered: Rendered) -> None:
    found = elements(rendered.dom)
    links = [text for _, text in found.with_class("div", "link")]
    assert any(text.lstrip().startswith("✓ verification") for text in links)
    assert INTERNAL in rendered.dom  # the requester's page embeds the check's log


def test_public_page_omits_the_internal_only_log(made: dict[str, Any]) -> None:
    internal = [a for a in made["bench"].artifacts(made["run"]["runId"])
                if a["visibility"] == "INTERNAL_ONLY" and a["type"] == "COMMAND_LOG"]
    assert internal, "the run must hold an INTERNAL_ONLY log for this test to mean anything"
    public = render(made["public"], made["root"] / "browser-public")
    assert INTERNAL not in public.dom
    assert all(a["sha256"][:12] not in public.dom for a in internal)
    assert made["run"]["verdict"]["status"] in public.dom
    assert public.urls == [] and public.console == []
    atif = json.loads(made["bench"].cli("run", "report", made["run"]["runId"], "--format",
                                        "atif", "--public").stdout)
    assert all(call["arguments"] == {} for step in atif["steps"]
               for call in step.get("tool_calls", []))


def test_ctrf_and_atif_documents(made: dict[str, Any]) -> None:
    bench, run_id = made["bench"], made["run"]["runId"]
    ctrf = json.loads(bench.cli("run", "report", run_id, "--format", "ctrf").stdout)
    assert ctrf["reportFormat"] == "CTRF"
    assert ctrf["results"]["summary"]["tests"] == 2
    assert {t["status"] for t in ctrf["results"]["tests"]} == {"passed"}
    atif = json.loads(bench.cli("run", "report", run_id, "--format", "atif").stdout)
    assert atif["schema_version"].startswith("ATIF-")
    calls = [s for s in atif["steps"] if s.get("tool_calls")]
    denied = [s for s in calls if s["extra"]["decision"] != "ALLOWED"]
    assert denied and denied[0]["tool_calls"][0]["function_name"] == "shell.run"
    assert [s["step_id"] for s in atif["steps"]] == list(range(1, len(atif["steps"]) + 1))


def test_report_bad_format_and_public_misuse_are_one_line_exit_2(made: dict[str, Any],
                                                                  error_line) -> None:
    bench, run_id = made["bench"], made["run"]["runId"]
    wrong = bench.cli("run", "report", run_id, "--format", "pdf", expect=(2,))
    assert "expected one of: swebench, junit, html, ctrf, atif" in error_line(wrong.stderr)
    misuse = bench.cli("run", "report", run_id, "--format", "junit", "--public", expect=(2,))
    assert "--public" in error_line(misuse.stderr)
    nowhere = bench.cli("run", "report", run_id, "--format", "html", "--output",
                        str(Path("/nonexistent/dir/page.html")), expect=(2,))
    assert "cannot write" in error_line(nowhere.stderr)


def test_run_open_writes_the_page_and_prints_its_path(made: dict[str, Any]) -> None:
    bench = made["bench"]
    result = bench.cli("run", "open", env={"BROWSER": "true"})
    path = Path(result.stdout.strip())
    try:
        assert path.read_text().startswith("<!DOCTYPE html>")
        assert made["run"]["runId"] in path.read_text()
    finally:
        path.unlink()
