"""pytest's own JUnit report (the fallback when a command's PYTHONPATH hides agentctl's plugin)
read back into node ids: a test inherited from a mixin in another module is named by the module
and class it ran in, as pytest names it, not by the file that defines it."""

from __future__ import annotations

import sys
from pathlib import Path

from agentctl.domain.enums import TestOutcome
from agentctl.domain.spec import PlannedCheck
from agentctl.execution.verification.test_reports import ReportDir
from agentctl.execution.verification.verifier import run_check

T = TestOutcome
MIXIN = ("class SizeTests:\n"
         "    size = 0\n\n"
         "    def test_size(self):\n"
         "        assert self.size == 2\n")


def test_inherited_tests_keep_their_own_node_ids_when_the_command_sets_pythonpath(
        tmp_path: Path) -> None:
    workspace = tmp_path / "proj"
    (workspace / "tests").mkdir(parents=True)
    (workspace / "tests" / "__init__.py").write_text(MIXIN)
    for module, size in (("test_small", 1), ("test_pair", 2)):
        (workspace / "tests" / f"{module}.py").write_text(
            f"from tests import SizeTests\n\n\nclass Test{size}(SizeTests):\n    size = {size}\n")
    (workspace / "tests" / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    # the command's own PYTHONPATH replaces the one that carries agentctl's plugin
    outcome = run_check(PlannedCheck(name="t", command=f"PYTHONPATH=. {sys.executable} -m pytest"),
                        workspace=workspace, env={"PATH": "/usr/bin:/bin"},
                        log_path=tmp_path / "t.log", infra_patterns=(),
                        reports=ReportDir(tmp_path / "private"))
    assert outcome.test_report is not None
    assert {r.test_id: r.outcome for r in outcome.test_report.results} == {
        "tests/test_small.py::Test1::test_size": T.FAILED,
        "tests/test_pair.py::Test2::test_size": T.PASSED,
        "tests/test_plain.py::test_plain": T.PASSED}
