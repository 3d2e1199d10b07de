"""SWE-bench's report.json from a run's classes, and the judge rules on a task's intent."""

from __future__ import annotations

from dataclasses import replace

from agentctl.domain.enums import ChangeType, Severity, TaskType, TestClassification
from agentctl.domain.judge_intent import intent_findings
from agentctl.domain.patch import FileChange
from agentctl.domain.swebench import swebench_report
from tests.unit.test_verdict import patch
from tests.unit.test_verdict_baseline import NEW, check, classified_test, report

K = TestClassification


def test_the_swebench_report_puts_each_test_in_its_bucket_and_resolves_a_clean_fix() -> None:
    verification = report(check(
        classified_test(K.FAIL_TO_PASS, "fixed"), classified_test(K.PASS_TO_PASS, "kept"),
        classified_test(K.FAIL_TO_FAIL, "still"), classification=K.FAIL_TO_FAIL))
    assert swebench_report("run_1", patch(), verification) == {"run_1": {
        "patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
        "resolved": True,
        "tests_status": {"FAIL_TO_PASS": {"success": ["fixed"], "failure": []},
                         "PASS_TO_PASS": {"success": ["kept"], "failure": []},
                         "FAIL_TO_FAIL": {"success": [], "failure": ["still"]},
                         "PASS_TO_FAIL": {"success": [], "failure": []}}}}


def test_a_broken_new_or_flaky_test_or_no_fix_is_not_resolved() -> None:
    fixed = classified_test(K.FAIL_TO_PASS, "fixed")
    for other in (classified_test(K.PASS_TO_FAIL, "broke"), classified_test(NEW, "new"),
                  classified_test(K.FLAKY, "flaky")):
        document = swebench_report("r", patch(), report(check(fixed, other)))
        assert document["r"]["resolved"] is False  # type: ignore[index]
    no_fix = swebench_report("r", patch(), report(check(classified_test(K.PASS_TO_PASS, "k"))))
    assert no_fix["r"]["resolved"] is False  # type: ignore[index]


def test_without_a_patch_nothing_applied_and_nothing_resolved() -> None:
    document = swebench_report("r", None, None)["r"]
    assert document == {"patch_is_None": True, "patch_exists": False,  # type: ignore[comparison-overlap]
                        "patch_successfully_applied": False, "resolved": False,
                        "tests_status": {kind: {"success": [], "failure": []} for kind in (
                            "FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL")}}


def change(path: str, old: str | None = None) -> FileChange:
    return FileChange(path=path, change_type=ChangeType.RENAMED if old else ChangeType.MODIFIED,
                      additions=1, deletions=0, generated=False, binary=False,
                      lockfile=path.endswith(".lock"), test_file=False,
                      forbidden_by_policy=False, old_path=old)


def test_a_dependency_file_changed_outside_a_dependency_upgrade_is_a_warning_naming_it() -> None:
    changes = [change("pyproject.toml"), change("web/package-lock.json"), change("src/app.py"),
               change("requirements-dev.txt", old="reqs.txt")]
    findings = intent_findings(TaskType.BUG_FIX, changes, None)
    assert [(f.severity, f.category, f.file_path) for f in findings] == [
        (Severity.WARNING, "dependency-change", "pyproject.toml"),
        (Severity.WARNING, "dependency-change", "web/package-lock.json"),
        (Severity.WARNING, "dependency-change", "requirements-dev.txt")]
    assert findings[0].message.startswith("dependency file pyproject.toml changed in a bug_fix")
    assert intent_findings(TaskType.DEPENDENCY_UPGRADE, changes, None) == []


def test_a_fix_with_a_baseline_but_no_fail_to_pass_test_is_warned_about() -> None:
    kept = report(check(classified_test(K.PASS_TO_PASS, "kept")))
    (finding,) = intent_findings(TaskType.BUG_FIX, [], kept)
    assert (finding.severity, finding.category) == (Severity.WARNING, "no-fix-shown")
    assert finding.message.startswith("no test shows the fix")
    fixed = report(check(classified_test(K.FAIL_TO_PASS, "fixed")))
    assert intent_findings(TaskType.TEST_FIX, [], fixed) == []
    assert intent_findings(TaskType.REFACTOR, [], kept) == []
    no_baseline = report(replace(check(classified_test(K.PASS_TO_PASS, "k")),
                                 baseline_commit=None))
    assert intent_findings(TaskType.BUG_FIX, [], no_baseline) == []
