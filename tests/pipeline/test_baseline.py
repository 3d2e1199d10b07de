"""The patch's checks against the base commit: real repositories, real pytest and unittest, a
real Maven project; each test classified FAIL_TO_PASS, PASS_TO_PASS, PASS_TO_FAIL, FAIL_TO_FAIL
or FLAKY, and the verdict following from it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentctl.domain.enums import (
    JudgeStatus,
    StepType,
    TestClassification,
    TestOutcome,
    VerdictStatus,
)
from agentctl.domain.verification import VerificationCheck
from agentctl.services.ports import RunRecord
from tests.conftest import make_repo
from tests.machine import unavailable
from tests.pipeline.conftest import Harness

K = TestClassification
PYTEST = f"{sys.executable} -m pytest -q"
UNITTEST = f"{sys.executable} -m unittest -v"
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n\n\n" \
       "def answer():\n    return 41\n"
FIX_ADD = {"tool": "fs.replace", "path": "calc.py", "old": "a - b", "new": "a + b"}
BREAK_MUL = {"tool": "fs.replace", "path": "calc.py", "old": "a * b", "new": "a + b"}

# What these tests are about (reruns, the base, classes) happens before anything is stored, and
# the checks they run take seconds: one store each. The first test, whose classes cover every
# kind, runs on all three, which is where the stores could differ (how a check is kept).
on_sqlite = pytest.mark.parametrize("harness", ["sqlite"], indirect=True)


def flaky_test(counter: Path) -> str:
    """A test that fails on every other run, counting its runs in a file outside any checkout."""
    return (f"from pathlib import Path\n\nCOUNTER = Path({str(counter)!r})\n\n\n"
            "def runs():\n"
            "    count = int(COUNTER.read_text()) + 1 if COUNTER.exists() else 1\n"
            "    COUNTER.write_text(str(count))\n"
            "    return count\n")


def pytest_repo(root: Path, *, flaky: Path | None = None,
                passes: str = "runs() % 2 == 0") -> Path:
    """A coloured pytest project (`--color=yes` in its config): add is broken on the base,
    answer() is wrong on the base and stays wrong, mul works."""
    tests = ("from calc import add, answer, mul\n\n\n"
             "def test_add():\n    assert add(2, 3) == 5\n\n\n"
             "def test_mul():\n    assert mul(2, 3) == 6\n\n\n"
             "def test_answer():\n    assert answer() == 42\n")
    files = {"calc.py": CALC, "pytest.ini": "[pytest]\naddopts = --color=yes -p no:cacheprovider\n",
             "tests/__init__.py": "", "tests/test_calc.py": tests}
    if flaky is not None:
        files["tests/counter.py"] = flaky_test(flaky)
        files["tests/test_flaky.py"] = ("from tests.counter import runs\n\n\n"
                                        f"def test_flaky():\n    assert {passes}\n")
        files["tests/test_calc.py"] = tests.replace(
            "\n\n\ndef test_answer():\n    assert answer() == 42\n", "\n")
    return make_repo(root / "pyproj", files)


def unittest_repo(root: Path) -> Path:
    tests = ("import unittest\n\nfrom calc import add, answer, mul\n\n\n"
             "class CalcTest(unittest.TestCase):\n"
             "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
             "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n"
             "    def test_answer(self):\n        self.assertEqual(answer(), 42)\n")
    return make_repo(root / "unitproj", {"calc.py": CALC, "test_calc.py": tests})


def check_of(record: RunRecord) -> VerificationCheck:
    assert len(record.verifications) == 1, (record.run.status, record.run.failure_summary,
                                            record.verdict and record.verdict.reasons)
    (report,) = record.verifications
    (check,) = report.checks
    return check


def classes(record: RunRecord) -> dict[str, TestClassification]:
    return {t.test_id: t.classification for t in check_of(record).classified_tests}


def base_steps(record: RunRecord) -> list[str]:
    return [s.title for s in record.steps
            if s.type is StepType.RUN_VERIFIER and s.title.startswith("baseline")]


def test_a_fix_with_a_failure_already_on_base_needs_review_and_names_each_class(
        harness: Harness, tmp_path: Path) -> None:
    """The task names the test its fix must make pass: an unrelated test failing on the base
    too is then a human's call, as for any task."""
    harness.repo = pytest_repo(tmp_path)
    record = harness.run(harness.plan(FIX_ADD), verify=(PYTEST,), task_type="bug_fix",
                         must_pass=("tests/test_calc.py::test_add",))

    base = record.run.base_commit
    assert classes(record) == {"tests/test_calc.py::test_add": K.FAIL_TO_PASS,
                               "tests/test_calc.py::test_mul": K.PASS_TO_PASS,
                               "tests/test_calc.py::test_answer": K.FAIL_TO_FAIL}
    check = check_of(record)
    assert check.classification is K.FAIL_TO_FAIL
    assert check.baseline_commit == base and check.baseline_cached is False
    assert check.tests is not None and (check.tests.passed, check.tests.failed) == (2, 1)
    assert check.failing_test_ids == ("tests/test_calc.py::test_answer",)
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.SUCCESS_NEEDS_REVIEW
    assert record.verdict.reasons[0] == (f"1 test already failed on base {base[:12]} and still "
                                         "fails (not blamed): "
                                         "tests/test_calc.py::test_answer")
    (judgement,) = record.judgements
    assert not [f for f in judgement.findings if f.category == "no-fix-shown"]


