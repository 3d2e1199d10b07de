"""Agent specs (`script:PLAN.toml`, `patch:FILE.diff`, `command:CMD`, `noop`) and script plans.

A spec is checked before a run is created, so a malformed plan is one clear error and no run.
Files are pinned by digest: the run records the sha256 of the plan or diff it was given, and the
agent refuses to play a file that changed since.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.agent import NATIVE_KINDS, AgentKind, AgentSpec
from agentctl.domain.errors import BadInput

STEP_KEYS = {"tool", "title", "on_error"}


@dataclass(frozen=True, slots=True)
class PlanStep:
    tool: str
    arguments: Mapping[str, object]
    title: str | None
    stop_on_error: bool


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
            from agentctl.domain.provider_model import provider_model

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

    from agentctl.domain.model_routes import GEMINI_MODEL

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
    import tomllib

    from agentctl.execution.agents.tools import TOOL_NAMES, validate_arguments

    try:
        document = tomllib.loads((data if data is not None else path.read_bytes()).decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise BadInput(f"plan {path} is not valid TOML: {error}") from None
    except RecursionError:
        raise BadInput(f"plan {path} nests arrays or tables too deeply") from None
    unknown = set(document) - {"step"}
    if unknown:
        raise BadInput(f"plan {path}: unknown top-level key {sorted(unknown)[0]!r}; expected "
                       "[[step]] tables")
    entries = document.get("step", [])
    if not isinstance(entries, list) or not entries:
        raise BadInput(f"plan {path} has no [[step]] tables")
    steps = []
    for number, entry in enumerate(entries, start=1):
        where = f"plan {path}, step {number}"
        if not isinstance(entry, dict):
            raise BadInput(f"{where}: expected a [[step]] table, got {type(entry).__name__}")
        tool = entry.get("tool")
        if tool not in TOOL_NAMES:
            raise BadInput(f"{where}: unknown tool {tool!r}; expected one of: "
                           f"{', '.join(TOOL_NAMES)}")
        on_error = entry.get("on_error", "stop")
        if on_error not in ("stop", "continue"):
            raise BadInput(f"{where}: on_error must be 'stop' or 'continue'")
        title = entry.get("title")
        if title is not None and not isinstance(title, str):
            raise BadInput(f"{where}: title must be a string")
        arguments = {k: v for k, v in entry.items() if k not in STEP_KEYS}
        try:
            validate_arguments(tool, arguments)  # the runtime validates again when it plays it
        except BadInput as error:
            raise BadInput(f"{where}: {error}") from None
        steps.append(PlanStep(tool=tool, arguments=arguments, title=title,
                              stop_on_error=on_error == "stop"))
    return tuple(steps)
