"""Reruns that pay once: the failing tests are named through a file (never the command line),
unittest reruns them in the same process as pytest does, and a module that fails to import is
classified from its one run. Real repositories, real unittest and pytest."""

from __future__ import annotations

from pathlib import Path

from agentctl.domain.enums import ArtifactType, StepType, TestClassification
from agentctl.domain.step import Step
from agentctl.services.ports import RunRecord
from tests.conftest import make_repo
from tests.pipeline.conftest import Harness
from tests.pipeline.test_baseline import (
    CALC,
    FIX_ADD,
    PYTEST,
    UNITTEST,
    check_of,
    classes,
    on_sqlite,
    unittest_repo,
)

K = TestClassification
# A test module the base cannot import (an optional dependency that is not installed).
NEEDS_MISSING = "import not_installed_anywhere  # noqa: F401\n\n\ndef test_props():\n    pass\n"


def steps(record: RunRecord, role: str) -> list[Step]:
    return [s for s in record.steps
            if s.type is StepType.RUN_VERIFIER and s.title.startswith(f"{role}:")]


def log_of(harness: Harness, record: RunRecord, step: Step) -> str:
    (artifact,) = [a for a in record.artifacts
                   if a.artifact_id in step.artifacts and a.type is ArtifactType.COMMAND_LOG]
    if harness.store is not None:
        return harness.store.blobs.path_for(artifact.uri).read_text()
    return harness.storage.blobs.read(artifact.uri).decode()  # type: ignore[attr-defined]


@on_sqlite
def test_unittest_failures_are_rerun_in_the_one_process_that_selects_them(
        harness: Harness, tmp_path: Path) -> None:
    """The base's first run reruns its failing tests itself (no rerun process there); the
    patch's failing test runs again in one process, named through a file, which reruns it
    there until the reruns are spent; the command stays the user's."""
    harness.repo = unittest_repo(tmp_path)
    record = harness.run(harness.plan(FIX_ADD), verify=(UNITTEST,),
                         must_pass=("test_calc.CalcTest.test_add",))

    assert classes(record) == {"test_calc.CalcTest.test_add": K.FAIL_TO_PASS,
                               "test_calc.CalcTest.test_mul": K.PASS_TO_PASS,
                               "test_calc.CalcTest.test_answer": K.FAIL_TO_FAIL}
    (base,) = steps(record, "baseline")
    assert base.attributes["reranInProcess"] == {
        "test_calc.CalcTest.test_add": ["FAILED", "FAILED"],
        "test_calc.CalcTest.test_answer": ["FAILED", "FAILED"]}
    assert steps(record, "baseline rerun") == []
    (rerun,) = steps(record, "rerun")
    assert rerun.attributes["command"] == UNITTEST
    assert rerun.attributes["selected"] == ["test_calc.CalcTest.test_answer"]
    assert rerun.attributes["reranInProcess"] == {"test_calc.CalcTest.test_answer": ["FAILED"]}
    log = log_of(harness, record, rerun)
    assert "Ran 1 test" in log and "test_add" not in log  # the hook ran the named test alone
    assert "agentctl: failing tests rerun in this process\ntest_calc.CalcTest.test_answer: FAILED" \
        in log


@on_sqlite
def test_a_module_that_fails_to_import_on_the_base_is_run_once_there(
        harness: Harness, tmp_path: Path) -> None:
    """unittest's `_FailedTest` is a failure to load, not a flaky test: neither side reruns
    it, and the fix's test still shows the fix."""
    harness.repo = make_repo(tmp_path / "unitproj", {
        "calc.py": CALC,
        "test_calc.py": "import unittest\n\nfrom calc import add\n\n\n"
                        "class CalcTest(unittest.TestCase):\n"
                        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
        "test_props.py": NEEDS_MISSING})
    record = harness.run(harness.plan(FIX_ADD), verify=(UNITTEST,))

    assert classes(record) == {"test_calc.CalcTest.test_add": K.FAIL_TO_PASS,
                               "unittest.loader._FailedTest.test_props": K.FAIL_TO_FAIL}
    assert len(steps(record, "baseline")) == 1
    assert steps(record, "baseline rerun") == [] and steps(record, "rerun") == []
    logs = [a for a in record.artifacts if a.type is ArtifactType.COMMAND_LOG]
    assert len(logs) == 2  # the patch's run and the base's: nothing rerun


@on_sqlite
def test_a_pytest_collection_error_is_classified_from_one_run(
        harness: Harness, tmp_path: Path) -> None:
    """A module pytest cannot collect is an error of its own, on the base and with the patch
    (the other modules' tests still run): it is never rerun, and no rerun of the whole
    command is made for it."""
    harness.repo = make_repo(tmp_path / "pyproj", {
        "calc.py": CALC, "tests/__init__.py": "",
        "tests/test_calc.py": "from calc import add\n\n\n"
                              "def test_add():\n    assert add(2, 3) == 5\n",
        "tests/test_props.py": NEEDS_MISSING})
    record = harness.run(harness.plan(FIX_ADD), verify=(PYTEST,))

    check = check_of(record)
    assert check.failing_test_ids == ("tests/test_props.py",)
    assert classes(record) == {"tests/test_props.py": K.FAIL_TO_FAIL,
                               "tests/test_calc.py::test_add": K.FAIL_TO_PASS}
    assert len(steps(record, "baseline")) == 1
    assert steps(record, "baseline rerun") == [] and steps(record, "rerun") == []
