"""How one native tool call is named in its hook's input: the key that pairs a PostToolUse
with its PreToolUse, for the record and for the call's tool jail.

Pure: a hook payload in, a name out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping


def call_key(payload: Mapping[str, object]) -> str:
    """The call's id as the hook gives it; for a CLI that gives none, its tool and input (the
    same before and after the call)."""
    key = payload.get("tool_use_id") or payload.get("call_id") or payload.get("turn_id")
    if key:
        return str(key)
    return json.dumps([payload.get("tool_name"), payload.get("tool_input")], sort_keys=True,
                      default=str)
