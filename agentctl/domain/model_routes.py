"""What the model gateway forwards: each vendor's API by method and exact path, and nothing else.

A path is compared as sent, never decoded or normalized (`/v1/messages/`, `/v1/messages;x`,
`/v1%2Fmessages` are other paths), so what reaches the vendor is exactly an endpoint the gateway
meters. An absolute-form target (`POST http://host/v1/messages`) or a Host other than the
gateway's own is refused too: a proxy upstream would follow either elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentctl.domain.agent import ModelApi
from agentctl.domain.enums import ToolDecision

MODEL_REQUEST = "model.request"  # the ToolCall a request the gateway refused becomes

# Under the base URL the CLI is given: Anthropic's includes no `/v1`, OpenAI's does. Neither
# Claude Code nor Codex lists models or counts tokens with OpenAI (traced), so those stay out.
ENDPOINTS: dict[ModelApi, tuple[tuple[str, str], ...]] = {
    ModelApi.ANTHROPIC: (("POST", "/v1/messages"), ("POST", "/v1/messages/count_tokens")),
    ModelApi.OPENAI: (("POST", "/responses"), ("POST", "/chat/completions")),
    ModelApi.GEMINI: (),  # every endpoint names its model: `MODEL_PATHS`
}
# Gemini's endpoints carry the model in the path (`/v1beta/models/MODEL:streamGenerateContent`):
# a model name of a safe charset only (never a `/`, `..`, `%` or `:`), one of these methods.
GEMINI_MODEL = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
MODEL_PATHS: dict[ModelApi, tuple[tuple[str, str], ...]] = {
    ModelApi.GEMINI: (("POST", rf"/v1beta/models/{GEMINI_MODEL}:streamGenerateContent"),
                      ("POST", rf"/v1beta/models/{GEMINI_MODEL}:generateContent")),
}
_QUERY = re.compile(r"[A-Za-z0-9_.~=&%+,-]*")  # `?beta=true`; never a `#` or a second `?`


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why the gateway answered a request itself instead of forwarding it."""

    status: int  # what the agent is answered
    decision: ToolDecision
    rule: str  # the matched rule, as recorded
    reason: str  # one line, for the agent and the record


class Routes:
    """One gateway's table: its vendor's endpoints under the upstream's path prefix, and the
    Host it answers to."""

    def __init__(self, api: ModelApi, prefix: str, host: str) -> None:
        self.api = api
        self.host = host
        self.allowed = frozenset((method, prefix + path) for method, path in ENDPOINTS[api])
        self._patterns = tuple((method, re.compile(re.escape(prefix) + pattern))
                               for method, pattern in MODEL_PATHS.get(api, ()))
        self._paths = frozenset(path for _, path in self.allowed)
        shown = [*(f"{method} {path}" for method, path in sorted(self.allowed)),
                 *(f"{method} {prefix}{pattern.replace(GEMINI_MODEL, '{model}')}"
                   for method, pattern in MODEL_PATHS.get(api, ()))]
        self._rule = f"gateway: {api.value} API (" + ", ".join(shown) + ")"

    def refusal(self, method: str, target: str, host: str | None) -> Refusal | None:
        """None when `method target` is one of the vendor's endpoints, sent to this gateway."""
        if not target.startswith("/") or target.startswith("//"):
            return self._refused(400, f"{method} {target[:200]}: only a path is forwarded, "
                                      "never an absolute-form target")
        if host != self.host:
            return self._refused(421, f"Host {str(host)[:200]!r} is not this gateway's "
                                      f"({self.host})")
        path, mark, query = target.partition("?")
        if (method, path) not in self.allowed and not any(
                method == allowed and pattern.fullmatch(path)
                for allowed, pattern in self._patterns):
            known = path in self._paths or any(pattern.fullmatch(path)
                                               for _, pattern in self._patterns)
            return self._refused(405 if known else 404,
                                 f"{method} {target[:200]} is not an endpoint of the "
                                 f"{self.api.value} API that agentctl meters")
        if mark and not _QUERY.fullmatch(query):
            return self._refused(400, f"{method} {target[:200]}: its query is not forwarded")
        return None

    def _refused(self, status: int, reason: str) -> Refusal:
        return Refusal(status, ToolDecision.DENIED_BY_POLICY, self._rule,
                       f"agentctl gateway: {reason}")


GUARD_NOT_LOADED = "the agent's guard did not load"  # the run's reason when it never armed
GUARD_RULE = "gateway: the agent's guard proves itself loaded before any model request"


def guard_refusal(why: str) -> Refusal:
    """A request before (or without) the proof that agentctl's guard is loaded in the CLI's
    process: never forwarded, so no tool call can follow unguarded."""
    return Refusal(403, ToolDecision.DENIED_BY_POLICY, GUARD_RULE,
                   f"agentctl gateway: {GUARD_NOT_LOADED}: {why}")


def budget_refusal(spent: str) -> Refusal:
    """Once a budget is spent, every further request (of any endpoint) is refused."""
    return Refusal(400, ToolDecision.DENIED_BY_BUDGET, f"budget: {spent}",
                   f"agentctl gateway: the budget is spent ({spent})")
