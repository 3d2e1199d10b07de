"""Agent-chosen strings are data in every export of a run: the run page, CTRF, ATIF and the
OpenTelemetry trace. One run serves the module: a script agent writes files named and filled
with the strings that try to rewrite a PR body (tests/unit/test_pr_body.py's HOSTILE), plus
HTML that would run or hide in a page; the names with control characters are denied by the
path guard, so they reach the exports as denied calls' arguments and reasons.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest

from agentctl.domain.agent_text import control_character
from tests.e2e.runs_support import CALC_FILES, Bench
from tests.otlp_receiver import Receiver, otlp_receiver
from tests.unit.test_pr_body import HOSTILE

CONFIG = """\
[sandbox]
mode = "off"
[verification]
commands = ["python3 -m unittest -v"]
baseline = "never"
reruns = 0
"""
# What would run, load or hide something in a page if it were written into it raw
MARKUP = ('"><img src=x onerror=alert(1)>', "<script>alert(2)</script>",
          "<iframe src=//example.com>", "<style>body{display:none}</style>", "</pre></td>")
STRINGS = (*HOSTILE, *MARKUP)
CONTENT = "\n".join(STRINGS) + "\n"


def _path(index: int, text: str) -> str:
    """A file name holding `text` (a `/` in it makes a folder, which is fine)."""
    return f"notes/{index}-{text}.md"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl
             ) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("hostile")
    bench = Bench(root, run_agentctl)
    bench.config(CONFIG)
    repo = repo_maker(root / "calc", CALC_FILES)
    steps = [{"tool": "fs.write", "path": _path(i, text), "content": CONTENT}
             for i, text in enumerate(STRINGS)]
    steps.append({"tool": "shell.run", "command": f"echo {json.dumps(MARKUP[1])}"})
    plan = bench.plan("plan.toml", *steps)
    with otlp_receiver() as receiver:
        task = bench.submit(repo)
        run = bench.start(task, f"script:{plan}",
                          env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
        run_id = run["runId"]
        page = root / "page.html"
        bench.cli("run", "report", run_id, "--format", "html", "--output", str(page))
        yield {"run": run, "tree": bench.tree(run_id), "page": page.read_text(),
               "ctrf": bench.cli("run", "report", run_id, "--format", "ctrf").stdout,
               "atif": bench.cli("run", "report", run_id, "--format", "atif").stdout,
               "receiver": receiver}


class _Markup(HTMLParser):
    """Every tag, attribute and comment of a page, as a browser's tokenizer would find them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.comments: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def markup(page: str) -> _Markup:
    parser = _Markup()
    parser.feed(page)
    parser.close()
    return parser


# What shows text in another order, or on another line, without being a newline
REORDERING = ("\x85", "\x9b", "\u2028", "\u2029", "\u202a", "\u202b", "\u202c", "\u202d",
              "\u202e", "\u2066", "\u2067", "\u2068", "\u2069")


def calls_of(exported: dict[str, Any]) -> list[dict[str, Any]]:
    return [s["toolCall"] for a in exported["tree"]["attempts"] for s in a["steps"]
            if s.get("toolCall")]


def test_the_run_wrote_the_plain_names_and_denied_the_ones_with_control_characters(
        exported: dict[str, Any]) -> None:
    writes = {json.loads(c["argumentsJson"])["path"]: c["decision"]
              for c in calls_of(exported) if c["toolName"] == "fs.write"}
    for index, text in enumerate(STRINGS):
        expected = "DENIED_BY_PATH_GUARD" if control_character(text) else "ALLOWED"
        assert writes[_path(index, text)] == expected, text


def test_the_run_page_shows_every_string_as_text_and_runs_hides_or_loads_nothing(
        exported: dict[str, Any]) -> None:
    page = exported["page"]
    found = markup(page)
    assert found.comments == []  # nothing hidden
    assert not [name for name in found.attributes if name.startswith("on")]
    assert not {"img", "iframe", "script"} & set(found.tags)
    assert found.tags.count("style") == 1  # the page's own stylesheet
    for text in (*MARKUP, "<details><summary>s</summary>", "<!--"):
        assert text not in page, text
    shown = "".join(found.text)
    for index, text in enumerate(STRINGS):  # each written name is on the page as text
        if control_character(text) is None:
            assert _path(index, text) in shown, text
    # a file's lines reach the diff; a bidi override or NEL in them is spelled out, not obeyed
    assert not [c for c in REORDERING if c in page]
    assert "evil\\u202egnp.exe" in shown and "nel\\x85### NEL heading" in shown


def test_ctrf_and_atif_hold_every_string_exactly_as_data(exported: dict[str, Any]) -> None:
    ctrf = json.loads(exported["ctrf"])
    assert ctrf["reportFormat"] == "CTRF" and ctrf["results"]["summary"]["tests"] == 2
    atif = json.loads(exported["atif"])
    calls = [(call, step) for step in atif["steps"] for call in step.get("tool_calls") or []]
    paths = {call["arguments"].get("path"): step for call, step in calls}
    for index, text in enumerate(STRINGS):  # round-trips exactly, whatever it holds
        step = paths[_path(index, text)]
        if control_character(text):  # the denial names it spelled out, on one line
            reason = step["observation"]["results"][0]["content"]
            assert "control character" in reason and control_character(reason) is None
    shell = next(call for call, _ in calls if call["function_name"] == "shell.run")
    assert shell["arguments"]["command"] == f"echo {json.dumps(MARKUP[1])}"


def test_the_trace_has_a_span_per_call_and_no_character_that_reorders(
        exported: dict[str, Any]) -> None:
    receiver: Receiver = exported["receiver"]
    tools = receiver.named("execute_tool")
    decisions = sorted(c["decision"] for c in calls_of(exported))
    assert sorted(s.attributes["agentctl.decision"] for s in tools) == decisions
    values = json.dumps([[s.name, s.attributes, s.events] for s in receiver.spans],
                        ensure_ascii=False)
    assert not [c for c in REORDERING if c in values]
