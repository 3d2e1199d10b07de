"""A task's test patch (SWE-bench's `test_patch`, DESIGN.md section 9): the must-pass test lives
only in a diff the task supplies. It runs on the base's code and on the patch's code, both with
the test patch applied: the real fix shows it FAIL_TO_PASS, a fix that does nothing fails, and
the agent's own version of the test file does not count. A real pytest project throughout."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentctl.domain.enums import TestClassification, VerdictStatus
from tests.conftest import git, make_repo
from tests.pipeline.conftest import Harness
from tests.pipeline.test_baseline import classes
from tests.pipeline.test_reviewers_evidence import evidence_steps, verdict

K = TestClassification
V = VerdictStatus
PYTEST = f"{sys.executable} -m pytest -q"
on_sqlite = pytest.mark.parametrize("harness", ["sqlite"], indirect=True)
SUB = "tests/test_calc.py::test_sub"
TESTS = "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FIX_SUB = {"tool": "fs.replace", "path": "calc.py", "old": "return a + b  # sub",
           "new": "return a - b  # sub"}


def sub_repo(root: Path) -> tuple[Path, Path]:
    """A project whose sub() is broken and has no test, and the task's test patch adding one
    to the existing test file (the repository itself stays as committed)."""
    repo = make_repo(root / "subcalc", {
        "calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n"
                   "    return a + b  # sub\n",
        "pytest.ini": "[pytest]\naddopts = -p no:cacheprovider\n",
        "tests/__init__.py": "", "tests/test_calc.py": TESTS})
    (repo / "tests/test_calc.py").write_text(
        TESTS + "\n\ndef test_sub():\n    assert sub(5, 3) == 2\n")
    patch = root / "test.diff"
    patch.write_text(git(repo, "diff") + "\n")
    git(repo, "checkout", "--", "tests/test_calc.py")
    return repo, patch


@on_sqlite
def test_the_real_fix_shows_the_test_patchs_test_fail_to_pass(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo, patch = sub_repo(tmp_path)
    record = harness.run(harness.plan(FIX_SUB), verify=(PYTEST,), task_type="bug_fix",
                         must_pass=(SUB,), test_patch=str(patch))

    status, reasons = verdict(record)
    assert status is V.SUCCESS, reasons
    assert classes(record)[SUB] is K.FAIL_TO_PASS
    assert evidence_steps(record) == ["fix evidence", "regression evidence"]
    with harness.storage.unit_of_work() as uow:  # stored with the task, as given
        assert uow.tasks.get(record.run.task_id).test_patch == patch.read_text()


@on_sqlite
def test_a_fix_that_does_nothing_fails_the_test_patchs_test(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo, patch = sub_repo(tmp_path)
    record = harness.run(harness.plan({"tool": "fs.write", "path": "NOTES.md",
                                       "content": "sub is fixed\n"}),
                         verify=(PYTEST,), task_type="bug_fix", must_pass=(SUB,),
                         test_patch=str(patch))

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION
    assert classes(record)[SUB] is K.FAIL_TO_FAIL
    assert f"must-pass test {SUB} does not pass (FAIL_TO_FAIL, FAILED with the patch)" \
        in reasons
    assert any(r.startswith("the fix is not shown") for r in reasons)


@on_sqlite
def test_the_agent_editing_the_test_patchs_file_cannot_make_its_test_pass(
        harness: Harness, tmp_path: Path) -> None:
    """The agent writes its own test_sub into the same file, asserting the bug: its version
    passes in its checks, but the test patch's version is the one judged, and it fails."""
    harness.repo, patch = sub_repo(tmp_path)
    record = harness.run(harness.plan({
        "tool": "fs.write", "path": "tests/test_calc.py",
        "content": TESTS + "\n\ndef test_sub():\n    assert sub(5, 3) == 8\n"}),
        verify=(PYTEST,), task_type="bug_fix", must_pass=(SUB,), test_patch=str(patch))

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION
    assert classes(record)[SUB] is K.FAIL_TO_FAIL
    assert f"must-pass test {SUB} does not pass (FAIL_TO_FAIL, FAILED with the patch)" \
        in reasons


@on_sqlite
def test_without_a_test_patch_the_same_must_pass_test_is_not_evidence(
        harness: Harness, tmp_path: Path) -> None:
    """The contrast: the fix with its own copy of the test, and no test patch, is refused."""
    harness.repo, _patch = sub_repo(tmp_path)
    record = harness.run(harness.plan(FIX_SUB, {
        "tool": "fs.write", "path": "tests/test_calc.py",
        "content": TESTS + "\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"}),
        verify=(PYTEST,), task_type="bug_fix", must_pass=(SUB,))

    status, reasons = verdict(record)
    assert status is V.FAILED_VERIFICATION
    assert f"must-pass test {SUB} is not on the base: the patch's own test is not evidence" \
        in reasons
