"""Real bug fixes from public Python projects (tests/corpus/cases.toml), end to end through the
installed CLI: `task submit --type bug_fix --run` with a `patch:` agent, three times per case.

- the release's own fix: SUCCESS, the bug's tests FAIL_TO_PASS; SUCCESS_NEEDS_REVIEW where the
  base's suite already fails tests the fix has nothing to do with, those "not blamed";
- a patch that only adds a note: FAILED_VERIFICATION, the bug's tests still failing, named;
- the fix plus an edit that breaks code the base got right: FAILED_VERIFICATION, the broken tests
  PASS_TO_FAIL, named;
- on one case of each project, the hostile variants (`corpus.hostile`): patches that fix nothing
  and try to grade themselves (a new test only, the bug's tests edited, a deselect in one of
  pytest's config files, a different one per project, a conftest that drops them or flips every
  report beside the patch's code alone; for a unittest project a `load_tests` that drops them, a
  test package that silences failures): never SUCCESS, never eligible. Every variant runs on two
  pytest projects and the unittest one; the other projects run the deselect alone, the variant
  that differs between them (each writes another of pytest's config files).

Each case is a class of its own, so that `--dist loadscope` spreads the cases over the workers.
The sdists come from the package index on first use (never skipped: no index, no pass).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.corpus.corpus import (
    DESELECT_IN,
    Edit,
    Case,
    breaking,
    build_base,
    diff_after,
    gold,
    hostile,
    load_cases,
    noop,
)
from tests.e2e.runs_support import in_parallel

CASES = load_cases()
PATCHES = ("gold", "noop", "break")
# the hostile variants run on the first case of each project (they cost a run each)
HOSTILE = {case.name for case in reversed(CASES)
           if case is next(c for c in CASES if c.before.package == case.before.package)}
# where every attack runs (each is a run of its own, ~3 s of CPU); the variants other than the
# deselect are written the same way whatever the project, so more projects add time, not cover
EVERY_ATTACK = {"toolz-interpose-empty-sequence", "humanize-natural-list-any-iterable",
                "idna-codec-overlong-and-non-text-input"}


def attacks(case: Case) -> dict[str, Edit]:
    """The hostile variants `case` runs: all of them, or the deselect alone."""
    every = hostile(case)
    if case.name in EVERY_ATTACK:
        return every
    return {name: edit for name, edit in every.items() if name.endswith(" deselects")}


@dataclass(frozen=True)
class Outcome:
    """One run as the CLI reports it: exit code, verdict, and each test's class."""

    exit_code: int
    verdict: str
    reasons: tuple[str, ...]
    classes: dict[str, str]

    def why(self) -> str:
        return f"exit {self.exit_code}, {self.verdict}: " + " | ".join(self.reasons)


def run_case(case: Case, root: Path, run_agentctl: Callable[..., Any],
             run_cli: Callable[..., Any]) -> dict[str, Outcome]:
    repo, after = build_base(case, root)
    edits = {"gold": gold(case, after), "noop": noop, "break": breaking(case, after)}
    if case.name in HOSTILE:
        edits.update(attacks(case))
    home, cwd = root / "home", root / "cwd"
    cwd.mkdir()
    # one run of each check: these cases are about the classes, not about reruns
    (cwd / ".agentctl.toml").write_text("[verification]\nreruns = 0\n")
    for name, edit in edits.items():
        (cwd / f"{name}.diff").write_text(diff_after(repo, root / f"scratch-{name}", edit))

    def submit(name: str) -> Any:
        result = run_agentctl("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                              "--instruction", case.bug, "--verify",
                              case.verify_command(sys.executable), "--run", "--agent",
                              f"patch:{name}.diff", "--json", home=home, cwd=cwd, timeout=280)
        assert "Traceback" not in result.stderr, result.stderr
        assert result.returncode in (0, 1), (name, result.returncode, result.stderr)
        return result

    def outcome(result: Any) -> Outcome:
        """The run's verdict and its tests' classes (`verdict explain`, in-process)."""
        run = result.json()
        explained = run_cli("verdict", "explain", run["runId"], "--json", home=home, cwd=cwd)
        assert "Traceback" not in explained.stderr, explained.stderr
        classes = {test["testId"]: test["classification"]
                   for check in explained.json()["classification"]
                   for test in check["classifiedTests"]}
        verdict = run["verdict"]
        return Outcome(result.returncode, verdict["status"], tuple(verdict["reasons"]), classes)

    # the gold run first: it leaves the base's results in the baseline cache for the other two
    results = {"gold": submit("gold")}
    rest = [name for name in edits if name != "gold"]
    results.update(zip(rest, in_parallel(submit, rest, workers=2), strict=True))
    return {name: outcome(result) for name, result in results.items()}


