"""The output of each failed step, for `run show --tree` and `verdict explain`: a failed tool
call's from its stored result, a failed check's from the end of its log artifact (read after its
hash checked, secrets redacted as `artifact show` does)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

from agentctl.domain.artifact import Artifact
from agentctl.domain.enums import ArtifactType, RedactionStatus
from agentctl.domain.output_tail import output_tail
from agentctl.domain.redaction import Redactor
from agentctl.domain.step import CANCELLED

LOG_TAIL_BYTES = 16 << 10  # where a check's failure is: its log's end
_DONE = ("SUCCEEDED", "STARTED")

OutputTails = Mapping[str, tuple[str, ...]]
"""By step id: the exception line and the last lines of a failed step's output."""


class StepOutput(NamedTuple):
    """Where a step's output is: its stored tool result (JSON text) or its log artifact."""

    step_id: str
    status: str
    result: str | None
    artifacts: Sequence[Artifact]
    workspace: str | None = None  # the attempt's private directory, where its paths point
    failure_code: str | None = None


class LogFiles(Protocol):
    """The artifact files a log is read from, each checked by its hash."""

    def verify(self, uri: str, sha256: str) -> str | None: ...
    def path_for(self, uri: str) -> Path: ...


def failure_tails(steps: Iterable[StepOutput], files: LogFiles | None) -> OutputTails:
    """Each failed step's output tail (steps whose output is not on record are left out)."""
    tails: dict[str, tuple[str, ...]] = {}
    for step in steps:
        if step.status in _DONE or step.failure_code == CANCELLED:
            continue  # a step a person stopped: its output's end says nothing about why
        text = _call_output(step.result)
        if text is None and files is not None:
            log = next((a for a in step.artifacts if a.type is ArtifactType.COMMAND_LOG), None)
            text = None if log is None else log_tail(files, log)
        tail = output_tail(text, workspace=step.workspace) if text else ()
        if tail:
            tails[step.step_id] = tail
    return tails


def _call_output(stored: str | None) -> str | None:
    if stored is None:
        return None
    result = json.loads(stored)
    output = result.get("output") if isinstance(result, dict) else None
    return output if isinstance(output, str) and output else None


def log_tail(files: LogFiles, artifact: Artifact, limit: int = LOG_TAIL_BYTES) -> str | None:
    """The last `limit` bytes of a log as text; None when its file does not match its hash."""
    if files.verify(artifact.uri, artifact.sha256) is not None:
        return None
    with files.path_for(artifact.uri).open("rb") as handle:
        if artifact.size_bytes > limit:
            handle.seek(artifact.size_bytes - limit)
        text = handle.read(limit).decode("utf-8", errors="replace")
    if artifact.size_bytes > limit:
        text = text.partition("\n")[2]  # the first line is cut
    if artifact.redaction_status is RedactionStatus.RAW:
        text = Redactor().clean(text)
    return text
