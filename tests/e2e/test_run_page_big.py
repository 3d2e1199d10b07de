"""The run page of a big result (6,431 tests, idna's size) stays small and readable: a count and a
compact list for what passed on both sides, the failures in the open, a timeline whose bars name
their steps, no horizontal overflow at 1280 px in a real Chromium, and the approvals card neutral
while approval is the next step of a run that succeeded."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import widths
from tests.e2e.runs_support import Bench, steps

TESTS = 6431
BROKEN = range(0, TESTS, 1000)  # the patch breaks these: 7 PASS_TO_FAIL
LONG_CLASS = "TestRoundTripOfInternationalisedDomainLabelsThroughTheCodecAndBackAgain"
FILES = {
    "codec.py": "def encode(n):\n    return n\n",
    "tests/__init__.py": "",
    "tests/test_codec.py": ("import pytest\n\nfrom codec import encode\n\n\n"
                            f"class {LONG_CLASS}:\n"
                            f"    @pytest.mark.parametrize('n', range({TESTS}))\n"
                            "    def test_label(self, n):\n        assert encode(n) == n\n"),
}
BREAK = {"tool": "fs.replace", "path": "codec.py", "old": "return n",
         "new": "return n if n % 1000 else -1"}
DOC = {"tool": "fs.replace", "path": "codec.py", "old": "def encode(n):\n",
       "new": "def encode(n):\n    \"\"\"The label, encoded.\"\"\"\n"}
PAGE_BYTES = 300_000


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl,
        ) -> Iterator[dict[str, Any]]:
    """Two runs of one 6,431-test task against its base: one breaks 7 tests, one succeeds."""
    root = tmp_path_factory.mktemp("big-page")
    repo = repo_maker(root / "codec", FILES)
    bench = Bench(root, run_agentctl)
    bench.config('[verification]\nreruns = 0\nbaseline = "always"\n')
    task = bench.submit(repo, "--verify", f"{sys.executable} -m pytest -q -p no:cacheprovider")
    broken = bench.start(task, f"script:{bench.plan('break.toml', BREAK)}")
    fine = bench.start(task, f"script:{bench.plan('doc.toml', DOC)}")
    pages = {}
    for name, run in (("broken", broken), ("fine", fine)):
        pages[name] = root / f"{name}.html"
        bench.cli("run", "report", run["runId"], "--format", "html", "--output",
                  str(pages[name]))
    yield {"bench": bench, "root": root, "broken": broken, "fine": fine, "pages": pages}


def test_the_runs_are_as_planned(big: dict[str, Any]) -> None:
    assert big["broken"]["exitCode"] == 1 and big["fine"]["exitCode"] == 0
    classes = big["bench"].explain(big["broken"]["runId"])["classification"][0]
    counted: dict[str, int] = {}
    for test in classes["classifiedTests"]:
        counted[test["classification"]] = counted.get(test["classification"], 0) + 1
    assert counted == {"PASS_TO_FAIL": len(BROKEN), "PASS_TO_PASS": TESTS - len(BROKEN)}


def test_the_page_of_6431_tests_stays_under_300_kB_and_names_every_test(
        big: dict[str, Any]) -> None:
    page = big["pages"]["broken"].read_text()
    assert len(page.encode()) <= PAGE_BYTES, len(page.encode())
    for n in (1, 999, 3333, TESTS - 1):  # each passing test is named in the compact list
        assert f"test_label[{n}]" in page
    failing = re.findall(r'<tr class="test"><td><code>[^<]*test_label\[(\d+)\]', page)
    assert sorted(int(n) for n in failing) == list(BROKEN)  # failures as rows, first
    assert page.index('data-class="PASS_TO_FAIL"') < page.index('data-class="PASS_TO_PASS"')
    assert f"<strong>{TESTS - len(BROKEN)}</strong>" in page


def test_each_timeline_bar_names_its_step(big: dict[str, Any]) -> None:
    page = big["pages"]["broken"].read_text()
    tree = big["bench"].tree(big["broken"]["runId"])
    labels = dict(re.findall(r'<text class="bar-label" data-step="([^"]+)"[^>]*>([^<]+)</text>',
                             page))
    bars = re.findall(r'<rect class="bar [a-z]+" data-step="([^"]+)"', page)
    assert bars and set(bars) == set(labels)
    for step in steps(tree):
        call = step.get("toolCall")
        name = f"#{step['sequenceNumber']} {call['toolName'] if call else step['type']}"
        assert labels[step["stepId"]] == (name if len(name) <= 26 else name[:25] + "…")


def test_no_horizontal_overflow_at_1280_px(big: dict[str, Any]) -> None:
    measured = widths(big["pages"]["broken"], big["root"] / "browser", 1280)
    assert 1200 <= measured["view"] <= 1280, measured  # less a vertical scroll bar
    assert measured["wide"] == [], measured
    assert measured["scroll"] == measured["view"], measured


def test_the_approvals_card_is_neutral_while_approval_is_next(big: dict[str, Any]) -> None:
    def card(name: str) -> str:
        found = re.search(r'<div class="link (\w+)" data-check="approvals">',
                          big["pages"][name].read_text())
        assert found, name
        return found.group(1)

    assert big["bench"].explain(big["fine"]["runId"])["status"] in (
        "SUCCESS", "SUCCESS_NEEDS_REVIEW")
    assert card("fine") == "pending"
    assert card("broken") == "failed"  # a failed run is not waiting for an approval
