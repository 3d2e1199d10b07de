"""Reading a run that did not go well: why a step failed (its exception line) in the tree and in
`verdict explain`, one numbering of steps, and a big result (30 PASS_TO_FAIL) that stays short."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.runs_support import Bench, steps

BROKEN = 30
TESTS = "".join(f"    def test_add_{n}(self):\n        self.assertEqual(add({n}, 1), {n + 1})\n\n"
                for n in range(BROKEN))
FILES = {
    "calc/__init__.py": "def add(a, b):\n    return a + b\n",
    "test_calc.py": ("import time\nimport unittest\n\nfrom calc import add\n\n\n"
                     f"class AddTest(unittest.TestCase):\n{TESTS}\n"
                     "class SteadyTest(unittest.TestCase):\n"
                     "    def test_true(self):\n        time.sleep(0.05)\n"
                     "        self.assertTrue(True)\n"),
}
EXCEPTION = "TypeError: object of type 'IniConfig' has no len()"
BREAK = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "return a + b",
         "new": "raise TypeError(\"object of type 'IniConfig' has no len()\")"}
CRASH = {"tool": "shell.run", "command": "python3 -c \"import no_such_module_here\""}
DOC = {"tool": "fs.replace", "path": "calc.py", "old": "def add(a, b):\n",
       "new": "def add(a, b):\n    \"\"\"The sum.\"\"\"\n"}
# Written past the fs.* guard by a command: the patch boundary (.github/** is forbidden by
# default) is what catches it, and the step that made the change is marked.
WORKFLOW = {"tool": "shell.run", "command": "python3 -c \"import pathlib; p = pathlib.Path("
            "'.github/workflows'); p.mkdir(parents=True); (p / 'x.yml').write_text("
            "'on: push')\""}
COMMENT = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
           "new": "def add(a, b):\n    # the sum\n"}
PYTEST_FILES = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": ("import time\n\nfrom calc import add\n\n\n"
                           "def test_add():\n    assert add(2, 3) == 5\n\n\n"
                           "def test_slow():\n    time.sleep(0.3)\n\n\n"
                           "def test_broken():\n    assert add(2, 2) == 5\n"),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl,
         ) -> Iterator[dict[str, Any]]:
    """Three runs of one task: one whose check fails with an exception in 30 tests that passed
    on the base, one whose plan's second step (a command) fails with an import error, one whose
    command writes a workflow; and a run of a pytest task."""
    root = tmp_path_factory.mktemp("reading")
    repo = repo_maker(root / "calc", FILES)
    bench = Bench(root, run_agentctl)
    bench.config("[verification]\nreruns = 0\n")
    task = bench.submit(repo, "--verify", "python3 -m unittest -v")
    broken = bench.start(task, f"script:{bench.plan('break.toml', BREAK)}")
    crashed = bench.start(task, f"script:{bench.plan('crash.toml', BREAK, CRASH)}")
    pytest_task = bench.submit(repo_maker(root / "pycalc", PYTEST_FILES), "--verify",
                               f"{sys.executable} -m pytest -q -p no:cacheprovider")
    touched = bench.start(pytest_task, f"script:{bench.plan('doc.toml', DOC)}")
    forbidden = bench.start(task, f"script:{bench.plan('workflow.toml', COMMENT, WORKFLOW)}")
    yield {"bench": bench, "broken": broken["runId"], "crashed": crashed["runId"],
           "pytest": touched["runId"], "forbidden": forbidden["runId"]}


def test_a_failed_check_shows_its_exception_line_in_the_tree_and_in_explain(
        runs: dict[str, Any]) -> None:
    bench: Bench = runs["bench"]
    check = next(s for s in steps(bench.tree(runs["broken"]))
                 if s["type"] == "RUN_VERIFIER" and s["status"] == "FAILED")
    assert check["outputTail"][0] == EXCEPTION

    tree = bench.cli("run", "show", "--tree", runs["broken"]).stdout
    assert EXCEPTION in tree
    explained = bench.cli("verdict", "explain", runs["broken"], "--no-pager").stdout
    verification = explained[explained.index("✗ verification"):explained.index("baseline")]
    assert f"step {check['sequenceNumber']} " in verification
    assert EXCEPTION in verification


def test_a_failed_command_shows_its_exception_line_in_the_tree_and_in_explain(
        runs: dict[str, Any]) -> None:
    bench: Bench = runs["bench"]
    tree = bench.cli("run", "show", "--tree", runs["crashed"]).stdout
    assert "ModuleNotFoundError: No module named 'no_such_module_here'" in tree
    explained = bench.cli("verdict", "explain", runs["crashed"], "--no-pager").stdout
    agent = explained[explained.index("✗ agent"):explained.index("reasons")]
    assert "ModuleNotFoundError: No module named 'no_such_module_here'" in agent


def test_a_failed_plan_step_is_named_by_its_number_in_the_tree(runs: dict[str, Any]) -> None:
    bench: Bench = runs["bench"]
    tree = bench.tree(runs["crashed"])
    (failed,) = [s for s in steps(tree) if s["status"] == "FAILED"]
    number = failed["sequenceNumber"]
    assert number != 2  # the plan's second step is not the tree's second step

    reason = bench.explain(runs["crashed"])["reasons"][0]
    assert reason.startswith(f"step {number} (plan step 2, shell.run "), reason
    text = bench.cli("verdict", "explain", runs["crashed"], "--no-pager").stdout
    assert "plan step 2 (" not in text  # never the plan's number alone
    assert f"step {number} (plan step 2, shell.run" in text


def test_thirty_pass_to_fail_tests_give_a_short_explain_and_all_of_them_with_all(
        runs: dict[str, Any]) -> None:
    bench: Bench = runs["bench"]
    ids = [t["testId"] for c in bench.explain(runs["broken"])["classification"]
           for t in c["classifiedTests"] if t["classification"] == "PASS_TO_FAIL"]
    assert len(ids) == BROKEN

    short = bench.cli("verdict", "explain", runs["broken"], "--no-pager").stdout
    assert f"{BROKEN} PASS_TO_FAIL" in short
    assert sum(test_id in short for test_id in ids) < 10
    assert len(short.splitlines()) < 60

    every = bench.cli("verdict", "explain", runs["broken"], "--no-pager", "--all").stdout
    assert all(test_id in every for test_id in ids)
    assert "1 PASS_TO_PASS" in every and "SteadyTest" not in every


def test_failures_come_first_in_the_classification(runs: dict[str, Any]) -> None:
    text = runs["bench"].cli("verdict", "explain", runs["broken"], "--no-pager").stdout
    assert text.index(f"{BROKEN} PASS_TO_FAIL") < text.index("1 PASS_TO_PASS")


def test_the_tree_counts_the_tests_by_class_with_the_first_few(runs: dict[str, Any]) -> None:
    tree = runs["bench"].cli("run", "show", "--tree", runs["broken"]).stdout
    line = next(line for line in tree.splitlines() if f"{BROKEN} PASS_TO_FAIL" in line)
    assert "test_calc.AddTest.test_add_0" in line and f"{BROKEN - 3} more" in line
    assert tree.index(f"{BROKEN} PASS_TO_FAIL") < tree.index("1 PASS_TO_PASS")
    assert tree.count("test_calc.AddTest.test_add_") < 10


def test_ctrf_has_one_entry_per_test_with_its_duration(runs: dict[str, Any]) -> None:
    bench: Bench = runs["bench"]
    ctrf = json.loads(bench.cli("run", "report", runs["pytest"], "--format", "ctrf").stdout)
    tests = {t["name"]: t for t in ctrf["results"]["tests"]}
    assert set(tests) == {"tests/test_calc.py::test_add", "tests/test_calc.py::test_slow",
                          "tests/test_calc.py::test_broken"}
    assert tests["tests/test_calc.py::test_broken"]["status"] == "failed"
    assert tests["tests/test_calc.py::test_broken"]["message"] == "assert 4 == 5"
    assert tests["tests/test_calc.py::test_add"]["status"] == "passed"
    assert tests["tests/test_calc.py::test_slow"]["duration"] >= 300  # it sleeps 0.3 s
    assert all(t["suite"] == tests["tests/test_calc.py::test_add"]["suite"] for t in tests.values())
    summary = ctrf["results"]["summary"]
    assert (summary["tests"], summary["passed"], summary["failed"]) == (3, 2, 1)


def test_ctrf_gives_unittest_tests_their_durations(runs: dict[str, Any]) -> None:
    """The unittest hook times each test as pytest's report does (SteadyTest sleeps 0.05 s)."""
    ctrf = json.loads(runs["bench"].cli("run", "report", runs["broken"], "--format",
                                        "ctrf").stdout)
    tests = {t["name"]: t for t in ctrf["results"]["tests"]}
    assert len(tests) == BROKEN + 1
    assert tests["test_calc.SteadyTest.test_true"]["duration"] >= 50
    assert tests["test_calc.SteadyTest.test_true"]["status"] == "passed"
    assert all(t["duration"] > 0 for t in tests.values())  # under a millisecond is not 0


