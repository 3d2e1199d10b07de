"""An external judge: a command that reads the case as JSON on stdin and prints a JudgeReport.

Whatever it does, it cannot crash a run: invalid output, a non-zero exit or a timeout make the
judgement INCONCLUSIVE with the reason, which sends the run to a human.

Output schema (exactly one JSON object on stdout, and nothing else on stdout or stderr):
    {"status": "PASSED" | "PASSED_WITH_WARNINGS" | "FAILED" | "NEEDS_HUMAN_REVIEW" | "INCONCLUSIVE",
     "confidence": 0.0-1.0,
     "findings": [{"severity": "INFO"|"WARNING"|"ERROR"|"CRITICAL", "category": str,
                   "message": str, "filePath": str?, "lineNumber": int?, "blocksAutoPr": bool?}],
     "summary": str?}
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from agentctl.domain.enums import JudgeStatus, Severity, choices
from agentctl.domain.judge import JudgeFinding, Judgement
from agentctl.execution.process import Confiner, run_to_file

MAX_OUTPUT_BYTES = 1024 * 1024


class InvalidJudgement(ValueError):
    """The judge's output does not follow the schema."""


def run_external_judge(command: str, case: Mapping[str, object], *, cwd: Path,
                       env: Mapping[str, str], timeout: float,
                       should_stop: Callable[[], bool] | None = None,
                       confine: Confiner | None = None, scratch: Path | None = None
                       ) -> Judgement:
    """The judge's verdict on `case`; its output is kept in a folder under `scratch` (the
    attempt's own, so a worker killed mid-judgement leaves nothing the sweep does not find)."""
    with tempfile.TemporaryDirectory(prefix="agentctl-judge-", dir=scratch) as scratch_dir:
        scratch = Path(scratch_dir)
        output = scratch / "judge.out"
        result = run_to_file(command, cwd=cwd, env=env, output=output, timeout=timeout,
                             should_stop=should_stop, stdin=json.dumps(case).encode(),
                             confine=confine)
        with output.open("rb") as reader:
            text = reader.read(MAX_OUTPUT_BYTES).decode("utf-8", errors="replace")
    if result.timed_out:
        return inconclusive(f"the external judge timed out after {timeout:g}s")
    if result.exit_code != 0:
        return inconclusive(f"the external judge exited with {result.exit_code}: "
                            f"{_last_line(text)}")
    try:
        return parse_judgement(text)
    except InvalidJudgement as error:
        return inconclusive(f"the external judge's output is invalid: {error}")


def inconclusive(reason: str) -> Judgement:
    return Judgement(status=JudgeStatus.INCONCLUSIVE, confidence=0.0, summary=reason,
                     findings=(JudgeFinding(severity=Severity.WARNING, category="judge",
                                            message=reason, blocks_auto_pr=True),))


def parse_judgement(text: str) -> Judgement:
    """The judge's output is exactly one JSON report (whitespace around it aside), never a
    report picked out of other lines: a judge that echoes the diff after its report, or
    instead of one, must not let a line of the diff stand in for the report. Its stderr
    shares the output, so a judge logs nothing else."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        reports = sum(1 for line in text.splitlines() if _is_object(line))
        raise InvalidJudgement(
            f"expected exactly one JSON report and nothing else, found {reports} JSON "
            f"object line{'s' if reports != 1 else ''} among other output" if reports else
            f"not JSON ({error.msg})") from None
    if not isinstance(document, dict):
        raise InvalidJudgement("expected a JSON object")
    status = _enum(JudgeStatus, document.get("status"), "status")
    confidence = document.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) \
            or not 0 <= confidence <= 1:
        raise InvalidJudgement("confidence must be a number between 0 and 1")
    findings = document.get("findings", [])
    if not isinstance(findings, list):
        raise InvalidJudgement("findings must be a list")
    summary = document.get("summary")
    return Judgement(status=status, confidence=float(confidence),
                     findings=tuple(_finding(f, n) for n, f in enumerate(findings, start=1)),
                     summary=summary if isinstance(summary, str) else None)


def _finding(item: object, number: int) -> JudgeFinding:
    if not isinstance(item, dict):
        raise InvalidJudgement(f"finding {number} is not an object")
    message, category = item.get("message"), item.get("category", "external")
    if not isinstance(message, str) or not isinstance(category, str):
        raise InvalidJudgement(f"finding {number} needs a string message and category")
    line, path = item.get("lineNumber"), item.get("filePath")
    if line is not None and (isinstance(line, bool) or not isinstance(line, int)):
        raise InvalidJudgement(f"finding {number}: lineNumber must be an integer")
    if path is not None and not isinstance(path, str):
        raise InvalidJudgement(f"finding {number}: filePath must be a string")
    return JudgeFinding(severity=_enum(Severity, item.get("severity"), f"finding {number} severity"),
                        category=category, message=message, file_path=path, line_number=line,
                        blocks_auto_pr=bool(item.get("blocksAutoPr", False)))


def _is_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def _enum(enum: type, value: object, what: str):  # type: ignore[no-untyped-def]
    try:
        return enum(value)
    except ValueError:
        raise InvalidJudgement(f"{what} must be one of {choices(enum)}, got {value!r}") from None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"
