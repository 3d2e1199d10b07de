"""A run in formats other tools already open: CTRF (Common Test Report Format, one test per
test its runner named, else one per check) and ATIF (Harbor's Agent Trajectory Interchange Format, one step per tool call).

Both read the run page's value, so `--public` filters them the same way.
"""

from __future__ import annotations

import json
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from agentctl.cli.run_page import RunPage
from agentctl.domain.verification import TestReport

Document = dict[str, Any]
ATIF_VERSION = "ATIF-v1.4"
_CTRF_STATUS = {"PASSED": "passed", "FAILED": "failed", "SKIPPED": "skipped",
                "SKIPPED_BY_POLICY": "skipped", "NOT_RUN": "pending"}


def _millis(text: str | None) -> int:
    if not text:
        return 0
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def ctrf(page: RunPage) -> str:
    checks = (page.verdict or {}).get("classification") or []
    tests: list[Document] = []
    for check in checks:
        report = page.tests.get(check["check"])
        if report is not None:
            tests += _ctrf_tests(check, report)
            continue
        extra: Document = {"command": check["command"], "tests": check["tests"]}
        if check["classification"]:
            extra["classification"] = check["classification"]
        if check["classifiedTests"]:
            extra["classifiedTests"] = check["classifiedTests"]
        tests.append({"name": check["check"], "status": _CTRF_STATUS.get(check["status"], "other"),
                      "duration": _ms(check.get("durationSeconds")), "suite": page.run["runId"],
                      "extra": extra})
    steps = [s for a in page.run["attempts"] for s in a["steps"]]
    start = min((_millis(s["startedAt"]) for s in steps), default=0)
    stop = max((_millis(s["endedAt"] or s["startedAt"]) for s in steps), default=0)
    summary = {"tests": len(tests), **{k: sum(t["status"] == k for t in tests)
               for k in ("passed", "failed", "pending", "skipped", "other")},
               "start": start, "stop": stop}
    verdict = page.verdict or {}
    document = {"reportFormat": "CTRF", "specVersion": "0.0.0",
                "results": {"tool": {"name": "agentctl"}, "summary": summary, "tests": tests,
                            "extra": {"runId": page.run["runId"],
                                      "verdict": verdict.get("status"),
                                      "prEligibility": verdict.get("prEligibility")}}}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _ctrf_tests(check: Document, report: TestReport) -> list[Document]:
    """One CTRF test per test the check's runner named, with its duration and its class."""
    classes = {t["testId"]: t["classification"] for t in check["classifiedTests"]}
    tests = []
    for result in report.results:
        test: Document = {"name": result.test_id,
                          "status": _CTRF_STATUS.get(result.outcome.value, "failed"),
                          "duration": _ms(result.duration_seconds), "suite": check["check"]}
        if result.message:
            test["message"] = result.message
        extra: Document = {"outcome": result.outcome.value}
        if result.test_id in classes:
            extra["classification"] = classes[result.test_id]
        test["extra"] = extra
        tests.append(test)
    return tests


def _ms(seconds: float | None) -> float:
    """Milliseconds to the microsecond: most unit tests take less than one, and a whole number
    would give them all 0 (CTRF's duration is any number)."""
    return round(seconds * 1000, 3) if seconds else 0


def atif(page: RunPage) -> str:
    spec = page.run["executionSpec"]
    steps: list[Document] = [{"step_id": 1, "timestamp": page.run["createdAt"],
                              "source": "user", "message": page.task.get("instruction", "")}]
    for attempt in page.run["attempts"]:
        for step in attempt["steps"]:
            entry: Document = {"step_id": len(steps) + 1, "timestamp": step["startedAt"],
                               "source": "agent" if step["type"] in (
                                   "TOOL_CALL", "MODEL_PLANNING") else "system",
                               "message": step["title"],
                               "extra": {"attemptNumber": attempt["attemptNumber"],
                                         "stepType": step["type"], "status": step["status"]}}
            call = step.get("toolCall")
            if call is not None:
                try:
                    arguments = json.loads(call["argumentsJson"])
                except ValueError:
                    arguments = {"raw": call["argumentsJson"]}
                entry["tool_calls"] = [{"tool_call_id": call["toolCallId"],
                                        "function_name": call["toolName"],
                                        "arguments": arguments}]
                result = call.get("result") or {}
                content = call["denialReason"] if call["decision"] != "ALLOWED" \
                    else result.get("output", "")
                entry["observation"] = {"results": [{"source_call_id": call["toolCallId"],
                                                     "content": content or ""}]}
                entry["extra"].update(decision=call["decision"], matchedRule=call["matchedRule"])
            steps.append(entry)
    final: Document = {"total_steps": len(steps)}
    if page.spend.cost_usd is not None:
        final["total_cost_usd"] = page.spend.cost_usd
    verdict = page.verdict or {}
    document = {"schema_version": ATIF_VERSION, "session_id": page.run["runId"],
                "agent": {"name": "agentctl", "version": _version(),
                          "extra": {"agent": spec.get("agent")}},
                "steps": steps, "final_metrics": final,
                "extra": {"verdict": verdict.get("status"),
                          "prEligibility": verdict.get("prEligibility"),
                          "reasons": verdict.get("reasons", []),
                          "specDigest": page.run["specDigest"]}}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _version() -> str:
    try:
        return version("agentctl")
    except PackageNotFoundError:
        return "0"
