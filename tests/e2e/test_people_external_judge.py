"""An external judge (`[judge] command`): it reads the case as JSON on stdin and prints a
JudgeReport. Whatever it does (doubt, garbage, a crash, a hang) the run ends with a verdict, and
it never sees a secret the verifier printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.people_support import (
    API_KEY,
    API_KEY_ENV,
    GITHUB_TOKEN,
    cli_result,
    process_gone,
    stored_text,
    submit_and_run,
)
from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench, in_parallel

INSTRUCTION = "add a docstring to add"
LEAK = (
    "import os, sys\n\n"
    "print('token=' + 'ghp_' + 'a' * 36)\n"
    "print('calling the API with ' + os.environ.get('MY_API_KEY', 'no key'))\n"
    "if sys.argv[1:] == ['--fail']:\n"
    "    print('FAIL: login with ' + os.environ.get('MY_API_KEY', '') + ' refused',"
    " file=sys.stderr)\n"
    "    sys.exit(1)\n"
)
JUDGE = '''\
import json, os, pathlib, subprocess, sys, time

mode, out = sys.argv[1], pathlib.Path(sys.argv[2])
(out / f"stdin-{mode}.json").write_text(sys.stdin.read())
(out / f"pid-{mode}").write_text(str(os.getpid()))
report = {"status": "PASSED", "confidence": 0.95, "summary": "looks right",
          "findings": [{"severity": "INFO", "category": "style", "message": "fine",
                        "filePath": "calc/__init__.py", "lineNumber": 2}]}
if mode in ("low", "lenient"):
    report.update(confidence=0.4, summary="not sure about this one")
elif mode == "garbage":
    print("I think it is fine {not json")
    sys.exit(0)
elif mode == "exits":
    print("judge: model quota exceeded")
    sys.exit(3)
elif mode == "hangs":
    child = subprocess.Popen(["sleep", "30"])
    (out / "child-hangs").write_text(str(child.pid))
    time.sleep(30)
    (out / "judge-hangs-finished").write_text("it was never stopped")
print(json.dumps(report))
'''
DOCSTRING = {"tool": "fs.replace", "path": "calc/__init__.py", "old": "def add(a, b):\n",
             "new": "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n"}
MODES = {  # mode: (judge mode, extra [judge] settings, the leak command's arguments)
    "confident": ("confident", "", ""),
    "low": ("low", "", ""),
    "lenient": ("lenient", "min_confidence = 0.3\n", ""),
    "garbage": ("garbage", "", ""),
    "exits": ("exits", "", ""),
    "hangs": ("hangs", "timeout_seconds = 2\n", ""),
    "failing": ("failing", "", " --fail"),
}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("people-judge")
    bench = Bench(root, run_agentctl)
    out = root / "judge-out"
    out.mkdir()
    (root / "judge.py").write_text(JUDGE)
    plan = bench.plan("docstring.toml", DOCSTRING)
    repo = repo_maker(root / "calc", {**CALC_FILES, "leak.py": LEAK})

    def play(name: str) -> dict[str, Any]:
        mode, settings, leak_args = MODES[name]
        config = bench.config(
            '[policy]\nmax_autonomy = "auto_pr"\n[env]\npassthrough = ["MY_API_KEY"]\n'
            f'[judge]\ncommand = "python3 {root / "judge.py"} {mode} {out}"\n{settings}',
            name=f"{name}.toml")
        run = submit_and_run(bench, repo, "--autonomy", "auto_pr", "--verify", UNITTEST,
                             "--verify", f"python3 leak.py{leak_args}", agent=f"script:{plan}",
                             instruction=INSTRUCTION, env=API_KEY_ENV, config=config)
        run["judgeReport"] = json.loads(
            stored_text(bench, bench.artifacts(run["runId"]), "judge-report.json"))
        return run

    runs = dict(zip(MODES, in_parallel(play, list(MODES)), strict=True))
    return {"bench": bench, "runs": runs, "out": out}


def verdict(judged: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(judged["runs"][name]["verdict"])


def stdin_of(judged: dict[str, Any], mode: str) -> str:
    return str((judged["out"] / f"stdin-{mode}.json").read_text())


def test_a_confident_external_judge_leaves_a_clean_change_eligible_for_auto_pr(
        judged: dict[str, Any]) -> None:
    assert verdict(judged, "confident")["status"] == "SUCCESS"
    assert verdict(judged, "confident")["prEligibility"] == "ELIGIBLE_FOR_AUTO_PR"
    report = judged["runs"]["confident"]["judgeReport"]
    assert report["status"] == "PASSED"
    assert report["confidence"] == pytest.approx(0.95)
    assert "fine" in [f["message"] for f in report["findings"]]


def test_a_judge_below_min_confidence_sends_the_run_to_review_naming_its_confidence(
        judged: dict[str, Any]) -> None:
    low = verdict(judged, "low")
    assert low["status"] == "SUCCESS_NEEDS_REVIEW"
    assert low["prEligibility"] == "ELIGIBLE_AFTER_HUMAN_APPROVAL"
    assert any("0.40" in reason and "confidence" in reason for reason in low["reasons"])
    assert judged["runs"]["low"]["judgeReport"]["confidence"] == pytest.approx(0.4)


def test_min_confidence_is_the_threshold_the_judge_must_reach(judged: dict[str, Any]) -> None:
    assert verdict(judged, "lenient")["status"] == "SUCCESS"
    assert verdict(judged, "lenient")["prEligibility"] == "ELIGIBLE_FOR_AUTO_PR"


@pytest.mark.parametrize(("name", "why"), [
    ("garbage", "invalid"), ("exits", "exited with 3"), ("hangs", "timed out after 2s")])
def test_a_judge_that_fails_to_answer_is_inconclusive_and_the_run_needs_review(
        judged: dict[str, Any], name: str, why: str) -> None:
    run = judged["runs"][name]
    assert run["exitCode"] == 0
    assert run["status"] == "NEEDS_APPROVAL"
    assert run["verdict"]["status"] == "SUCCESS_NEEDS_REVIEW"
    assert run["verdict"]["prEligibility"] == "ELIGIBLE_AFTER_HUMAN_APPROVAL"
    assert any("INCONCLUSIVE" in r and why in r for r in run["verdict"]["reasons"]), \
        run["verdict"]["reasons"]
    assert run["judgeReport"]["status"] == "INCONCLUSIVE"
    assert any(why in f["message"] for f in run["judgeReport"]["findings"])


def test_a_hanging_judge_is_stopped_at_its_timeout(judged: dict[str, Any]) -> None:
    out = judged["out"]
    assert (out / "pid-hangs").exists()  # it did start
    assert not (out / "judge-hangs-finished").exists()  # and was stopped before its sleep ended


def test_nothing_a_hanging_judge_started_is_left_running(judged: dict[str, Any]) -> None:
    out: Path = judged["out"]
    assert process_gone(int((out / "pid-hangs").read_text()))
    assert process_gone(int((out / "child-hangs").read_text()))


def test_the_judge_cannot_rescue_a_failed_verification(judged: dict[str, Any]) -> None:
    failing = verdict(judged, "failing")
    assert failing["status"] == "FAILED_VERIFICATION"
    assert failing["prEligibility"] == "NOT_ELIGIBLE"
    assert judged["runs"]["failing"]["judgeReport"]["status"] == "PASSED"


def test_the_judge_reads_the_instruction_and_the_diff_on_stdin(judged: dict[str, Any]) -> None:
    case = json.loads(stdin_of(judged, "confident"))
    assert case["task"]["instruction"] == INSTRUCTION
    assert "+    \"\"\"The sum of a and b.\"\"\"" in case["diff"]
    assert [f["path"] for f in case["touchedFiles"]] == ["calc/__init__.py"]
    assert case["boundary"]["passed"] is True
    assert [c["status"] for c in case["verification"]["checks"]] == ["PASSED", "PASSED"]


@pytest.mark.parametrize("mode", ["confident", "failing"])
def test_the_judge_never_reads_a_secret_the_verifier_printed(
        judged: dict[str, Any], mode: str) -> None:
    text = stdin_of(judged, mode)
    assert GITHUB_TOKEN not in text
    assert API_KEY not in text


def test_the_judges_verdicts_leave_the_audit_log_intact(judged: dict[str, Any]) -> None:
    assert cli_result(judged["bench"], "audit", "verify")["exitCode"] == 0
