"""A run's recorded model exchanges as a cassette: what a replay's gateway answers from.

A live request is matched to a recording by its normalised form: the `model` (Gemini's, from
the request's path), the conversation (`messages` for Anthropic and Chat Completions, `input`
for Responses, `contents` for Gemini) and the `tools`, with the attempt's directory written as `{attempt}` and its id as `{attemptId}` on
both sides (the workspace and the agent's home are named by them and differ between runs),
without the `id` of each item (message ids the CLI makes up) and with what `VOLATILE` matches
in tool output written as `…`. Everything else — headers,
`metadata`, `system`/`instructions` (which carry the date and the host), `stream`,
sampling settings — is ignored. Secrets are redacted on both sides before they are compared:
a stored exchange was redacted, so a live request holding the secret still matches it, and a
recorded answer that held one is replayed redacted.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentctl.domain.lazy_regex import lazy_regex
from agentctl.domain.redaction import Redactor

COMPARED = ("model", "messages", "input", "contents", "tools")
ATTEMPT = "{attempt}"
ATTEMPT_ID = "{attemptId}"
# What an agent CLI itself writes into a request that differs on every run (Codex's exec
# output: a random chunk id and the wall time; Copilot's clock in each message, and the shell
# call as agentctl rewrote it, its tool jail's random token, in the history; Gemini CLI's shell
# output: the process group; its session context: the date), written as `…`.
VOLATILE = lazy_regex(r"(?<=Chunk ID: )[0-9a-f]+|(?<=Wall time: )[0-9.]+(?= seconds)"
                      r"|(?<=<current_datetime>)[^<]{1,64}(?=</current_datetime>)"
                      r"|(?<=/\.agentctl/calls/)[0-9a-f]{32}"
                      r"|(?<=Process Group PGID: )\d+|(?<=Today's date is )[^(\n]*(?=\()")
# Gemini names its model in the path (`/v1beta/models/MODEL:streamGenerateContent`)
_PATH_MODEL = lazy_regex(r"/models/([^/:?]+):")

Names = Mapping[str, str]  # what an attempt's requests name it by -> its placeholder


def attempt_names(directory: str, attempt_id: str) -> dict[str, str]:
    return {name: placeholder for name, placeholder in ((directory, ATTEMPT),
                                                         (attempt_id, ATTEMPT_ID)) if name}


def written(text: str, names: Names) -> str:
    """`text` with each name as its placeholder (the longest names first)."""
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, names[name])
    return text


@dataclass(frozen=True, slots=True)
class Recording:
    """One recorded model exchange: the request as stored (JSON) and the response bytes."""

    path: str
    status: int
    request: object
    response: str


_REDACTOR = Redactor()  # the default patterns: what both sides of a comparison redact


def normalised(request: object, names: Names, redactor: Redactor = _REDACTOR,
               path: str = "") -> str:
    """The compared part of a request, as canonical indented JSON (for equality and diffs);
    a model its `path` names counts as the request's own."""
    fields = request if isinstance(request, dict) else {"body": request}
    named = _PATH_MODEL().search(path)
    if named and "model" not in fields:
        fields = {**fields, "model": named.group(1)}
    kept = {key: _without_ids(fields[key]) for key in COMPARED if key in fields}
    # each line of a long string on a line of its own: a diff then shows the line that changed
    text = json.dumps(kept, sort_keys=True, indent=1, ensure_ascii=False)
    return redactor.clean(VOLATILE().sub("…", written(text.replace("\\n", "\\n\n"), names)))


def _without_ids(value: object) -> object:
    if isinstance(value, dict):
        return {key: _without_ids(item) for key, item in value.items() if key != "id"}
    if isinstance(value, list):
        return [_without_ids(item) for item in value]
    return value


def request_diff(recorded: str, live: str) -> str:
    """A unified diff of two normalised requests: the recording first."""
    lines = difflib.unified_diff(recorded.splitlines(), live.splitlines(), "recorded",
                                 "replayed", lineterm="", n=2)
    return "\n".join(lines)


@dataclass
class Cassette:
    """The recordings of one run, consumed as they are answered."""

    recordings: list[Recording]
    names: Names  # how the recorded attempt's requests name it (`attempt_names`)
    problem: str = ""  # why a request went unanswered, once one did
    _used: set[int] = field(default_factory=set)

    def answer(self, request: object, names: Names,
               path: str = "") -> tuple[Recording | None, str]:
        """The first unused recording whose normalised request equals this one's, its
        response naming this attempt (`names`) where it named the recorded one; or None and
        the diff against the next unused recording (none left: says so)."""
        live = normalised(request, names, path=path)
        for index, recording in enumerate(self.recordings):
            if index in self._used:
                continue
            if normalised(recording.request, self.names, path=recording.path) == live:
                self._used.add(index)
                now = {placeholder: name for name, placeholder in names.items()}
                response = written(recording.response, {
                    name: now[placeholder] for name, placeholder in self.names.items()
                    if placeholder in now})
                return Recording(recording.path, recording.status, recording.request,
                                 response), ""
        following = [r for i, r in enumerate(self.recordings) if i not in self._used]
        if not following:
            self.problem = (f"model request {len(self._used) + 1} was never recorded: the "
                            f"recorded run made {len(self.recordings)} model requests")
            return None, self.problem
        expected = normalised(following[0].request, self.names, path=following[0].path)
        self.problem = (f"model request {len(self._used) + 1} does not match its recording:\n"
                        + request_diff(expected, live))
        return None, self.problem

    @property
    def used(self) -> int:
        return len(self._used)