def test_the_run_page_groups_tests_by_class_failures_first_and_folds_the_rest(
        runs: dict[str, Any]) -> None:
    from html.parser import HTMLParser

    page = runs["bench"].cli("run", "report", runs["broken"], "--format", "html").stdout

    class Classes(HTMLParser):
        """Per class block: its name, and the test rows shown in the open and folded."""

        def __init__(self) -> None:
            super().__init__()
            self.order: list[str] = []
            self.rows: dict[str, list[bool]] = {}
            self.folded = 0

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found = dict(attrs)
            if tag == "div" and found.get("class") == "class":
                self.order.append(str(found["data-class"]))
                self.rows[self.order[-1]] = []
            elif tag == "details" and self.order:
                self.folded += 1
            elif tag == "tr" and found.get("class") == "test" and self.order:
                self.rows[self.order[-1]].append(self.folded > 0)

        def handle_endtag(self, tag: str) -> None:
            if tag == "details" and self.folded:
                self.folded -= 1
            elif tag == "div" and self.order:
                self.folded = 0

    parsed = Classes()
    parsed.feed(page)
    assert parsed.order == ["PASS_TO_FAIL", "PASS_TO_PASS"]
    assert parsed.rows["PASS_TO_FAIL"].count(False) == 10
    assert parsed.rows["PASS_TO_FAIL"].count(True) == BROKEN - 10
    assert parsed.rows["PASS_TO_PASS"] == []  # a count and a compact list, no rows
    assert '<ul class="compact"><li><code>test_calc.SteadyTest</code> (1): test_true</li>' in page
    assert f"<strong>{BROKEN}</strong>" in page
    assert "TypeError: object of type &#x27;IniConfig&#x27; has no len()" in page


