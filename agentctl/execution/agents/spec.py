"""Agent specs (`script:PLAN.toml`, `patch:FILE.diff`, `command:CMD`, `noop`) and script plans.

A spec is checked before a run is created, so a malformed plan is one clear error and no run.
Files are pinned by digest: the run records the sha256 of the plan or diff it was given, and the
agent refuses to play a file that changed since.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

from agentctl.domain.agent import NATIVE_KINDS, AgentKind, AgentSpec
from agentctl.domain.errors import BadInput
from agentctl.domain.model_routes import GEMINI_MODEL
from agentctl.domain.provider_model import provider_model

if TYPE_CHECKING:
    from agentctl.execution.agents.script_plan import PlanStep


def parse_agent_spec(text: str, cwd: Path) -> AgentSpec:
    """What the user typed, checked (a plan is parsed, a file pinned by digest) before any run."""
    name, sep, value = text.strip().partition(":")
    if name == AgentKind.NOOP and not sep:
        return AgentSpec(AgentKind.NOOP)
    if name in NATIVE_KINDS:
        model = value.strip()
        if (sep and not model) or any(c.isspace() for c in model):
            raise BadInput(f"invalid agent spec {text!r}; expected {name} or {name}:MODEL")
        if name == AgentKind.GEMINI and model and not gemini_model(model):
            raise BadInput(f"invalid agent spec {text!r}: Gemini's model is part of its API's "
                           "path; expected letters, digits, '.', '_' and '-' (gemini-2.5-pro)")
        if name == AgentKind.OPENCODE and model:
            try:
                provider_model(model)
            except ValueError as error:
                raise BadInput(f"invalid agent spec {text!r}: {error}; expected "
                               "opencode:PROVIDER/MODEL") from None
        return AgentSpec(AgentKind(name), model)
    if name not in set(AgentKind) or not sep or not value.strip():
        raise BadInput(f"invalid agent spec {text!r}; expected script:PLAN.toml, patch:FILE.diff, "
                       "command:CMD, claude[:MODEL], codex[:MODEL], copilot[:MODEL], "
                       "gemini[:MODEL], opencode[:PROVIDER/MODEL] or noop")
    kind = AgentKind(name)
    if kind is AgentKind.COMMAND:
        return AgentSpec(kind, value.strip())
    path = Path(value).expanduser()
    path = path if path.is_absolute() else (cwd / path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise BadInput(f"cannot read {kind} file {path}: {error.strerror or error}") from None
    if kind is AgentKind.SCRIPT:
        load_plan(path, data)
    elif not data.strip():
        raise BadInput(f"patch file {path} is empty")
    elif b"\0" in data:  # git writes even binary changes as text (base85): this is no diff
        raise BadInput(f"patch file {path} is binary; expected a diff (git diff --binary)")
    return AgentSpec(kind, str(path.resolve()), "sha256:" + hashlib.sha256(data).hexdigest())


def gemini_model(model: str) -> bool:
    """Whether `model` can name a Gemini model in its API's path (the gateway's routes
    accept no other)."""
    return re.fullmatch(GEMINI_MODEL, model) is not None


def read_pinned(spec: AgentSpec) -> bytes:
    """The file's bytes, refusing a file that changed since the run was created."""
    data = Path(spec.value).read_bytes()
    actual = "sha256:" + hashlib.sha256(data).hexdigest()
    if spec.digest and actual != spec.digest:
        raise BadInput(f"{spec.value} changed since the run was created "
                       f"({actual[:19]}..., expected {spec.digest[:19]}...)")
    return data


def load_plan(path: Path, data: bytes | None = None) -> tuple[PlanStep, ...]:
    """The steps of the plan at `path` (or in `data`, its bytes), checked. Its parser is loaded
    here, for a script agent only: a run of any other agent parses no TOML and loads no
    built-in tool."""
    from agentctl.execution.agents import script_plan

    return script_plan.load_plan(path, data)
