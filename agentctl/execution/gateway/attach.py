"""Putting the gateway between a native agent CLI and its model: which upstream and key it
forwards to (from agentctl's own environment and config), and what the CLI is given instead.

The CLI's environment loses every API key variable (and any variable holding the key's value,
whatever its name) and gets the gateway's base URL and a placeholder key: the real key is never
inside the sandbox.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

from agentctl.domain.agent import ModelApi, NativeAgentSettings
from agentctl.domain.cassette import Cassette, Names
from agentctl.domain.model_faults import DEFAULT_RETRIES, Retries
from agentctl.domain.model_prices import parse_prices
from agentctl.domain.provider_model import provider_model
from agentctl.execution.gateway.guard import Guard
from agentctl.execution.gateway.keys import URL_VARIABLES, without_keys
from agentctl.execution.gateway.replay import ReplayGateway
from agentctl.execution.gateway.server import Gateway, Limits

ANTHROPIC_API = "https://api.anthropic.com"
OPENAI_API = "https://api.openai.com/v1"
GEMINI_API = "https://generativelanguage.googleapis.com"
# Copilot CLI's own-provider mode, as agentctl gives it the gateway: an OpenAI Responses API
# (the protocol the gateway already meters for Codex).
COPILOT_PROVIDER = {"COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_WIRE_API": "responses"}


@dataclass(frozen=True, slots=True)
class Attached:
    gateway: Gateway
    env: dict[str, str]  # the CLI's: the gateway's base URL, a placeholder key
    settings: NativeAgentSettings


def attach(agent: str, given: Mapping[str, str], settings: NativeAgentSettings,
           budget: Mapping[str, object], *,
           source: Mapping[str, str] | None = None,
           cassette: Cassette | None = None, names: Names | None = None,
           guard: Guard | None = None) -> Attached:
    """Start the attempt's gateway for `agent` (claude, codex, copilot, gemini or opencode), and
    the environment its CLI gets instead of `given`; with a cassette, one that answers from it
    (a replay: no upstream, no key). With `guard`, nothing is forwarded before the CLI's guard
    proved itself loaded."""
    environ = dict(source if source is not None else os.environ)
    known = {**given, **environ}
    api = {"codex": ModelApi.OPENAI, "copilot": ModelApi.OPENAI,
           "gemini": ModelApi.GEMINI}.get(agent, ModelApi.ANTHROPIC)
    if agent == "opencode":  # the vendor its PROVIDER/MODEL names

        api = provider_model(settings.model)[0]
    if agent == "copilot":  # its own provider variables first, else OpenAI's
        upstream = known.get("COPILOT_PROVIDER_BASE_URL") or known.get("OPENAI_BASE_URL") \
            or OPENAI_API
        key = known.get("COPILOT_PROVIDER_API_KEY") or known.get("COPILOT_PROVIDER_BEARER_TOKEN") \
            or known.get("OPENAI_API_KEY")
    elif api is ModelApi.OPENAI:  # codex, or opencode with an OpenAI model
        upstream = settings.base_url or known.get("OPENAI_BASE_URL") or OPENAI_API
        key = known.get(settings.env_key) or known.get("OPENAI_API_KEY")
    elif agent == "gemini":
        upstream, key = _gemini_upstream(known)
    else:
        upstream = known.get("ANTHROPIC_BASE_URL") or ANTHROPIC_API
        key = known.get("ANTHROPIC_API_KEY") or known.get("ANTHROPIC_AUTH_TOKEN")
    if cassette is not None:
        key = None
        gateway: Gateway = ReplayGateway(cassette, names or {}, api=api, limits=_limits(budget),
                                         prices=parse_prices(settings.prices), guard=guard)
    else:
        gateway = Gateway(upstream, key, api=api, limits=_limits(budget),
                          prices=parse_prices(settings.prices), guard=guard,
                          retries=_retries(budget.get("modelTimeoutSeconds")))
    env = {name: value for name, value in without_keys(given, settings, key).items()
           if name not in URL_VARIABLES}
    if agent == "copilot":
        env.update(COPILOT_PROVIDER, COPILOT_PROVIDER_BASE_URL=gateway.base_url,
                   COPILOT_PROVIDER_API_KEY=gateway.placeholder)
    elif api is ModelApi.OPENAI:
        env["OPENAI_API_KEY"] = gateway.placeholder
        settings = replace(settings, base_url=gateway.base_url, env_key="OPENAI_API_KEY")
    elif agent == "gemini":
        env.update(GEMINI_API_KEY=gateway.placeholder, GOOGLE_GEMINI_BASE_URL=gateway.base_url)
    else:  # the placeholder in the variable the key came from: its header is the upstream's
        bearer = not known.get("ANTHROPIC_API_KEY") and bool(known.get("ANTHROPIC_AUTH_TOKEN"))
        env["ANTHROPIC_AUTH_TOKEN" if bearer else "ANTHROPIC_API_KEY"] = gateway.placeholder
        env["ANTHROPIC_BASE_URL"] = gateway.base_url
    return Attached(gateway, env, settings)


def _gemini_upstream(known: Mapping[str, str]) -> tuple[str, str | None]:
    """Gemini's API and key as its CLI would pick them (`GEMINI_API_KEY`, else
    `GOOGLE_API_KEY`), from agentctl's own environment."""
    return (known.get("GOOGLE_GEMINI_BASE_URL") or GEMINI_API,
            known.get("GEMINI_API_KEY") or known.get("GOOGLE_API_KEY"))


