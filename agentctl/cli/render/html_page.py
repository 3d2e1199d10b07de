"""The run page: one self-contained HTML file a reviewer opens in any browser.

No script, no font, no request: styles are inline, the timeline is inline SVG, long texts fold
into `<details>`, and a Content-Security-Policy forbids the page any fetch, so it stays readable
offline and in a mail attachment. Built with `html.escape` and string joins: the page is a few
fixed sections, not a template language's job.
"""

from __future__ import annotations

import json
from datetime import datetime
from html import escape
from typing import Any

from agentctl.cli.render.classes import by_class
from agentctl.cli.render.diff_html import diff_html
from agentctl.cli.render.timeline import step_class, timeline_svg
from agentctl.cli.run_page import EmbeddedText, RunPage
from agentctl.domain.agent_text import spelled_out

Document = dict[str, Any]
ARGUMENTS_CHARS = 300
OUTPUT_CHARS = 2000

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:16px;color:#1b1f24}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;border-bottom:1px solid #d0d7de;
padding-bottom:4px;margin-top:28px}h3{font-size:14px;margin:12px 0 4px}
code,pre{font:12px/1.4 ui-monospace,monospace}pre{white-space:pre-wrap;word-break:break-all;
margin:0}.muted{color:#57606a}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #eaeef2;padding:3px 6px;text-align:left;vertical-align:top}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;
background:#eaeef2}.good{background:#dafbe1;color:#116329}.bad{background:#ffebe9;color:#a40e26}
.warn{background:#fff8c5;color:#7d4e00}.band{fill:#f6f8fa;stroke:#d0d7de}
.retried .band{fill:#fff8c5}.band-label,.axis{font-size:11px;fill:#57606a}.bar-label{font-size:10px;fill:#1b1f24}
.bar.ok{fill:#2da44e}.bar.failed{fill:#cf222e}.bar.denied{fill:#8250df}.bar.skipped{fill:#afb8c1}
.bar.open{fill:#bf8700}tr.denied{background:#fbefff}tr.failed{background:#ffebe9}
.mark{font-weight:700}.link{border:1px solid #d0d7de;border-radius:6px;padding:6px 10px;
margin:6px 0}.link.passed{border-left:6px solid #2da44e}.link.failed{border-left:6px solid #cf222e}
.link.pending{border-left:6px solid #afb8c1}
.tag{display:inline-block;font-size:11px;background:#ddf4ff;color:#0a3069;border-radius:4px;
padding:0 5px;margin-left:4px}.tag.none{background:#eaeef2;color:#57606a}
.tag.forbidden{background:#ffebe9;color:#82071e;font-weight:600}
.diff .add{background:#dafbe1;display:block}.diff .del{background:#ffebe9;display:block}
.diff .ctx{display:block}.hunk{border:1px solid #d0d7de;border-radius:4px;margin:4px 0 10px}
.hunk-head{background:#f6f8fa;padding:2px 6px}.hunk pre{padding:2px 6px}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 12px;margin:0}
dt{color:#57606a}dd{margin:0;min-width:0}td,dd,code,summary,li{overflow-wrap:anywhere}.timeline{max-width:100%;height:auto}.failure code{color:#a40e26;font-weight:600}
.check{margin-top:10px}.class{margin:4px 0 4px 12px}.tests{margin:2px 0}
.compact{margin:2px 0;padding-left:18px}.compact li{margin:1px 0}
"""
GOOD = {"SUCCESS", "ELIGIBLE_FOR_AUTO_PR", "PASSED", "COMPLETED", "SUCCEEDED", "ALLOWED",
        "PASS_TO_PASS", "FAIL_TO_PASS"}
WARN = {"SUCCESS_NEEDS_REVIEW", "ELIGIBLE_AFTER_HUMAN_APPROVAL", "DRAFT_ONLY", "INCONCLUSIVE",
        "NEEDS_APPROVAL", "SKIPPED", "FLAKY"}


def badge(value: object) -> str:
    text = str(value)
    kind = "good" if text in GOOD else "warn" if text in WARN else "bad" \
        if text.startswith(("FAIL", "DENIED", "NOT_", "PASS_TO_")) or text in (
            "CANCELLED", "EXPIRED", "TIMED_OUT", "INFRA_FAILURE", "LEASE_EXPIRED") else ""
    return f'<span class="badge {kind}">{escape(text)}</span>'


def run_page_html(page: RunPage) -> str:
    run, verdict, task = page.run, page.verdict, page.task
    title = f"{run['runId']} · {verdict['status'] if verdict else run['status']}"
    sections = [
        _header(page),
        "<h2>Timeline</h2>", timeline_svg(run["attempts"]), _legend(),
        "<h2>Verdict chain</h2>", _chain(verdict, page.logs),
        "<h2>Tests against the base</h2>", _tests(verdict),
        "<h2>Diff</h2>", _diff(page),
        "<h2>Steps, tool calls and artifacts</h2>", _tree(run["attempts"]),
        "<h2>Spend</h2>", _spend(page),
        "<h2>Sandbox</h2>", _sandbox(run["executionSpec"].get("sandbox") or {}),
    ]
    scope = "public: only SAFE_FOR_PUBLIC_LOG content" if page.public else \
        "internal: for the requester and reviewers"
    return spelled_out(  # a bidi override in a diff line or an argument shows as such
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        + "".join(sections)
        + f'<p class="muted">agentctl run page · {escape(scope)} · task '
        f'{escape(str(task.get("taskId")))}</p></body></html>\n'
    )


def _header(page: RunPage) -> str:
    run, verdict, task = page.run, page.verdict, page.task
    lines = [f'<h1>{escape(str(task.get("title") or task.get("instruction", ""))[:200])}</h1>',
             f'<p class="muted"><code>{escape(run["runId"])}</code> · run #{run["number"]} of '
             f'<code>{escape(run["taskId"])}</code> · spec <code>'
             f'{escape(str(run["specDigest"])[:19])}</code></p>', "<dl>",
             f'<dt>intent</dt><dd>{escape(str(task.get("taskType")))} '
             f'({escape(str(task.get("autonomyLevel")))}): '
             f'{escape(str(task.get("instruction", "")))}</dd>',
             f'<dt>repository</dt><dd><code>{escape(str(task.get("repository")))}</code> at '
             f'<code>{escape(str(run.get("baseCommit") or "-")[:12])}</code></dd>',
             f'<dt>run</dt><dd>{badge(run["status"])}</dd>']
    if verdict is None:
        lines.append('<dt>verdict</dt><dd id="verdict">none yet</dd>')
    else:
        lines += [f'<dt>verdict</dt><dd id="verdict">{badge(verdict["status"])}</dd>',
                  f'<dt>eligibility</dt><dd id="eligibility">{badge(verdict["prEligibility"])}'
                  "</dd>",
                  "<dt>reasons</dt><dd>" + _reasons(verdict["reasons"]) + "</dd>",
                  "<dt>approvals</dt><dd>" + (_approvals(verdict["approvals"]) or "none")
                  + "</dd>"]
    if run.get("failureSummary"):
        lines.append(f'<dt>failure</dt><dd>{escape(run["failureSummary"])}</dd>')
    lines.append("</dl>")
    return "".join(lines)


def _approvals(approvals: list[Document]) -> str:
    return "<ul>" + "".join(
        f"<li>{badge(a['decision'])} by {escape(a['by'])}: {escape(a['reason'])} "
        f"<span class=\"muted\">{escape(a['createdAt'][:19])}</span></li>"
        for a in approvals) + "</ul>" if approvals else ""


def _legend() -> str:
    return ('<p class="muted"><svg width="10" height="10"><rect class="bar-key ok" width="10" '
            'height="10" fill="#2da44e"/></svg> succeeded · <svg width="10" height="10"><rect '
            'width="10" height="10" fill="#cf222e"/></svg> failed · <svg width="10" height="10">'
            '<rect width="10" height="10" fill="#8250df"/></svg> denied · yellow band: a '
            "retried attempt</p>")


def _artifact(a: Document) -> str:
    return (f'<code>{escape(a["name"])}</code> <span class="muted">{escape(a["type"])} · '
            f'sha256 {escape(a["sha256"][:12])} · {escape(a["visibility"])}</span>')


def _chain(verdict: Document | None, logs: dict[str, EmbeddedText]) -> str:
    if verdict is None:
        return '<p class="muted">no verdict yet</p>'
    out = []
    for link in verdict.get("chain") or []:
        state = _link_state(link, verdict)
        evidence = "".join(
            f"<li>{_artifact(a)}{_log(logs.get(a['artifactId']))}</li>"
            for a in link["evidence"])
        out.append(f'<div class="link {state}" data-check="{escape(link["check"])}">'
                   f'<span class="mark">{MARKS[state]}</span> '
                   f'<strong>{escape(link["check"])}</strong> {escape(str(link["detail"]))}'
                   + (f"<ul>{evidence}</ul>" if evidence else "") + "</div>")
    return "".join(out)


MARKS = {"passed": "✓", "failed": "✗", "pending": "…"}
AWAITS_APPROVAL = ("SUCCESS", "SUCCESS_NEEDS_REVIEW")


def _link_state(link: Document, verdict: Document) -> str:
    """passed, failed, or pending: an approval not given yet on a run that succeeded is the
    next step, not a failure, so its card stays neutral (a rejection is still a failure)."""
    if link["passed"]:
        return "passed"
    approvals = verdict.get("approvals") or []
    if link["check"] == "approvals" and verdict["status"] in AWAITS_APPROVAL and (
            not approvals or approvals[-1]["decision"] != "REJECTED"):
        return "pending"
    return "failed"


def _log(log: EmbeddedText | None) -> str:
    if log is None:
        return ""
    note = " (its end)" if log.truncated else ""
    return (f"<details><summary>show{note}</summary><pre>{escape(log.text)}</pre></details>")


SHOWN_TESTS = 10  # per class; the rest fold into a <details>
SHOWN_REASONS = 8


def _tests(verdict: Document | None) -> str:
    """Each check, then its tests grouped by class with counts, failures first: the first
    few of each class in the open, the rest (and every PASS_TO_PASS) folded."""
    checks = (verdict or {}).get("classification") or []
    if not checks:
        return '<p class="muted">no checks ran</p>'
    out = []
    for check in checks:
        out.append(f'<div class="check"><strong>{escape(check["check"])}</strong> '
                   f'{badge(check["status"])} '
                   f'{badge(check["classification"]) if check["classification"] else "-"} '
                   f'<code>{escape(check["command"])}</code></div>')
        for name, tests in by_class(check["classifiedTests"]):
            if name == "PASS_TO_PASS":
                out.append(f'<div class="class" data-class="{escape(name)}"><strong>'
                           f"{len(tests)}</strong> {badge(name)}<details><summary>all</summary>"
                           f"{_compact(tests)}</details></div>")
                continue
            shown = tests[:SHOWN_TESTS]
            rest = tests[len(shown):]
            out.append(f'<div class="class" data-class="{escape(name)}"><strong>{len(tests)}'
                       f"</strong> {badge(name)}" + _test_table(shown)
                       + (f"<details><summary>{'all' if not shown else f'{len(rest)} more'}"
                          f"</summary>{_test_table(rest)}</details>" if rest else "")
                       + "</div>")
    return "".join(out)


def _test_table(tests: list[Document]) -> str:
    if not tests:
        return ""
    return ('<table class="tests">' + "".join(
        f'<tr class="test"><td><code>{escape(t["testId"])}</code></td><td>'
        f'{escape(str(t["candidate"]))}</td><td class="muted">base: '
        f'{escape(str(t["base"] or "-"))}</td></tr>' for t in tests) + "</table>")


def _compact(tests: list[Document]) -> str:
    """Tests that passed on both sides, as names only, grouped under their file or class: one
    line per group instead of a row per test keeps a suite of thousands within a small page."""
    groups: dict[str, list[str]] = {}
    for test in tests:
        head, tail = _split_id(str(test["testId"]))
        groups.setdefault(head, []).append(tail)
    return '<ul class="compact">' + "".join(
        f'<li><code>{escape(head or "-")}</code> ({len(names)}): '
        f'{escape(", ".join(names))}</li>' for head, names in groups.items()) + "</ul>"


def _split_id(test_id: str) -> tuple[str, str]:
    """`tests/t.py::C::test_a[x]` into its file and class and `test_a[x]`; a unittest id
    `mod.Class.test_a` likewise at its last dot (never inside a parameter's brackets)."""
    stem = test_id.split("[", 1)[0]
    separator = "::" if "::" in stem else "."
    cut = stem.rfind(separator)
    if cut <= 0:
        return "", test_id
    return test_id[:cut], test_id[cut + len(separator):]


def _reasons(reasons: list[str]) -> str:
    items = [f"<li>{escape(r)}</li>" for r in reasons]
    rest = items[SHOWN_REASONS:]
    return ("<ul>" + "".join(items[:SHOWN_REASONS]) + "</ul>"
            + (f"<details><summary>{len(rest)} more reasons</summary><ul>{''.join(rest)}</ul>"
               "</details>" if rest else ""))


def _diff(page: RunPage) -> str:
    if page.diff is None:
        return ('<p class="muted">' + ("no patch, or none that may be shown here"
                                        if not page.public else
                                        "the patch is not SAFE_FOR_PUBLIC_LOG") + "</p>")
    edited_by = (page.verdict or {}).get("editedBy") or {}
    arguments = {s["toolCall"]["toolCallId"]: s["toolCall"]["argumentsJson"]
                 for a in page.run["attempts"] for s in a["steps"] if s.get("toolCall")}
    head = f'<p class="muted">{_artifact(page.diff.artifact)}' + (
        " (first part only)" if page.diff.truncated else "") + "</p>"
    return head + diff_html(page.diff.text, edited_by, arguments)


def _tree(attempts: list[Document]) -> str:
    out = []
    for attempt in attempts:
        out.append(f'<h3>attempt {attempt["attemptNumber"]} {badge(attempt["status"])} '
                   f'<span class="muted">{escape(attempt["attemptId"])}'
                   + (f' · {escape(attempt["failureCode"])}' if attempt.get("failureCode")
                      else "") + "</span></h3>")
        out.append("<table><tr><th>#</th><th>step</th><th>status</th><th>took</th>"
                   "<th>tool call · decision · rule</th><th>artifacts</th></tr>")
        for step in attempt["steps"]:
            out.append(_step_row(step))
        out.append("</table>")
    return "".join(out)


def _step_row(step: Document) -> str:
    call = step.get("toolCall")
    mark = step_class(step)
    cell = ""
    if call is not None:
        arguments = call["argumentsJson"] if call["argumentsJson"] != "{}" else ""
        cell = (f'<code>{escape(call["toolName"])}</code> {badge(call["decision"])} '
                f'<span class="rule">{escape(call.get("matchedRule") or "-")}</span>')
        if call.get("denialReason"):
            cell += f'<div class="denial">{escape(call["denialReason"])}</div>'
        if arguments:
            cell += f'<div class="muted"><code>{escape(_short(arguments, ARGUMENTS_CHARS))}' \
                    "</code></div>"
        output = (call.get("result") or {}).get("output")
        if output:
            cell += (f"<details><summary>output</summary><pre>"
                     f"{escape(_short(output, OUTPUT_CHARS))}</pre></details>")
    edited = "".join(f'<div class="muted">edited <code>{escape(str(c["path"]))}</code> '
                     f'(+{c.get("additions")} −{c.get("deletions")})</div>'
                     for c in step.get("changedFiles") or [])
    artifacts = "<br>".join(_artifact(a) for a in step["artifacts"])
    if step.get("outputTail"):  # why it failed: the exception line, then the output's end
        first, *rest = step["outputTail"]
        cell = (f'<div class="failure"><code>{escape(first)}</code></div>'
                + (f'<pre class="muted">{escape(chr(10).join(rest))}</pre>' if rest else "")
                + cell)
    return (f'<tr class="{mark}" data-step="{escape(step["stepId"])}"><td>'
            f'{step["sequenceNumber"]}</td><td>{escape(step["type"])}<div class="muted">'
            f'{escape(_short(step["title"], 120))}</div></td><td>{badge(step["status"])}'
            + (f'<div class="muted">{escape(step["failureCode"])}</div>'
               if step.get("failureCode") else "")
            + f"</td><td>{_took(step)}</td><td>{cell}{edited}</td><td>{artifacts}</td></tr>")


def _took(step: Document) -> str:
    if not step["startedAt"] or not step["endedAt"]:
        return "-"
    start = datetime.fromisoformat(step["startedAt"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(step["endedAt"].replace("Z", "+00:00"))
    return f"{(end - start).total_seconds():.2f}s"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more)"


def _spend(page: RunPage) -> str:
    spend, budget = page.spend, page.run.get("budget") or {}
    rows = [("attempts", f"{spend.attempts} of {budget.get('maxAttempts', '-')}"),
            ("steps", str(spend.steps)),
            ("tool calls", f"{spend.tool_calls} of {budget.get('maxToolCalls', '-')}"
                           f" ({spend.denied_calls} denied)"),
            ("tool output", f"{spend.output_bytes} bytes of "
                            f"{budget.get('maxOutputBytes', '-')}")]
    if spend.cost_usd is not None:
        rows.append(("cost", f"${spend.cost_usd:g}"
                     + (f" of ${budget['maxCostUsd']:g}" if budget.get("maxCostUsd") else "")))
    if spend.tokens is not None:
        rows.append(("tokens", f"{spend.tokens}"
                     + (f" of {budget['maxTokens']}" if budget.get("maxTokens") else "")))
    return "<dl>" + "".join(f"<dt>{k}</dt><dd>{escape(v)}</dd>" for k, v in rows) + "</dl>"


def _sandbox(profile: Document) -> str:
    if not profile:
        return '<p class="muted">no sandbox profile on record</p>'
    if profile.get("mode") == "off":
        return f'<p>{badge("OFF")} unsandboxed: the verdict needs a human approval</p>'
    return f"<pre>{escape(json.dumps(profile, indent=2, sort_keys=True))}</pre>"