class RealBugFix:
    """The three runs of one case; subclassed once per case below."""

    case: ClassVar[Case]

    @pytest.fixture(scope="class")
    @classmethod
    def runs(cls, tmp_path_factory: pytest.TempPathFactory, run_agentctl: Callable[..., Any],
             run_cli: Callable[..., Any]) -> dict[str, Outcome]:
        return run_case(cls.case, tmp_path_factory.mktemp(cls.case.name), run_agentctl, run_cli)

    def test_the_released_fix_succeeds_with_the_bugs_tests_fail_to_pass(
            self, runs: dict[str, Outcome]) -> None:
        fixed = runs["gold"]
        for test in self.case.fail_to_pass:
            assert fixed.classes.get(test) == "FAIL_TO_PASS", (test, fixed.why())
        if not self.case.already_failing:
            assert (fixed.exit_code, fixed.verdict) == (0, "SUCCESS"), fixed.why()
            return
        # tests that failed on the base for another reason leave it for review, never hide the fix
        assert (fixed.exit_code, fixed.verdict) == (0, "SUCCESS_NEEDS_REVIEW"), fixed.why()
        still = [test for test, kind in fixed.classes.items() if kind == "FAIL_TO_FAIL"]
        assert len(still) == self.case.already_failing, (still, fixed.why())
        already = re.compile(rf"{len(still)} tests? already failed on base .*\(not blamed\)")
        assert any(already.match(reason) for reason in fixed.reasons), fixed.why()
        assert not any("not shown" in reason for reason in fixed.reasons), fixed.why()

    def test_a_patch_that_fixes_nothing_fails_verification_naming_the_bugs_tests(
            self, runs: dict[str, Outcome]) -> None:
        unfixed = runs["noop"]
        for test in self.case.fail_to_pass:
            assert unfixed.classes.get(test) == "FAIL_TO_FAIL", (test, unfixed.why())
        assert (unfixed.exit_code, unfixed.verdict) == (1, "FAILED_VERIFICATION"), unfixed.why()
        # a long list is cut ("+3 more"): the reasons name tests that still fail, not all of them
        still_failing = {test for test, kind in unfixed.classes.items() if kind == "FAIL_TO_FAIL"}
        assert any(test in reason for reason in unfixed.reasons for test in still_failing), \
            unfixed.why()

    def test_the_fix_with_a_regression_fails_verification_as_pass_to_fail(
            self, runs: dict[str, Outcome]) -> None:
        broken = runs["break"]
        assert (broken.exit_code, broken.verdict) == (1, "FAILED_VERIFICATION"), broken.why()
        for test in self.case.fail_to_pass:
            assert broken.classes.get(test) == "FAIL_TO_PASS", (test, broken.why())
        for test in self.case.breaking.pass_to_fail:
            assert broken.classes.get(test) == "PASS_TO_FAIL", (test, broken.why())
            # named, or folded with the others of its file ("4 tests in FILE failed; ...")
            assert any(test in reason or test.split("::")[0] in reason
                       for reason in broken.reasons), (test, broken.why())
        regressions = {test for test, kind in broken.classes.items() if kind == "PASS_TO_FAIL"}
        assert regressions == set(self.case.breaking.pass_to_fail), broken.why()


class HostileVariants(RealBugFix):
    """A case whose hostile variants run too (the first case of each project)."""

    def test_no_patch_that_grades_itself_succeeds_or_is_eligible(
            self, runs: dict[str, Outcome]) -> None:
        for name in attacks(self.case):
            attack = runs[name]
            assert (attack.exit_code, attack.verdict) == (1, "FAILED_VERIFICATION"), \
                (name, attack.why())
            for test in self.case.fail_to_pass:
                assert attack.classes.get(test) != "FAIL_TO_PASS", (name, test, attack.why())


def _class_name(case: Case) -> str:
    return "Test" + "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", case.name))


for _case in CASES:
    globals()[_class_name(_case)] = type(
        _class_name(_case), (HostileVariants if _case.name in HOSTILE else RealBugFix,),
        {"case": _case})


def test_the_corpus_holds_a_unittest_project_and_a_base_with_unrelated_failures() -> None:
    unittest_cases = [case for case in CASES if case.runner == "unittest"]
    assert unittest_cases
    for case in unittest_cases:
        assert case.verify_command("python").startswith("python -m unittest "), case.name
        for test in (*case.fail_to_pass, *case.breaking.pass_to_fail):
            assert "::" not in test and test.count(".") >= 2, (case.name, test)
            assert case.test_file(test).endswith(".py"), (case.name, test)
    assert any(case.already_failing for case in CASES)


def test_the_corpus_holds_at_least_eight_cases_from_several_projects() -> None:
    assert len(CASES) >= 8
    assert len({case.before.package for case in CASES}) >= 3
    assert len({_class_name(case) for case in CASES}) == len(CASES)  # one class each
    for case in CASES:
        assert case.fail_to_pass and case.breaking.pass_to_fail, case.name
        assert not set(case.fail_to_pass) & set(case.breaking.pass_to_fail), case.name


def test_every_attack_runs_on_a_unittest_and_two_pytest_projects_and_a_deselect_on_each() -> None:
    assert EVERY_ATTACK <= HOSTILE
    every = [case for case in CASES if case.name in EVERY_ATTACK]
    assert [case.runner for case in every].count("pytest") == 2, every
    assert [case.runner for case in every].count("unittest") == 1, every
    for case in CASES:
        if case.name in HOSTILE and case.runner == "pytest":
            assert f"{case.deselect_in} deselects" in attacks(case), case.name


def test_the_deselect_variants_write_each_of_pytests_config_files() -> None:
    """One project's each: together the hostile cases deselect through every file pytest reads
    its options from."""
    written = [case.deselect_in for case in CASES if case.name in HOSTILE
               and case.runner == "pytest"]
    assert sorted(written) == sorted(DESELECT_IN)
