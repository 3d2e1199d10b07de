"""Script plans (`script:PLAN.toml`): a TOML list of [[step]] tables, each one built-in tool call.

Apart from `spec`, which every run start loads: a plan is parsed (TOML, each step's arguments
checked against the built-in tools) for a script agent only, and `spec.load_plan` loads this
module then.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.errors import BadInput
from agentctl.execution.agents.tools import TOOL_NAMES, validate_arguments

STEP_KEYS = {"tool", "title", "on_error"}


@dataclass(frozen=True, slots=True)
class PlanStep:
    tool: str
    arguments: Mapping[str, object]
    title: str | None
    stop_on_error: bool


def load_plan(path: Path, data: bytes | None = None) -> tuple[PlanStep, ...]:
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
