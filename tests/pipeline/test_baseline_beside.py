"""The base's checks beside the patch's: they really overlap (each waits for the other, with no
clock in the assertion), and what is recorded is what the sequential order records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentctl.domain.enums import (
    StepStatus,
    StepType,
    TestClassification,
    VerificationCheckStatus,
)
from agentctl.execution.workspaces.discard import remove_workspace
from agentctl.services.ports import RunRecord
from tests.conftest import make_repo
from tests.pipeline.conftest import Harness
from tests.pipeline.test_baseline import CALC, FIX_ADD, PYTEST, check_of, classes, pytest_repo

# pytest where agentctl's plugin cannot load (the command sets PYTHONPATH in a way that cannot be
# lifted into its environment): it reruns failing tests in processes of their own.
PYTEST_OWN_PATH = f"export PYTHONPATH=.; {PYTEST}"

on_sqlite = pytest.mark.parametrize("harness", ["sqlite"], indirect=True)

# Run by the same check on the patch and on the base (calc.py tells which): it leaves its marker
# and waits up to a minute for the other's. One after the other, the first would give up.
MEET = '''import pathlib, sys, time
shared = pathlib.Path(sys.argv[1])
me = "patch" if "a + b" in pathlib.Path("calc.py").read_text() else "base"
other = "base" if me == "patch" else "patch"
(shared / me).write_text("here")
deadline = time.monotonic() + 60
while not (shared / other).exists():
    if time.monotonic() > deadline:
        sys.exit(me + ": " + other + " never came")
    time.sleep(0.05)
print(me + " met " + other)
'''


def shaped(record: RunRecord) -> list[tuple[object, ...]]:
    """The record without its ids, times and paths: steps in order with what they noted, then
    the events in order with their types and step titles."""
    titles = {s.step_id: s.title for s in record.steps}
    steps = [(s.type, s.title, s.status,
              tuple(sorted((k, str(v)) for k, v in s.attributes.items()
                           if k in ("command", "baseline", "rerun", "selected", "status",
                                    "exitCode", "reusedCheckout", "tests", "reranInProcess")))
              ) for s in record.steps]
    events = [(e.type, titles.get(e.step_id or "")) for e in record.events]
    return [*steps, *events]


@on_sqlite
def test_the_base_runs_beside_the_patchs_checks(harness: Harness, tmp_path: Path) -> None:
    shared = tmp_path / "meeting"
    shared.mkdir()
    harness.configure(f'[sandbox]\nwritable = ["{shared}"]\n')
    harness.repo = pytest_repo(tmp_path)
    (harness.repo / "meet.py").write_text(MEET)
    subprocess.run(["git", "-C", str(harness.repo), "add", "meet.py"], check=True)
    subprocess.run(["git", "-C", str(harness.repo), "commit", "-qm", "meet"], check=True)
    record = harness.record(harness.execute(harness.submit(
        harness.plan(FIX_ADD), verify=(f"{sys.executable} meet.py {shared}",)),
        concurrent_baseline=True))

    check = check_of(record)
    assert check.status is VerificationCheckStatus.PASSED, check.summarized_failure
    (base,) = [s for s in record.steps
               if s.type is StepType.RUN_VERIFIER and s.title.startswith("baseline:")]
    assert base.attributes["status"] == "PASSED"
    assert {p.name for p in shared.iterdir()} == {"patch", "base"}


@on_sqlite
@pytest.mark.parametrize(("reruns", "command"), [(2, PYTEST_OWN_PATH), (1, PYTEST_OWN_PATH),
                                                 (2, PYTEST)])
def test_beside_or_after_the_record_is_the_same(harness: Harness, tmp_path: Path,
                                                reruns: int, command: str) -> None:
    """A fix whose check fails on the base and once more with the patch (a rerun there, then
    reruns on the base): the same steps, notes and events in the same order either way, with
    one rerun (made beside in the base's own tree) as with two, and with pytest rerunning the
    base's failures in its own process."""
    harness.configure(f"[verification]\nreruns = {reruns}\n")
    harness.repo = pytest_repo(tmp_path)
    records = [harness.record(harness.execute(harness.submit(
        harness.plan(FIX_ADD), verify=(command,), must_pass=("tests/test_calc.py::test_add",)),
        concurrent_baseline=beside)) for beside in (False, True)]

    after, beside = records
    assert shaped(beside) == shaped(after)
    assert classes(beside) == classes(after)
    assert beside.verdict is not None and after.verdict is not None
    assert (beside.verdict.status, beside.verdict.reasons) == (after.verdict.status,
                                                               after.verdict.reasons)
    rerun_steps = [s for s in beside.steps if s.title.startswith("baseline rerun:")]
    (base,) = [s for s in beside.steps if s.title.startswith("baseline:")]
    if command == PYTEST:
        assert rerun_steps == []
        assert base.attributes["reranInProcess"] == {
            "tests/test_calc.py::test_add": ["FAILED"] * reruns,
            "tests/test_calc.py::test_answer": ["FAILED"] * reruns}
    else:
        assert len(rerun_steps) == reruns and "reranInProcess" not in base.attributes


@on_sqlite
def test_a_task_whose_base_may_not_be_wanted_runs_no_base_early(harness: Harness,
                                                                tmp_path: Path) -> None:
    """Under `baseline = "auto"`, a feature whose checks pass needs no base: none is run,
    beside or after."""
    harness.configure('[verification]\nbaseline = "auto"\n')
    harness.repo = pytest_repo(tmp_path)
    record = harness.record(harness.execute(harness.submit(
        harness.plan({"tool": "fs.write", "path": "NOTES.md", "content": "notes\n"}),
        verify=(f"{sys.executable} -m pytest -q tests/test_calc.py::test_mul",),
        task_type="refactor"), concurrent_baseline=True))

    assert not [s for s in record.steps if s.title.startswith("baseline")]
    assert check_of(record).status is VerificationCheckStatus.PASSED


# Run on the base only (calc.py tells which) it always fails; a rerun there (any run after the
# first) leaves its marker and its working directory, and waits up to a minute for the other.
RERUNS_MEET = '''import os, pathlib, sys, time, uuid
me = uuid.uuid4().hex  # a sandbox's pid namespace gives each run the same pid
shared = pathlib.Path(sys.argv[1])
if "a + b" in pathlib.Path("calc.py").read_text():
    sys.exit(0)
runs = len(list(shared.glob("run-*")))
(shared / f"run-{me}").write_text(os.getcwd())
if runs:
    deadline = time.monotonic() + 60
    while len(list(shared.glob("run-*"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    if len(list(shared.glob("run-*"))) == 3:
        (shared / f"met-{me}").write_text("met")
sys.exit("the base still fails")
'''


@on_sqlite
def test_the_base_reruns_run_at_once_each_in_a_tree_of_its_own(harness: Harness,
                                                                 tmp_path: Path) -> None:
    """A check that fails on the base every time: its two reruns there meet (one after the
    other, the first would wait in vain), the second in a fresh checkout of the base, and the
    check is still FAIL_TO_PASS with both reruns recorded in order."""
    shared = tmp_path / "meeting"
    shared.mkdir()
    harness.configure(f'[sandbox]\nwritable = ["{shared}"]\n')
    harness.repo = pytest_repo(tmp_path)
    (harness.repo / "meet.py").write_text(RERUNS_MEET)
    subprocess.run(["git", "-C", str(harness.repo), "add", "meet.py"], check=True)
    subprocess.run(["git", "-C", str(harness.repo), "commit", "-qm", "meet"], check=True)
    record = harness.record(harness.execute(harness.submit(
        harness.plan(FIX_ADD), verify=(f"{sys.executable} meet.py {shared}",)),
        concurrent_baseline=True))

    assert check_of(record).classification is TestClassification.FAIL_TO_PASS
    reruns = [s for s in record.steps if s.title.startswith("baseline rerun:")]
    assert [s.attributes["status"] for s in reruns] == ["FAILED", "FAILED"]
    assert len(list(shared.glob("met-*"))) == 2
    places = {p.read_text() for p in shared.glob("run-*")}
    assert len(places) == 2 and any(p.endswith("base-rerun-2") for p in places)


@on_sqlite
def test_a_base_rerun_whose_selection_narrowed_runs_again_as_asked(harness: Harness,
                                                                   tmp_path: Path) -> None:
    """Two tests fail on the base; one passes on its first rerun there (FLAKY): the second rerun
    made at once selected both, so it is made again with the one still failing, as the
    sequential order has it."""
    state = tmp_path / "state"
    state.mkdir()
    harness.configure(f'[sandbox]\nwritable = ["{state}"]\n')
    # counted on the base only (add is broken there), so that the patch's runs, which may come
    # before or after the base's on a busy machine, cannot decide which base run passes
    harness.repo = pytest_repo(tmp_path, flaky=state / "flaky.count",
                               passes="__import__('calc').add(2, 3) == 5 or runs() > 1")
    record = harness.record(harness.execute(harness.submit(
        harness.plan(FIX_ADD), verify=(PYTEST_OWN_PATH,)), concurrent_baseline=True))

    reruns = [s for s in record.steps if s.title.startswith("baseline rerun:")]
    assert [s.attributes["selected"] for s in reruns][-1] == ["tests/test_calc.py::test_add"]
    assert classes(record)["tests/test_calc.py::test_add"] is TestClassification.FAIL_TO_PASS


@on_sqlite
def test_a_base_whose_baselines_are_all_cached_gets_no_tree_beside(harness: Harness,
                                                                   tmp_path: Path) -> None:
    """The second run on a base reads its baseline from the cache: nothing starts beside the
    patch's checks, so no base tree is made for it (the kept workspace has none)."""
    harness.repo = pytest_repo(tmp_path)
    cache = tmp_path / "baselines"
    for _ in range(2):
        record = harness.record(harness.execute(harness.submit(
            harness.plan(FIX_ADD), verify=(PYTEST,)), baseline_cache=cache,
            concurrent_baseline=True, keep_workspace=True))
    first, kept = [Path(line.removeprefix("workspace kept at ")).parent
                   for line in harness.progress if line.startswith("workspace kept at ")]
    try:
        assert check_of(record).baseline_cached is True
        assert (kept / "verify").is_dir() and not (kept / "base-verify").exists()
    finally:
        remove_workspace(first)
        remove_workspace(kept)


# On the base only (calc.py tells which): fails the first time it runs in a tree, passes after.
# A run that passes lingers after pytest has written its report; one that fails waits a second
# first, so it writes its report while the passing one lingers.
FIRST_IN_A_TREE = '''import atexit, pathlib, time

from calc import add


def test_add():
    if add(2, 3) == 5:
        return
    seen = pathlib.Path("seen-here")
    if seen.exists():
        atexit.register(time.sleep, 4)
        return
    seen.write_text("seen")
    time.sleep(1)
    assert False, "the first run in this tree"
'''


@on_sqlite
def test_base_reruns_at_once_each_read_their_own_report(harness: Harness,
                                                        tmp_path: Path) -> None:
    """The base's two reruns run at once: the first (in the tree of the base's first run)
    passes, the second (a fresh tree) fails and writes its report later. Each reads its own
    report, so the test passed on its first rerun there: FLAKY on the base, one rerun recorded
    (a report folder shared by the two would have the first read the second's failure)."""
    harness.repo = make_repo(tmp_path / "flip", {
        "calc.py": CALC, "tests/__init__.py": "", "tests/test_flip.py": FIRST_IN_A_TREE,
        "pytest.ini": "[pytest]\naddopts = -p no:cacheprovider\n"})
    record = harness.record(harness.execute(harness.submit(
        harness.plan(FIX_ADD), verify=(PYTEST_OWN_PATH,)), concurrent_baseline=True))

    reruns = [s for s in record.steps if s.title.startswith("baseline rerun:")]
    assert [s.attributes["status"] for s in reruns] == ["PASSED"]
    assert classes(record)["tests/test_flip.py::test_add"] is TestClassification.FLAKY


# The patch's check (calc.py tells which) passes once it has seen the base's two reruns; on the
# base it always fails, its first run leaving one marker, each rerun another.
RERUNS_BESIDE_THE_CHECK = '''import pathlib, sys, time, uuid
shared = pathlib.Path(sys.argv[1])
if "a + b" in pathlib.Path("calc.py").read_text():
    deadline = time.monotonic() + 30
    while len(list(shared.glob("rerun-*"))) < 2:
        if time.monotonic() > deadline:
            sys.exit("the base's reruns never came")
        time.sleep(0.05)
    sys.exit(0)
if (shared / "first").exists():
    (shared / f"rerun-{uuid.uuid4().hex}").write_text("rerun")
else:
    (shared / "first").write_text("first")
sys.exit("the base still fails")
'''


def _committed(repo: Path, name: str, text: str) -> None:
    (repo / name).write_text(text)
    subprocess.run(["git", "-C", str(repo), "add", name], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", name], check=True)


@on_sqlite
def test_the_base_reruns_run_while_the_patchs_check_still_runs(harness: Harness,
                                                               tmp_path: Path) -> None:
    """The base's reruns start once its first run has failed, not after the patch's checks:
    the patch's check waits for both (after it, they would never come), and the record is
    the sequential one: the base's run, then its two reruns, FAIL_TO_PASS."""
    shared = tmp_path / "meeting"
    shared.mkdir()
    harness.configure(f'[sandbox]\nwritable = ["{shared}"]\n')
    harness.repo = pytest_repo(tmp_path)
    _committed(harness.repo, "meet.py", RERUNS_BESIDE_THE_CHECK)
    record = harness.record(harness.execute(harness.submit(
        harness.plan(FIX_ADD), verify=(f"{sys.executable} meet.py {shared}",)),
        concurrent_baseline=True))

    check = check_of(record)
    assert check.status is VerificationCheckStatus.PASSED, check.summarized_failure
    assert check.classification is TestClassification.FAIL_TO_PASS
    titles = [s.title for s in record.steps if s.type is StepType.RUN_VERIFIER]
    name = titles[0]
    assert titles == [name, f"baseline: {name}", f"baseline rerun: {name}",
                      f"baseline rerun: {name}"]
    assert len(list(shared.glob("rerun-*"))) == 2


# The agent's command: waits (up to 30 s) for the base's run to say it ran.
WAIT_FOR_THE_BASE = ('import pathlib, sys, time\n'
                     'deadline = time.monotonic() + 30\n'
                     'while not pathlib.Path(sys.argv[1], "base-ran").exists():\n'
                     '    if time.monotonic() > deadline:\n'
                     '        sys.exit("the base never ran")\n'
                     '    time.sleep(0.05)\n')


@on_sqlite
def test_the_base_runs_while_the_agent_works(harness: Harness, tmp_path: Path) -> None:
    """The base's first run starts with the attempt, beside the agent: the agent's command
    waits for it (were it started only with the patch's checks, it would never come)."""
    shared = tmp_path / "meeting"
    shared.mkdir()
    harness.configure(f'[sandbox]\nwritable = ["{shared}"]\n')
    harness.repo = pytest_repo(tmp_path)
    _committed(harness.repo, "mark.py", 'import pathlib, sys\n'
               'if "a + b" not in pathlib.Path("calc.py").read_text():\n'
               '    pathlib.Path(sys.argv[1], "base-ran").write_text("ran")\n'
               '    sys.exit("the base fails")\n')
    _committed(harness.repo, "wait.py", WAIT_FOR_THE_BASE)
    wait = f"python3 wait.py {shared}"
    record = harness.record(harness.execute(harness.submit(
        harness.plan({"tool": "shell.run", "command": wait}, FIX_ADD),
        verify=(f"{sys.executable} mark.py {shared}",)), concurrent_baseline=True))

    (waited,) = [s for s in record.steps if s.title.startswith("shell.run")]
    assert waited.status is StepStatus.SUCCEEDED, waited.failure_code
    assert check_of(record).classification is TestClassification.FAIL_TO_PASS


# On the base (calc.py tells which): says it started, then runs for a minute.
SLOW_ON_THE_BASE = ('import pathlib, sys, time\n'
                    'if "a + b" not in pathlib.Path("calc.py").read_text():\n'
                    '    pathlib.Path(sys.argv[1], "base-ran").write_text("started")\n'
                    '    time.sleep(60)\n')


def running(*words: str) -> list[str]:
    """The command lines of the machine's processes that hold every one of `words`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if entry.name.isdigit() and all(w in line for w in words):
            found.append(line)
    return found


@on_sqlite
def test_an_agent_that_fails_stops_the_base_running_beside_it(harness: Harness,
                                                               tmp_path: Path) -> None:
    """The agent fails while the base's first run is under way: the attempt ends without
    verification, the base's process is stopped (not left running), and nothing of the base
    is on record."""
    shared = tmp_path / "meeting"
    shared.mkdir()
    harness.configure(f'[sandbox]\nwritable = ["{shared}"]\n')
    harness.repo = pytest_repo(tmp_path)
    _committed(harness.repo, "slow.py", SLOW_ON_THE_BASE)
    _committed(harness.repo, "wait.py", WAIT_FOR_THE_BASE)
    record = harness.record(harness.execute(harness.submit(
        harness.plan({"tool": "shell.run", "command": f"python3 wait.py {shared}"},
                     {"tool": "fs.replace", "path": "calc.py", "old": "no such text",
                      "new": "x"}),
        verify=(f"{sys.executable} slow.py {shared}",)), concurrent_baseline=True))

    assert (shared / "base-ran").exists()
    assert not running("slow.py", str(shared))
    assert not [s for s in record.steps if s.type is StepType.RUN_VERIFIER]
    assert record.verdict is not None and not record.verifications


SUBTESTS_ON_ADD = '''import unittest

from calc import add


class AddTest(unittest.TestCase):
    def test_sums(self):
        for a, b in ((1, 1), (2, 3)):
            with self.subTest(a=a, b=b):
                self.assertEqual(add(a, b), a + b)
'''


@on_sqlite
def test_pytest_reruns_in_process_what_it_can_and_a_process_reruns_the_rest(
        harness: Harness, tmp_path: Path) -> None:
    """Under xdist, tests fail on the base: its workers rerun the plain ones in their own
    processes; the one with subtests (whose reports a worker would send on) is rerun in
    processes of their own, selected alone. Both are FAIL_TO_PASS, and the record is the same
    beside as after."""
    harness.repo = pytest_repo(tmp_path)
    _committed(harness.repo, "tests/test_sums.py", SUBTESTS_ON_ADD)
    records = [harness.record(harness.execute(harness.submit(
        harness.plan(FIX_ADD), verify=(f"{PYTEST} -n 2",)), concurrent_baseline=beside))
        for beside in (False, True)]

    after, beside = records
    assert shaped(beside) == shaped(after)
    for record in records:
        (base,) = [s for s in record.steps if s.title.startswith("baseline:")]
        assert base.attributes["reranInProcess"] == {
            "tests/test_calc.py::test_add": ["FAILED", "FAILED"],
            "tests/test_calc.py::test_answer": ["FAILED", "FAILED"]}
        reruns = [s for s in record.steps if s.title.startswith("baseline rerun:")]
        assert [s.attributes["selected"] for s in reruns] == [
            ["tests/test_sums.py::AddTest::test_sums"]] * 2
        assert {t: k for t, k in classes(record).items() if k is not
                TestClassification.PASS_TO_PASS} == {
            "tests/test_calc.py::test_add": TestClassification.FAIL_TO_PASS,
            "tests/test_calc.py::test_answer": TestClassification.FAIL_TO_FAIL,
            "tests/test_sums.py::AddTest::test_sums": TestClassification.FAIL_TO_PASS}