@on_sqlite
def test_a_bug_fix_whose_test_still_fails_is_failed_verification_naming_it(
        harness: Harness, tmp_path: Path) -> None:
    """A patch that fixes nothing the task's test checks: the fix is not shown."""
    harness.repo = pytest_repo(tmp_path)
    record = harness.run(harness.plan({"tool": "fs.write", "path": "NOTES.md",
                                       "content": "a note\n"}), verify=(PYTEST,))
    base = record.run.base_commit[:12]
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
    assert record.verdict.reasons == (
        f"the fix is not shown: no test fails on base {base}'s code and passes with the patch; "
        "tests/test_calc.py::test_add, tests/test_calc.py::test_answer still failing",)


@on_sqlite
def test_a_must_pass_test_that_still_fails_is_failed_verification(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo = pytest_repo(tmp_path)
    record = harness.run(harness.plan(FIX_ADD), verify=(PYTEST,), task_type="refactor",
                         must_pass=("tests/test_calc.py::test_add",
                                    "tests/test_calc.py::test_answer"))
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
    assert "must-pass test tests/test_calc.py::test_answer does not pass (FAIL_TO_FAIL, FAILED " \
        "with the patch)" in record.verdict.reasons


@on_sqlite
def test_a_patch_that_breaks_a_passing_test_fails_naming_it_and_the_base(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo = pytest_repo(tmp_path)
    record = harness.run(harness.plan(FIX_ADD, BREAK_MUL), verify=(PYTEST,))

    assert classes(record)["tests/test_calc.py::test_mul"] is K.PASS_TO_FAIL
    assert check_of(record).classification is K.PASS_TO_FAIL
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
    base = record.run.base_commit[:12]
    assert record.verdict.reasons == (
        f"tests/test_calc.py::test_mul (assert 5 == 6) failed; it passed on base {base}",)


@on_sqlite
def test_a_coloured_pytest_failure_summary_names_the_test_and_its_assertion(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo = pytest_repo(tmp_path)
    harness.configure('[verification]\nbaseline = "never"\nreruns = 0\n')
    record = harness.run(harness.plan(FIX_ADD, BREAK_MUL), verify=(PYTEST,))

    summary = check_of(record).summarized_failure
    assert summary is not None and "\x1b" not in summary
    assert summary.startswith(f"`{PYTEST}` failed (exit 1): ")
    assert "tests/test_calc.py::test_mul - assert 5 == 6 (+1 more)" in summary
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
    assert record.verdict.reasons[0] == summary


@on_sqlite
def test_preexisting_failures_fail_the_run_when_config_does_not_allow_them(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo = pytest_repo(tmp_path)
    harness.configure("[verification]\nallow_preexisting_failures = false\n")
    record = harness.run(harness.plan(FIX_ADD), verify=(PYTEST,), task_type="refactor")

    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
    assert "1 test already failed on base" in record.verdict.reasons[0]
    assert "allow_preexisting_failures is false" in record.verdict.reasons[0]


@on_sqlite
def test_a_test_that_fails_every_other_run_is_flaky_and_needs_review(
        harness: Harness, tmp_path: Path) -> None:
    state = tmp_path / "state"  # outside every checkout, so the counter outlives each run
    state.mkdir()
    counter = state / "flaky.count"
    harness.configure(f'[sandbox]\nwritable = ["{state}"]\n')
    harness.repo = pytest_repo(tmp_path, flaky=counter)
    # one counter for the patch's runs and the base's: their order must be the sequential one
    record = harness.record(harness.execute(harness.submit(harness.plan(FIX_ADD),
                                                           verify=(PYTEST,)),
                                            concurrent_baseline=False))

    assert classes(record) == {"tests/test_calc.py::test_add": K.FAIL_TO_PASS,
                               "tests/test_calc.py::test_mul": K.PASS_TO_PASS,
                               "tests/test_flaky.py::test_flaky": K.FLAKY}
    assert check_of(record).classification is K.FLAKY
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.SUCCESS_NEEDS_REVIEW
    assert record.verdict.reasons[0].startswith("flaky: tests/test_flaky.py::test_flaky")
    # the rerun ran only the failing test: one count for it, none for the other tests
    reruns = [s for s in record.steps if s.title.startswith("rerun:")]
    assert len(reruns) == 1 and reruns[0].attributes["selected"] == [
        "tests/test_flaky.py::test_flaky"]


@on_sqlite
def test_unittest_tests_are_classified_and_the_broken_one_fails_the_run(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo = unittest_repo(tmp_path)
    record = harness.run(harness.plan(FIX_ADD, BREAK_MUL), verify=(UNITTEST,))

    assert classes(record) == {"test_calc.CalcTest.test_add": K.FAIL_TO_PASS,
                               "test_calc.CalcTest.test_mul": K.PASS_TO_FAIL,
                               "test_calc.CalcTest.test_answer": K.FAIL_TO_FAIL}
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
    assert record.verdict.reasons[0].startswith(
        "test_calc.CalcTest.test_mul (AssertionError: 5 != 6) failed; it passed on base ")
    (rerun,) = [s for s in record.steps if s.title.startswith("rerun:")]
    # only the failing tests run again, named through a file: the command is the user's
    assert rerun.attributes["command"] == UNITTEST
    assert rerun.attributes["selected"] == ["test_calc.CalcTest.test_answer",
                                            "test_calc.CalcTest.test_mul"]
    assert rerun.attributes["selectedCount"] == 2


@on_sqlite
def test_unittest_fix_with_a_preexisting_failure_needs_review(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo = unittest_repo(tmp_path)
    record = harness.run(harness.plan(FIX_ADD), verify=(UNITTEST,),
                         must_pass=("test_calc.CalcTest.test_add",))

    assert classes(record)["test_calc.CalcTest.test_answer"] is K.FAIL_TO_FAIL
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.SUCCESS_NEEDS_REVIEW
    assert record.verdict.reasons[0].startswith("1 test already failed on base ")


@on_sqlite
def test_a_fix_no_test_shows_fails_verification_and_gets_a_judge_warning(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo = make_repo(tmp_path / "plain", {
        "calc.py": "def add(a, b):\n    return a + b\n",
        "test_calc.py": "import unittest\nfrom calc import add\n\n\n"
                        "class T(unittest.TestCase):\n    def test_add(self):\n"
                        "        self.assertEqual(add(2, 3), 5)\n"})
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "calc.py", "old": "a + b", "new": "b + a"}),
        verify=(UNITTEST,), task_type="bug_fix")

    assert classes(record) == {"test_calc.T.test_add": K.PASS_TO_PASS}
    (judgement,) = record.judgements
    (finding,) = [f for f in judgement.findings if f.category == "no-fix-shown"]
    assert finding.message.startswith("no test shows the fix")
    assert judgement.status is JudgeStatus.PASSED_WITH_WARNINGS
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
    assert record.verdict.reasons == (
        f"the fix is not shown: no test fails on base {record.run.base_commit[:12]}'s code and "
        "passes with the patch",)


@on_sqlite
def test_passing_checks_of_a_task_that_is_not_a_fix_run_no_baseline_under_auto(
        harness: Harness, tmp_path: Path) -> None:
    harness.configure('[verification]\nbaseline = "auto"\n')
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "calc/__init__.py", "old": "a + b", "new": "b + a"}),
        task_type="refactor")

    assert base_steps(record) == []
    assert check_of(record).baseline_commit is None
    assert record.verdict is not None and record.verdict.status is VerdictStatus.SUCCESS


@on_sqlite
def test_a_second_run_on_the_same_base_reads_the_baseline_from_the_cache(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo = pytest_repo(tmp_path)
    state = tmp_path / "state"  # the marker lives outside the checkouts the checks run in
    state.mkdir()
    harness.configure(f'[verification]\nreruns = 0\n[sandbox]\nwritable = ["{state}"]\n')
    marker = state / "ran.txt"
    command = f"echo ran >> {marker} && {PYTEST}"
    cache = tmp_path / "baselines"
    first = harness.record(harness.execute(
        harness.submit(harness.plan(FIX_ADD), verify=(command,)), baseline_cache=cache))
    assert marker.read_text().splitlines() == ["ran", "ran"]  # the patch, then the base

    second = harness.record(harness.execute(
        harness.submit(harness.plan(FIX_ADD), verify=(command,)), baseline_cache=cache))

    assert marker.read_text().splitlines() == ["ran"] * 3  # the patch only: no base again
    assert base_steps(second) == [f"baseline: {check_of(second).name} (cached)"]
    assert check_of(second).baseline_cached is True
    assert classes(second) == classes(first)
    assert second.verdict is not None and first.verdict is not None
    assert second.verdict.reasons == first.verdict.reasons


MAVEN_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>demo</groupId><artifactId>calc</artifactId><version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <jvm.quick>-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto</jvm.quick>
  </properties>
  <dependencies>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId>
      <version>5.10.2</version><scope>test</scope></dependency>
  </dependencies>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId>
      <artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version>
      <configuration><argLine>${jvm.quick}</argLine></configuration></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId>
      <artifactId>maven-compiler-plugin</artifactId><version>3.11.0</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId>
      <artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
  </plugins></build>
</project>
"""


JVM_QUICK = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto\n"


@pytest.fixture(scope="session")
def maven() -> str:
    """mvn, working offline with the plugins and JUnit this project needs (the machine's
    local repository); the tests that need it are for machines that have it."""
    mvn = shutil.which("mvn")
    if mvn is None:
        unavailable("mvn is not installed")
    return mvn


@on_sqlite
def test_maven_surefire_reports_classify_a_two_test_project(
        harness: Harness, tmp_path: Path, maven: str) -> None:
    # Maven reads its offline repository at $HOME/.m2 and the sandbox gives a private HOME:
    # bound back read-only, as the README says to
    harness.configure('[sandbox]\nread_only = ["~/.m2"]\n')
    harness.repo = make_repo(tmp_path / "mvnproj", {
        "pom.xml": MAVEN_POM,
        # a JVM that starts rather than optimizes, for Maven and for surefire's fork (the pom):
        # the five mvn runs cost 45 s of CPU with the JIT's defaults
        ".mvn/jvm.config": JVM_QUICK,
        "src/main/java/demo/Calc.java": (
            "package demo;\npublic class Calc {\n"
            "  public static int add(int a, int b) { return a - b; }\n"
            "  public static int mul(int a, int b) { return a * b; }\n}\n"),
        "src/test/java/demo/CalcTest.java": (
            "package demo;\nimport org.junit.jupiter.api.Test;\n"
            "import static org.junit.jupiter.api.Assertions.assertEquals;\n"
            "class CalcTest {\n  @Test void adds() { assertEquals(5, Calc.add(2, 3)); }\n"
            "  @Test void multiplies() { assertEquals(6, Calc.mul(2, 3)); }\n}\n"),
    })
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "src/main/java/demo/Calc.java", "old": "a - b",
         "new": "a + b"},
        {"tool": "fs.replace", "path": "src/main/java/demo/Calc.java", "old": "a * b",
         "new": "a + b"}), verify=(f"{maven} -o -q test",))

    assert classes(record) == {"demo.CalcTest.adds": K.FAIL_TO_PASS,
                               "demo.CalcTest.multiplies": K.PASS_TO_FAIL}
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
    assert record.verdict.reasons[0].startswith("demo.CalcTest.multiplies (expected: <6> but "
                                                "was: <5>) failed; it passed on base ")


def test_pytest_outcomes_are_read_from_the_injected_report_not_the_project(
        tmp_path: Path) -> None:
    """The report goes to a private directory; nothing lands in the checkout."""
    from agentctl.domain.spec import PlannedCheck
    from agentctl.execution.verification.test_reports import ReportDir
    from agentctl.execution.verification.verifier import run_check

    repo = pytest_repo(tmp_path)
    reports = ReportDir(tmp_path / "private")
    outcome = run_check(PlannedCheck(name="t", command=PYTEST), workspace=repo,
                        env={"PATH": "/usr/bin:/bin"}, log_path=tmp_path / "t.log",
                        infra_patterns=(), reports=reports)

    assert outcome.test_report is not None and outcome.test_report.runner == "pytest"
    assert {r.test_id: r.outcome for r in outcome.test_report.results} == {
        "tests/test_calc.py::test_add": TestOutcome.FAILED,
        "tests/test_calc.py::test_mul": TestOutcome.PASSED,
        "tests/test_calc.py::test_answer": TestOutcome.FAILED}
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--ignored"],
                            capture_output=True, text=True, check=True).stdout
    assert "xml" not in status


@on_sqlite
def test_the_logs_of_reruns_and_of_the_base_are_redacted_like_the_checks_own(
        harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentctl.domain.enums import ArtifactType, RedactionStatus

    secret = "s3cr3t-token-value-123"
    monkeypatch.setenv("BENCH_TOKEN", secret)
    harness.configure('[env]\npassthrough = ["BENCH_TOKEN"]\n[verification]\nreruns = 1\n')
    command = (f"{sys.executable} -c \"import os; print('token', os.environ['BENCH_TOKEN']); "
               "raise SystemExit(1)\"")
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "calc/__init__.py", "old": "a + b", "new": "b + a"}),
        verify=(command,))

    logs = [a for a in record.artifacts if a.type is ArtifactType.COMMAND_LOG]
    assert len(logs) == 4  # the check, its rerun, the base, the base's rerun
    assert {a.redaction_status for a in logs} == {RedactionStatus.REDACTED}
    for artifact in logs:
        if harness.store is not None:
            content = harness.store.blobs.path_for(artifact.uri).read_bytes()
        else:
            content = harness.storage.blobs.read(artifact.uri)  # type: ignore[attr-defined]
        assert secret.encode() not in content and b"token [REDACTED" in content



FIRST_USE_BREAKS_MUL = {
    "tool": "fs.replace", "path": "calc.py", "old": "def mul(a, b):\n    return a * b\n",
    "new": "def mul(a, b):\n    import os\n"
           "    marker = os.path.join(os.path.dirname(os.path.abspath(__file__)), '.used')\n"
           "    if not os.path.exists(marker):\n"
           "        open(marker, 'w').close()\n"
           "        return a + b\n"
           "    return a * b\n"}


@on_sqlite
def test_a_test_the_patch_breaks_on_first_use_only_is_pass_to_flaky_and_fails(
        harness: Harness, tmp_path: Path) -> None:
    """It fails once and passes on the rerun, but never changed result on the base: not
    "flaky", the patch's doing."""
    harness.repo = pytest_repo(tmp_path)
    record = harness.run(harness.plan(FIRST_USE_BREAKS_MUL), verify=(PYTEST,),
                         task_type="refactor")

    assert classes(record)["tests/test_calc.py::test_mul"] is K.PASS_TO_FLAKY
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
    base = record.run.base_commit[:12]
    assert (f"tests/test_calc.py::test_mul passed on every run on base {base}; the patch made "
            "it flaky") in record.verdict.reasons
    flake_reruns = [s for s in record.steps if s.title.startswith("baseline flake rerun:")]
    assert flake_reruns and all(s.attributes["selected"] == ["tests/test_calc.py::test_mul"]
                                for s in flake_reruns)


@on_sqlite
def test_a_test_that_flips_on_the_base_too_when_rerun_there_is_flaky(
        harness: Harness, tmp_path: Path) -> None:
    """Runs 1 and 4 fail: the patch's first run and rerun flip; the base passes once, and its
    rerun of that test alone fails: flaky on the base too."""
    state = tmp_path / "state"
    state.mkdir()
    harness.configure(f'[sandbox]\nwritable = ["{state}"]\n')
    harness.repo = pytest_repo(tmp_path, flaky=state / "flaky.count",
                               passes="runs() not in (1, 4)")
    # one counter for the patch's runs and the base's: their order must be the sequential one
    record = harness.record(harness.execute(harness.submit(harness.plan(FIX_ADD),
                                                           verify=(PYTEST,)),
                                            concurrent_baseline=False))

    assert classes(record)["tests/test_flaky.py::test_flaky"] is K.FLAKY
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.SUCCESS_NEEDS_REVIEW
    assert record.verdict.reasons[0].startswith("flaky: tests/test_flaky.py::test_flaky")


def clean_pytest_repo(root: Path) -> Path:
    """Every test passes on the base."""
    return make_repo(root / "clean", {
        "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
        "pytest.ini": "[pytest]\naddopts = -p no:cacheprovider\n",
        "tests/__init__.py": "",
        "tests/test_calc.py": "from calc import add, mul\n\n\n"
                              "def test_add():\n    assert add(2, 3) == 5\n\n\n"
                              "def test_mul():\n    assert mul(2, 3) == 6\n"})


BREAK_ADD = {"tool": "fs.replace", "path": "calc.py", "old": "a + b", "new": "a - b"}
# no traceback left on the forged report (else the runner's own check fails the candidate):
# only the base's tests under the patch's code show the lie
ALL_PASS_HOOK = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
                 "def pytest_runtest_makereport(item, call):\n"
                 "    report = (yield).get_result()\n"
                 "    report.outcome, report.longrepr = 'passed', None\n")


@on_sqlite
@pytest.mark.parametrize(("harness_edit", "named"), [
    ({"tool": "fs.write", "path": "pytest.ini",
      "content": "[pytest]\naddopts = -p no:cacheprovider "
                 "--deselect tests/test_calc.py::test_add\n"}, "pytest.ini"),
    ({"tool": "fs.write", "path": "conftest.py", "content": ALL_PASS_HOOK}, "conftest.py"),
], ids=["pytest.ini deselects", "conftest.py passes all"])
def test_a_harness_change_that_hides_a_broken_test_fails_naming_it(
        harness: Harness, tmp_path: Path, harness_edit: dict[str, str], named: str) -> None:
    harness.repo = clean_pytest_repo(tmp_path)
    harness.configure('[policy]\nmax_autonomy = "auto_pr"\n')
    record = harness.run(harness.plan(BREAK_ADD, harness_edit), verify=(PYTEST,),
                         task_type="refactor", autonomy="auto_pr")

    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
    base = record.run.base_commit[:12]
    assert (f"tests/test_calc.py::test_add (its base version fails with the patch's code); it "
            f"passed on base {base}") in record.verdict.reasons
    assert classes(record)["tests/test_calc.py::test_add"] is K.PASS_TO_FAIL
    name = check_of(record).name
    assert {s.title for s in record.steps if s.type is StepType.RUN_VERIFIER} >= {
        f"fix evidence: {name}", f"regression evidence: {name}"}
    (judgement,) = record.judgements
    assert [(f.category, f.file_path, f.blocks_auto_pr) for f in judgement.findings
            if f.category == "harness-changed"] == [("harness-changed", named, True)]


@on_sqlite
def test_a_harness_change_that_hides_nothing_still_waits_for_a_person(
        harness: Harness, tmp_path: Path) -> None:
    harness.repo = clean_pytest_repo(tmp_path)
    harness.configure('[policy]\nmax_autonomy = "auto_pr"\n')
    record = harness.run(harness.plan(
        {"tool": "fs.write", "path": "pytest.ini", "content": "[pytest]\naddopts = -q\n"}),
        verify=(PYTEST,), task_type="refactor", autonomy="auto_pr")

    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.SUCCESS_NEEDS_REVIEW
    assert any("the patch changes the test harness: pytest.ini" in r
               for r in record.verdict.reasons)


REMOVE_MUL_TEST = {"tool": "fs.replace", "path": "tests/test_calc.py",
                   "old": "\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n", "new": "\n"}


@on_sqlite
@pytest.mark.parametrize("allowed", [False, True], ids=["not allowed", "allow-removed-tests"])
def test_a_removed_test_is_pass_to_missing_and_fails_unless_the_task_allows_it(
        harness: Harness, tmp_path: Path, allowed: bool) -> None:
    harness.repo = clean_pytest_repo(tmp_path)
    harness.configure('[verification]\nbaseline = "always"\n')
    record = harness.run(harness.plan(REMOVE_MUL_TEST), verify=(PYTEST,), task_type="refactor",
                         allow_removed_tests=allowed)

    assert classes(record)["tests/test_calc.py::test_mul"] is K.PASS_TO_MISSING
    assert record.verdict is not None
    missing = [r for r in record.verdict.reasons if "PASS_TO_MISSING" in r]
    if allowed:
        assert record.verdict.status is not VerdictStatus.FAILED_VERIFICATION and not missing
    else:
        assert record.verdict.status is VerdictStatus.FAILED_VERIFICATION
        assert missing == [f"tests/test_calc.py::test_mul passed on base "
                           f"{record.run.base_commit[:12]} and did not run with the patch "
                           "(PASS_TO_MISSING; a task that removes tests says "
                           "--allow-removed-tests)"]


@on_sqlite
def test_a_flipping_test_reruns_on_the_base_checkout_kept_beside_the_cached_baseline(
        harness: Harness, tmp_path: Path) -> None:
    """The run that paid for the baseline keeps its base checkout, cleaned; the next run on
    that base reads the baseline from the cache and reruns its flipping test in that same
    checkout (the same directory, not a new clone), then gives it back clean. (Without the tree
    cache: with it, each run's base tree is a fresh view and nothing is kept.)"""
    harness.repo = pytest_repo(tmp_path)
    cache = tmp_path / "baselines"
    first = harness.record(harness.execute(harness.submit(
        harness.plan(FIRST_USE_BREAKS_MUL), verify=(PYTEST,), task_type="refactor"),
        baseline_cache=cache, tree_cache=None))
    (kept,) = (cache / "checkouts").iterdir()
    made = kept.stat().st_ino
    status = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=kept,
                            capture_output=True, text=True, check=True)
    assert status.stdout == ""  # the base run's caches are gone: clean for the next run
    assert classes(first)["tests/test_calc.py::test_mul"] is K.PASS_TO_FLAKY

    second = harness.record(harness.execute(harness.submit(
        harness.plan(FIRST_USE_BREAKS_MUL), verify=(PYTEST,), task_type="refactor"),
        baseline_cache=cache, tree_cache=None))

    assert check_of(second).baseline_cached is True
    assert classes(second)["tests/test_calc.py::test_mul"] is K.PASS_TO_FLAKY
    flake_reruns = [s for s in second.steps if s.title.startswith("baseline flake rerun:")]
    assert flake_reruns and all(s.attributes["reusedCheckout"] is True for s in flake_reruns)
    assert Path(str(flake_reruns[0].attributes["path"])).parent == cache / "checkouts"
    assert [p.name for p in (cache / "checkouts").iterdir()] == [kept.name]
    assert kept.stat().st_ino == made  # given back, the same directory: never cloned again


@on_sqlite
def test_a_base_checkout_whose_git_config_a_test_changed_is_not_kept(
        harness: Harness, tmp_path: Path) -> None:
    """What a base run writes under `.git` (a hook, a config key) must not reach the next run:
    such a checkout is deleted, and the next run clones afresh (without the tree cache)."""
    harness.repo = pytest_repo(tmp_path)
    cache = tmp_path / "baselines"
    command = f"git config agentctl.touched yes; {PYTEST}"
    record = harness.record(harness.execute(harness.submit(
        harness.plan(BREAK_MUL), verify=(command,), task_type="refactor"),
        baseline_cache=cache, tree_cache=None))
    assert check_of(record).baseline_commit is not None  # the base did run
    assert list((cache / "checkouts").iterdir()) == []
