"""A run's recorded model exchanges as a cassette: what a replay's gateway answers from.

A live request is matched to a recording by its normalised form: the `model`, the
conversation (`messages` for Anthropic and Chat Completions, `input` for Responses) and the
`tools`, with the recorded attempt's directory written as `{attempt}` on both sides (the
workspace and the agent's home live there and differ between runs). Everything else — headers,
ids, `metadata`, `system`/`instructions` (which carry the date and the host), `stream`,
sampling settings — is ignored. Secrets are redacted on both sides before they are compared:
a stored exchange was redacted, so a live request holding the secret still matches it, and a
recorded answer that held one is replayed redacted.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field

from agentctl.domain.redaction import Redactor

COMPARED = ("model", "messages", "input", "tools")
ATTEMPT = "{attempt}"


@dataclass(frozen=True, slots=True)
class Recording:
    """One recorded model exchange: the request as stored (JSON) and the response bytes."""

    path: str
    status: int
    request: object
    response: str


def normalised(request: object, attempt_dir: str, redactor: Redactor = Redactor()) -> str:
    """The compared part of a request, as canonical indented JSON (for equality and diffs)."""
    fields = request if isinstance(request, dict) else {"body": request}
    kept = {key: fields[key] for key in COMPARED if key in fields}
    # each line of a long string on a line of its own: a diff then shows the line that changed
    text = json.dumps(kept, sort_keys=True, indent=1, ensure_ascii=False)
    text = text.replace("\\n", "\\n\n")
    if attempt_dir:
        text = text.replace(attempt_dir, ATTEMPT)
    return redactor.clean(text)


def request_diff(recorded: str, live: str) -> str:
    """A unified diff of two normalised requests: the recording first."""
    lines = difflib.unified_diff(recorded.splitlines(), live.splitlines(), "recorded",
                                 "replayed", lineterm="", n=2)
    return "\n".join(lines)


@dataclass
class Cassette:
    """The recordings of one run, consumed as they are answered."""

    recordings: list[Recording]
    attempt_dir: str  # the recorded attempt's directory, as its requests name it
    problem: str = ""  # why a request went unanswered, once one did
    _used: set[int] = field(default_factory=set)

    def answer(self, request: object, attempt_dir: str) -> tuple[Recording | None, str]:
        """The first unused recording whose normalised request equals this one's, its
        response with this attempt's directory in place of the recorded one; or None and the
        diff against the next unused recording (none left: says so)."""
        live = normalised(request, attempt_dir)
        for index, recording in enumerate(self.recordings):
            if index in self._used:
                continue
            if normalised(recording.request, self.attempt_dir) == live:
                self._used.add(index)
                response = recording.response.replace(self.attempt_dir, attempt_dir) \
                    if self.attempt_dir and attempt_dir else recording.response
                return Recording(recording.path, recording.status, recording.request,
                                 response), ""
        following = [r for i, r in enumerate(self.recordings) if i not in self._used]
        if not following:
            self.problem = (f"model request {len(self._used) + 1} was never recorded: the "
                            f"recorded run made {len(self.recordings)} model requests")
            return None, self.problem
        expected = normalised(following[0].request, self.attempt_dir)
        self.problem = (f"model request {len(self._used) + 1} does not match its recording:\n"
                        + request_diff(expected, live))
        return None, self.problem

    @property
    def used(self) -> int:
        return len(self._used)
