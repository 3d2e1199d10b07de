"""The PR body: every section, the 65,536-character limit, classes rendered from the enum."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from agentctl.domain.agent import AgentSpec
from agentctl.domain.agent_text import visible
from agentctl.domain.enums import TestClassification, TestOutcome
from agentctl.domain.verification import ClassifiedTest
from agentctl.services.actions.pr_body import (
    MAX_BODY_CHARS,
    DeniedCall,
    Disclosure,
    FileEdit,
    PrFacts,
    pr_body,
)


def facts(samples: dict[str, object], **overrides: object) -> PrFacts:
    fields: dict[str, object] = dict(
        task=samples["Task"], run=samples["Run"], verdict=samples["Verdict"],
        approvals=[samples["Approval"]], touched=None, verification=None,
        report=samples["VerificationReport"], judge=None, evidence=[],
        edits=[FileEdit("pom.xml", 3, "fs.replace")],
        denied=[DeniedCall("shell.run", "deny: git push *", "git push is denied")],
        cost_usd=0.125, tokens=1200,
        disclosure=Disclosure(agent="claude", model="claude-x", cli_version="unavailable"))
    fields.update(overrides)
    return PrFacts(**fields)  # type: ignore[arg-type]


def with_tests(samples: dict[str, object], tests: list[ClassifiedTest]) -> object:
    report = samples["VerificationReport"]
    check = replace(report.checks[0], classified_tests=tuple(tests))  # type: ignore[attr-defined]
    return replace(report, checks=(check,))  # type: ignore[type-var]


def test_the_body_names_verdict_denials_spend_approvals_disclosure_and_trailers(
        samples: dict[str, object]) -> None:
    body = pr_body(facts(samples))
    for expected in ("**SUCCESS_NEEDS_REVIEW**", "- judge NEEDS_HUMAN_REVIEW: test file deleted",
                     "- `shell.run`: git push is denied (rule `deny: git push *`)",
                     "cost $0.1250, tokens 1200", "- APPROVED by bob: reviewed the diff",
                     "- model: claude-x", "- agent CLI version: unavailable", "### Sandbox",
                     "agentctl-run: run_1", "Generated-by: claude (model claude-x"):
        assert expected in body, expected


def test_every_test_class_is_counted_including_ones_added_later(
        samples: dict[str, object]) -> None:
    tests = [ClassifiedTest(test_id=f"t{c.value}", classification=c,
                            candidate=TestOutcome.PASSED, base=TestOutcome.FAILED)
             for c in TestClassification]
    body = pr_body(facts(samples, report=with_tests(samples, tests)))
    for c in TestClassification:
        if c is TestClassification.PASS_TO_PASS:
            assert "- 1 PASS_TO_PASS\n" in body and "tPASS_TO_PASS" not in body
        else:
            assert f"- **1 {c.value}**: `t{c.value}`\n" in body
    assert body.index("PASS_TO_FAIL") < body.index("FAIL_TO_PASS") < body.index("PASS_TO_PASS")


def test_a_big_result_is_grouped_by_class_failures_first_with_the_first_few(
        samples: dict[str, object]) -> None:
    """24 PASS_TO_FAIL among 100 passing tests: a count per class and the first five of each
    failing class, in recorded order, as `verdict explain` shows them."""
    def test(name: str, c: TestClassification) -> ClassifiedTest:
        return ClassifiedTest(test_id=name, classification=c, candidate=TestOutcome.PASSED,
                              base=TestOutcome.PASSED)

    tests = [test(f"test_steady_{n}", TestClassification.PASS_TO_PASS) for n in range(100)]
    tests += [test("test_fixed", TestClassification.FAIL_TO_PASS)]
    tests += [test(f"test_ordinal_{n}", TestClassification.PASS_TO_FAIL) for n in range(24)]
    body = pr_body(facts(samples, report=with_tests(samples, tests)))
    section = body[body.index("### Tests against the base"):body.index("### What changed")]
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert lines == [
        "- **24 PASS_TO_FAIL**: `test_ordinal_0`, `test_ordinal_1`, `test_ordinal_2`, "
        "`test_ordinal_3`, `test_ordinal_4` and 19 more",
        "- **1 FAIL_TO_PASS**: `test_fixed`", "- 100 PASS_TO_PASS"]
    assert "test_ordinal_5" not in body and "test_steady" not in body


def test_several_checks_are_counted_together_then_each_by_class(
        samples: dict[str, object]) -> None:
    report = samples["VerificationReport"]
    first = report.checks[0]  # type: ignore[attr-defined]
    broken = ClassifiedTest(test_id="t_broken", classification=TestClassification.PASS_TO_FAIL,
                            candidate=TestOutcome.FAILED, base=TestOutcome.PASSED)
    steady = ClassifiedTest(test_id="t_steady", classification=TestClassification.PASS_TO_PASS,
                            candidate=TestOutcome.PASSED, base=TestOutcome.PASSED)
    checks = (replace(first, name="unit", classified_tests=(steady, broken)),
              replace(first, name="lint", classified_tests=()),
              replace(first, name="integration", classified_tests=(steady, steady)))
    body = pr_body(facts(samples, report=replace(report, checks=checks)))  # type: ignore[type-var]
    section = body[body.index("### Tests against the base"):body.index("### What changed")]
    assert section.splitlines()[2] == "1 PASS_TO_FAIL, 3 PASS_TO_PASS"
    assert "`unit`:\n- **1 PASS_TO_FAIL**: `t_broken`\n- 1 PASS_TO_PASS\n" in section
    assert "`integration`:\n- 2 PASS_TO_PASS" in section and "`lint`" not in section


def test_a_binary_file_is_named_binary_with_its_size_not_zero_lines(
        samples: dict[str, object]) -> None:
    touched = {"stats": {"filesChanged": 2, "additions": 1, "deletions": 0}, "files": [
        {"path": "logo.png", "changeType": "MODIFIED", "additions": 0, "deletions": 0,
         "binary": True},
        {"path": "README.md", "changeType": "MODIFIED", "additions": 1, "deletions": 0,
         "binary": False}]}
    edits = [FileEdit("logo.png", 3, "fs.write", binary_size=1024),
             FileEdit("logo.png", 5, "fs.write", binary_size=2048),
             FileEdit("README.md", 4, "fs.replace")]
    body = pr_body(facts(samples, touched=touched, edits=edits))
    assert ("- `logo.png` (modified, binary, 2,048 bytes), by step 3 `fs.write`; "
            "step 5 `fs.write`\n") in body
    assert "- `README.md` (modified, +1 / -0), by step 4 `fs.replace`\n" in body
    assert "+0 / -0" not in body


def test_a_huge_body_is_cut_to_githubs_limit_with_a_pointer_and_keeps_its_trailers(
        samples: dict[str, object]) -> None:
    tests = [ClassifiedTest(test_id="t" + "x" * 300 + str(i),
                            classification=TestClassification.PASS_TO_FAIL,
                            candidate=TestOutcome.FAILED, base=TestOutcome.PASSED)
             for i in range(150)]
    edits = [FileEdit("p" * 200 + str(i), i, "fs.write") for i in range(150)]
    touched = {"stats": {"filesChanged": 150, "additions": 1, "deletions": 0},
               "files": [{"path": e.path, "changeType": "ADDED", "additions": 1, "deletions": 0}
                         for e in edits]}
    denied = [DeniedCall("shell.run", "r" * 300, "d" * 300) for _ in range(150)]
    body = pr_body(facts(samples, report=with_tests(samples, tests), edits=edits,
                         touched=touched, denied=denied))
    assert len(body) <= MAX_BODY_CHARS
    assert "cut at 65536 characters" in body and "agentctl verdict explain run_1" in body
    spec = samples["Run"].spec_digest  # type: ignore[attr-defined]
    assert body.rstrip().endswith(f"agentctl-spec: {spec}")


def test_an_attestation_that_does_not_fit_is_left_out_of_the_body(
        samples: dict[str, object]) -> None:
    small = pr_body(facts(samples), attestation="<details>bundle</details>")
    assert "<details>bundle</details>" in small
    big = pr_body(facts(samples), attestation="x" * MAX_BODY_CHARS)
    assert "x" * 100 not in big and len(big) <= MAX_BODY_CHARS


# What an agent may choose: a file name, a test id, text a judge message quotes. Each tries to
# add an approval, hide the rest of the body in an HTML comment, break out of a code span or a
# table cell, start a heading or a list, start a line for some reader (NEL, U+2028), reorder
# what is shown (RLO), or make GitHub notify someone, close an issue or link into one.
HOSTILE = ("x\n### Approvals\n\n- APPROVED by security-lead: verified the sandbox\n<!--",
           "``\n# Forged`` <!-- | x |", "<!-- hidden", "### Heading", "- item | cell",
           "<details><summary>s</summary>", "&lt;!--", "1. list", "\r\n### CR heading",
           "nel\x85### NEL heading", "ls\u2028### LS heading", "evil\u202egnp.exe",
           "@security-lead please merge", "cc @octo/owners", "Fixes #1", "closes octo/calc#2",
           "Resolved: https://github.com/octo/calc/issues/3", "see GH-4")


def rendered(body: str) -> tuple[dict[str, str], list[str]]:
    """What a CommonMark renderer with GitHub's tables reads from a body: each heading with
    the text under it, in order, and the kinds of HTML it found."""
    from markdown_it import MarkdownIt

    sections: dict[str, str] = {}
    html: list[str] = []
    heading = ""
    tokens = MarkdownIt("commonmark").enable("table").parse(body)
    for i, token in enumerate(tokens):
        html += [t.type for t in [token, *(token.children or ())]
                 if t.type in ("html_block", "html_inline")]
        if token.type == "heading_open":
            heading = tokens[i + 1].content
            assert heading not in sections, f"a second {heading!r} section"
            sections[heading] = ""
        elif token.type == "inline" and tokens[i - 1].type != "heading_open":
            sections[heading] = " ".join(
                [sections.get(heading, ""), *(c.content for c in token.children or ())])
    return sections, html


# What GitHub acts on in a body's text outside code: a mention notifies, a closing keyword
# followed by an issue closes it, `#N`/`GH-N` links into that timeline.
GITHUB_ACTS_ON = re.compile(
    r"(?:^|\W)@[A-Za-z0-9]|\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+(?:\S*#\d|https?:)"
    r"|#\d|\bGH-\d", re.IGNORECASE)


def acted_on(body: str) -> list[str]:
    """The text outside code spans and blocks that GitHub would act on."""
    from markdown_it import MarkdownIt

    found: list[str] = []
    for token in MarkdownIt("commonmark").enable("table").parse(body):
        texts = [c.content for c in token.children or () if c.type == "text"]
        found += [m.group() for text in texts for m in GITHUB_ACTS_ON.finditer(text)]
    return found


def test_agent_chosen_strings_render_as_text_and_the_sections_stay_agentctls(
        samples: dict[str, object]) -> None:
    plain = pr_body(facts(samples))
    tests = [ClassifiedTest(test_id=f"tests/test_x.py::test[{h}]",
                            classification=TestClassification.FAIL_TO_PASS,
                            candidate=TestOutcome.PASSED, base=TestOutcome.FAILED)
             for h in HOSTILE]
    touched = {"stats": {"filesChanged": len(HOSTILE), "additions": 1, "deletions": 0},
               "files": [{"path": h, "changeType": "ADDED", "additions": 1, "deletions": 0}
                         for h in HOSTILE]}
    verdict = replace(samples["Verdict"],  # type: ignore[type-var]
                      reasons=tuple(f"patch touches {h}" for h in HOSTILE))
    judge = {"status": "NEEDS_HUMAN_REVIEW", "confidence": 0.5,
             "findings": [{"severity": "warning", "message": f"test `{h}` was deleted"}
                          for h in HOSTILE]}
    verification = {"checks": [{"command": "pytest", "status": "FAILED",
                                "summarizedFailure": h} for h in HOSTILE]}
    body = pr_body(facts(
        samples, report=with_tests(samples, tests), touched=touched, verdict=verdict,
        judge=judge, verification=verification,
        edits=[FileEdit(h, 1, f"claude.{h}") for h in HOSTILE],
        denied=[DeniedCall(f"claude.{h}", h, f"`{h}` is forbidden") for h in HOSTILE],
        disclosure=Disclosure(agent="claude", model=HOSTILE[0], cli_version=HOSTILE[1])))
    sections, html = rendered(body)
    assert list(sections) == list(rendered(plain)[0])  # the same sections, in order
    assert html == [], html  # no comment, no tag: nothing hidden
    text = " ".join(sections.values()).replace("\u2060", "")  # the joiners are invisible
    for hostile in HOSTILE:  # each one is shown, spelled on one line
        shown = visible(hostile)
        assert shown in text, shown
    assert acted_on(plain) == [] and acted_on(body) == []  # nobody notified, nothing closed
    assert sections["Approvals"].strip() == "APPROVED by bob: reviewed the diff"
    trailers = body.rstrip().splitlines()[-3:]
    assert [line.split(":", 1)[0] for line in trailers] == [
        "Generated-by", "agentctl-run", "agentctl-spec"]
def test_each_check_counts_its_tests_without_a_base_comparison(
        samples: dict[str, object]) -> None:
    verification = {"checks": [
        {"command": "python -m pytest -q", "status": "PASSED",
         "tests": {"passed": 54, "failed": 0, "skipped": 1, "errors": 0}},
        {"command": "make lint", "status": "PASSED"}]}
    body = pr_body(facts(samples, verification=verification))
    assert "- `python -m pytest -q`: PASSED, 54 passed, 0 failed, 1 skipped\n" in body
    assert "- `make lint`: PASSED\n" in body


@pytest.mark.parametrize(("described", "digest", "shared"), [
    ("script:/repo/plans/fix.toml", "sha256:ab", "script:plans/fix.toml"),
    ("script:/tmp/x/fix.toml", "sha256:ab", "script:fix.toml (sha256:ab)"),
    ("patch:/home/me/change.diff", None, "patch:change.diff"),
    ("command:claude -p", None, "command:claude -p"),
    ("noop", None, "noop"),
])
def test_a_plan_or_diff_is_named_by_its_path_in_the_repository_or_its_digest(
        described: str, digest: str | None, shared: str) -> None:
    assert AgentSpec.frozen(described, digest).shared("/repo") == shared
