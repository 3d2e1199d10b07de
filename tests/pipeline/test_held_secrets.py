"""A run whose agent held a passthrough secret: its patch is searched for the value in the
shapes a program writes it in, and whatever is found a person reviews it; the verdict names the
variables held, never their values. They run on every store."""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

from agentctl.domain.enums import PrEligibility, Severity
from agentctl.execution.agents.spec import parse_agent_spec
from tests.pipeline.conftest import Harness
from tests.pipeline.test_attacks import stored_text

SECRET = "Pk2Lm9Qz7Ws3-deploy-secret"
HEX = SECRET.encode().hex()
AUTO = '[policy]\nmax_autonomy = "auto_pr"\n\n[env]\npassthrough = ["DEPLOY_TOKEN"]\n'


def test_a_command_agent_that_writes_a_held_secret_hex_encoded_and_reversed_is_named(
        harness: Harness, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", SECRET)
    harness.configure(AUTO)
    script = tmp_path / "leak.py"
    script.write_text(textwrap.dedent("""
        import os
        value = os.environ["DEPLOY_TOKEN"]
        with open("calc/config/settings.py", "a") as out:
            out.write("BUILD_ID = %r\\n" % value.encode().hex())
        with open("calc/notes.txt", "w") as out:
            out.write(value[::-1] + "\\n")
        """))
    agent = parse_agent_spec(f"command:python3 {shlex.quote(str(script))}", harness.root)
    record = harness.run(agent, autonomy="auto_pr", task_type="refactor",
                        instruction="set calc.config BUILD_ID")

    (judgement,) = record.judgements
    leaks = sorted((f.file_path, f.message) for f in judgement.findings
                   if f.category == "held-secret" and f.severity is Severity.CRITICAL)
    assert leaks == [
        ("calc/config/settings.py",
         "the patch adds the value of DEPLOY_TOKEN (hex) in calc/config/settings.py"),
        ("calc/notes.txt", "the patch adds the value of DEPLOY_TOKEN (reversed) in calc/notes.txt"),
    ]
    assert record.verdict is not None
    assert record.verdict.pr_eligibility is not PrEligibility.ELIGIBLE_FOR_AUTO_PR
    assert any("DEPLOY_TOKEN" in reason for reason in record.verdict.reasons)
    text = stored_text(record)
    assert SECRET not in text and HEX not in text and SECRET[::-1] not in text


def test_a_clean_run_that_held_a_secret_still_needs_review_and_says_which(
        harness: Harness, monkeypatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", SECRET)
    harness.configure(AUTO.replace('["DEPLOY_TOKEN"]', '["DEPLOY_TOKEN", "NOT_SET_ANYWHERE"]'))
    record = harness.run(harness.plan(
        {"tool": "fs.write", "path": "calc/__init__.py",
         "content": "def add(a, b):\n    return b + a\n"},
        {"tool": "shell.run", "command": "python3 -c 'print(1)'"},  # its environment has it
    ), autonomy="auto_pr", task_type="refactor",
                        instruction="make calc.add commutative")

    (judgement,) = record.judgements
    held = [f for f in judgement.findings if f.category == "held-secret"]
    assert [(f.severity, f.blocks_auto_pr, f.message) for f in held] == [
        (Severity.WARNING, True, "the agent held secret DEPLOY_TOKEN ([env] passthrough): "
                                 "a person reviews the patch before any PR")]
    assert record.verdict is not None
    assert record.verdict.pr_eligibility is PrEligibility.ELIGIBLE_AFTER_HUMAN_APPROVAL
    assert record.verdict.reasons[0].endswith(
        ": the agent held secret DEPLOY_TOKEN ([env] passthrough): a person reviews the patch"
        " before any PR")


def test_a_plan_that_starts_no_process_holds_no_secret(harness: Harness, monkeypatch) -> None:
    """Only the checks and the judge, which are agentctl's, were given the value."""
    monkeypatch.setenv("DEPLOY_TOKEN", SECRET)
    harness.configure(AUTO)
    record = harness.run(harness.plan(
        {"tool": "fs.write", "path": "calc/__init__.py",
         "content": "def add(a, b):\n    return b + a\n"},
    ), autonomy="auto_pr", task_type="refactor", instruction="make calc.add commutative")

    (judgement,) = record.judgements
    assert [f for f in judgement.findings if f.category == "held-secret"] == []


def test_a_run_that_held_no_secret_has_no_such_finding(harness: Harness) -> None:
    record = harness.run(harness.plan(
        {"tool": "fs.write", "path": "calc/__init__.py",
         "content": "def add(a, b):\n    return b + a\n"},
    ), instruction="make calc.add commutative")

    (judgement,) = record.judgements
    assert [f for f in judgement.findings if f.category == "held-secret"] == []