@dataclass(frozen=True, slots=True)
class CommandAttached:
    gateway: Gateway
    env: dict[str, str]  # the command's: the gateway's base URL, a placeholder key


def attach_command(api: ModelApi, env: Mapping[str, str], *, limits: Limits,
                   prices: tuple[str, ...], timeout_seconds: float | None = None,
                   source: Mapping[str, str] | None = None) -> CommandAttached:
    """Start the attempt's gateway for a `command:` agent speaking `api`: upstream and key
    from agentctl's own environment (`source`), the command's `env` given the gateway's base
    URL and a placeholder key instead. ValueError when the upstream is no http(s) URL."""
    known = {**env, **(source if source is not None else os.environ)}
    if api is ModelApi.OPENAI:
        upstream = known.get("OPENAI_BASE_URL") or OPENAI_API
        key = known.get("OPENAI_API_KEY")
    elif api is ModelApi.GEMINI:
        upstream, key = _gemini_upstream(known)
    else:
        upstream = known.get("ANTHROPIC_BASE_URL") or ANTHROPIC_API
        key = known.get("ANTHROPIC_API_KEY") or known.get("ANTHROPIC_AUTH_TOKEN")
    gateway = Gateway(upstream, key, api=api, limits=limits, prices=parse_prices(prices),
                      retries=_retries(timeout_seconds))
    given = {name: value for name, value in without_keys(env, key=key).items()
             if name not in (*URL_VARIABLES, "OPENAI_API_BASE")}
    if api is ModelApi.OPENAI:
        given.update(OPENAI_BASE_URL=gateway.base_url, OPENAI_API_BASE=gateway.base_url,
                     OPENAI_API_KEY=gateway.placeholder)
    elif api is ModelApi.GEMINI:
        given.update(GEMINI_API_KEY=gateway.placeholder, GOOGLE_GEMINI_BASE_URL=gateway.base_url)
    else:  # the placeholder in the variable the key came from: its header is the upstream's
        bearer = not known.get("ANTHROPIC_API_KEY") and bool(known.get("ANTHROPIC_AUTH_TOKEN"))
        given["ANTHROPIC_AUTH_TOKEN" if bearer else "ANTHROPIC_API_KEY"] = gateway.placeholder
        given["ANTHROPIC_BASE_URL"] = gateway.base_url
    return CommandAttached(gateway, given)


def budget_limits(max_tokens: int | None, max_cost_usd: float | None) -> Limits:
    """The gateway's limits from a run's budget (None or 0: no bound)."""
    return Limits(max_tokens=max_tokens or None, max_cost_usd=max_cost_usd or None)


def _retries(timeout_seconds: object) -> Retries:
    """The gateway's tries, under the run's `[gateway] timeout_seconds` (frozen into its budget;
    a run created before the key had none: the default)."""
    if isinstance(timeout_seconds, (int, float)) and timeout_seconds > 0:
        return replace(DEFAULT_RETRIES, timeout_seconds=float(timeout_seconds))
    return DEFAULT_RETRIES


def _limits(budget: Mapping[str, object]) -> Limits:
    tokens, cost = budget.get("maxTokens"), budget.get("maxCostUsd")
    return Limits(max_tokens=tokens if isinstance(tokens, int) and tokens > 0 else None,
                  max_cost_usd=float(cost) if isinstance(cost, (int, float)) and cost > 0
                  else None)


def gateway_report(claimed: Mapping[str, object], gateway: Gateway) -> dict[str, object]:
    """The COST_REPORT from the gateway's figures; the CLI's own claim kept beside them as a
    cross-check (`claimsAgree`: the same token counts)."""
    said = {key: claimed.get(key) for key in ("costUsd", "inputTokens", "outputTokens")}
    return {**claimed, "source": "gateway", "modelRequests": gateway.requests,
            "costUsd": round(gateway.cost_usd, 6), "inputTokens": gateway.input_tokens,
            "outputTokens": gateway.output_tokens, "totalTokens": gateway.tokens,
            "agentClaimed": said,
            "claimsAgree": said["inputTokens"] == gateway.input_tokens
            and said["outputTokens"] == gateway.output_tokens,
            "budgetStop": gateway.spent}


def claim_warnings(agent: str, report: Mapping[str, object]) -> tuple[str, ...]:
    """A judge warning when the CLI's own token counts disagree with the gateway's."""
    if report.get("claimsAgree") is not False:
        return ()
    said = report.get("agentClaimed")
    said = said if isinstance(said, dict) else {}
    return (f"{agent} claimed {said.get('inputTokens')} input and {said.get('outputTokens')} "
            f"output tokens; its model gateway measured {report.get('inputTokens')} and "
            f"{report.get('outputTokens')}",)
