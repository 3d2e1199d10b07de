"""Id prefixes as git takes hash prefixes: any unique prefix names a record."""

from __future__ import annotations

from collections.abc import Sequence

from agentctl.domain.errors import AmbiguousId, BadInput, NotFound

MIN_PREFIX_CHARS = 4


def full_prefix(kind: str, text: str) -> str:
    """`01JZ9T` and `task_01JZ9T` both mean the task whose id starts that way."""
    text = text.strip()
    if not text:
        raise BadInput(f"empty {kind} id; expected a {kind} id or a unique prefix of one")
    ulid = text[len(kind) + 1:] if text.startswith(f"{kind}_") else text
    if "_" in ulid:
        raise BadInput(f"{text!r} is not a {kind} id; {kind} ids start with '{kind}_'")
    if len(ulid) < MIN_PREFIX_CHARS:
        raise BadInput(f"{kind} id prefix {text!r} is too short; give at least "
                       f"{MIN_PREFIX_CHARS} characters after '{kind}_'")
    return f"{kind}_{ulid.upper()}"


def prefix_bounds(prefix: str) -> tuple[str, str]:
    """A half-open range that holds exactly the ids starting with `prefix` (ids are ASCII < '~')."""
    return prefix, prefix + "~"


def pick_unique(kind: str, text: str, matches: Sequence[str]) -> str:
    if not matches:
        raise NotFound(f"no {kind} matches {text!r}")
    if len(matches) > 1:
        raise AmbiguousId(
            f"{kind} id prefix {text!r} is ambiguous: it matches {', '.join(matches[:3])}"
            f"{', ...' if len(matches) > 3 else ''}; give more characters"
        )
    return matches[0]