def test_the_edit_to_a_forbidden_file_is_marked_on_its_step_and_hunk(runs: dict[str, Any]) -> None:
    """explain's edits, the tree's step and the page's diff mark the command's change to the
    workflow with the boundary's rule, and only that change."""
    bench: Bench = runs["bench"]
    run_id = runs["forbidden"]
    assert bench.explain(run_id)["status"] == "FAILED_POLICY"
    (writer,) = [s for s in steps(bench.tree(run_id))
                 if any(c["path"] == ".github/workflows/x.yml" for c in s["changedFiles"])]
    assert writer["toolCall"]["toolName"] == "shell.run"
    number, rule = writer["sequenceNumber"], "forbidden: .github/**"

    explained = bench.cli("verdict", "explain", run_id, "--no-pager").stdout
    edits = explained[explained.index("edits"):].splitlines()
    marked = [line for line in edits if "✗ forbidden" in line]
    assert len(marked) == 1 and ".github/workflows/x.yml" in marked[0]
    assert f"← step {number} shell.run" in marked[0] and rule in marked[0]
    assert any("calc/__init__.py ← step" in line and "✗" not in line for line in edits)

    tree = bench.cli("run", "show", "--tree", run_id).stdout.splitlines()
    edited = [line for line in tree if "edited:" in line]
    assert [line for line in edited if "✗" in line] == [
        line for line in edited if ".github/workflows/x.yml" in line]
    assert rule in next(line for line in edited if "✗" in line)

    page = bench.cli("run", "report", run_id, "--format", "html").stdout
    workflow = page[page.index("<code>.github/workflows/x.yml</code>"):]
    workflow = workflow[:workflow.index("</section>")]
    tag = f'step {number} · shell.run · ✗ {rule}'
    assert workflow.count(tag) == 2  # the file's heading and its one hunk
    assert 'class="tag forbidden"' in workflow
    calc = page[page.index("<code>calc/__init__.py</code>"):]
    assert "tag forbidden" not in calc[:calc.index("</section>")]
