"""`PROVIDER/MODEL` as opencode names a model (`--agent opencode:anthropic/claude-sonnet-4-5`):
the provider says which vendor API agentctl's gateway speaks for it, so only the providers the
gateway meters are accepted."""

from __future__ import annotations

from agentctl.domain.agent import ModelApi

PROVIDERS = {"anthropic": ModelApi.ANTHROPIC, "openai": ModelApi.OPENAI}
DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"


def provider_model(text: str) -> tuple[ModelApi, str]:
    """The vendor API and the model name of `PROVIDER/MODEL` (empty: the default);
    ValueError, one line, for anything else."""
    provider, slash, model = (text or DEFAULT_MODEL).partition("/")
    if not slash or not provider or not model.strip() or any(c.isspace() for c in text):
        raise ValueError(f"{text!r} is not PROVIDER/MODEL")
    api = PROVIDERS.get(provider)
    if api is None:
        raise ValueError(f"provider {provider!r} is not one agentctl's gateway speaks "
                         f"(expected {' or '.join(PROVIDERS)})")
    return api, model
