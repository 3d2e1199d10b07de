"""final-summary.md: recorded strings an agent chose render as text; the sections are agentctl's."""

from __future__ import annotations

from dataclasses import replace

from agentctl.domain.agent_text import visible
from agentctl.domain.enums import TestClassification, TestOutcome
from agentctl.domain.verdict import Decision
from agentctl.domain.verification import ClassifiedTest
from agentctl.services.attempts.summary import final_summary
from tests.unit.conftest import sample_spec
from tests.unit.test_pr_body import HOSTILE, acted_on, rendered


def summary(samples: dict[str, object], hostile: bool) -> str:
    patch, report, judge, verdict = (samples[name] for name in (
        "Patch", "VerificationReport", "JudgeReport", "Verdict"))
    reasons = tuple(f"patch touches {h}" for h in HOSTILE) if hostile else ("ok",)
    if hostile:
        change = patch.file_changes[0]  # type: ignore[attr-defined]
        patch = replace(patch, file_changes=tuple(  # type: ignore[type-var]
            replace(change, path=h, old_path=h) for h in HOSTILE))
        check = replace(report.checks[0], summarized_failure=HOSTILE[0],  # type: ignore[attr-defined]
                        classified_tests=tuple(ClassifiedTest(
                            test_id=h, classification=TestClassification.FAIL_TO_PASS,
                            candidate=TestOutcome.PASSED, base=TestOutcome.FAILED)
                            for h in HOSTILE))
        report = replace(report, checks=(check,))  # type: ignore[type-var]
        finding = judge.findings[0]  # type: ignore[attr-defined]
        judge = replace(judge, findings=tuple(  # type: ignore[type-var]
            replace(finding, message=f"`{h}` deleted", file_path=h) for h in HOSTILE))
    decision = Decision(status=verdict.status,  # type: ignore[attr-defined]
                        pr_eligibility=verdict.pr_eligibility,  # type: ignore[attr-defined]
                        reasons=reasons, evidence=(), chain=())
    return final_summary(run_id="run_1", run_number=1, spec=sample_spec(), spec_digest="sha256:x",
                         patch=patch, verification=report, judge=judge,  # type: ignore[arg-type]
                         decision=decision, agent_error=HOSTILE[1] if hostile else None)


def test_agent_chosen_strings_in_the_final_summary_render_as_text(
        samples: dict[str, object]) -> None:
    sections, html = rendered(summary(samples, hostile=True))
    assert list(sections) == list(rendered(summary(samples, hostile=False))[0])
    assert html == [], html
    text = " ".join(sections.values()).replace("\u2060", "")  # the joiners are invisible
    for hostile in HOSTILE:
        assert visible(hostile) in text, hostile
    assert acted_on(summary(samples, hostile=True)) == []
