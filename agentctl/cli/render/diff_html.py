"""The patch as HTML, each file and hunk tagged with the step and tool that made it.

Which step changed which file is on record (`editedBy`, from each step's `changedFiles`). A hunk
of a file one step changed is that step's; where several steps changed the file, the hunk goes
to the steps whose written text (their tool arguments) appears in its added lines, else to all
of them (the record does not say more, and the page does not pretend it does). A step whose
change the patch boundary forbade is marked, on its file and on its hunks.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

Document = dict[str, Any]


def diff_html(text: str, edited_by: dict[str, list[Document]],
              arguments: dict[str, str]) -> str:
    """`arguments`: each tool call's arguments JSON, by tool call id."""
    try:
        files = PatchSet(text)
    except UnidiffParseError:
        return f'<pre class="diff">{escape(text)}</pre>'
    out: list[str] = []
    for file in files:
        path = file.path
        edits = edited_by.get(path) or edited_by.get(file.target_file.removeprefix("b/")) or []
        out.append(f'<section class="file"><h3><code>{escape(path)}</code> '
                   f'<span class="muted">+{file.added} −{file.removed}</span> '
                   f'{_tags(edits)}</h3>')
        for hunk in file:
            added = [line.value.strip() for line in hunk if line.is_added
                     and line.value.strip()]
            owners = _owners(edits, added, arguments)
            out.append(f'<div class="hunk"><div class="hunk-head"><code>'
                       f'{escape(str(hunk).splitlines()[0])}</code> {_tags(owners)}</div>'
                       '<pre class="diff">')
            for line in hunk:
                kind = "add" if line.is_added else "del" if line.is_removed else "ctx"
                out.append(f'<span class="{kind}">{escape(line.line_type + line.value)}</span>')
            out.append("</pre></div>")
        out.append("</section>")
    return "".join(out)


def _owners(edits: list[Document], added: list[str], arguments: dict[str, str],
            ) -> list[Document]:
    """The steps whose written text is in the hunk's added lines (or holds one of them)."""
    if len(edits) <= 1 or not added:
        return edits
    joined = "\n".join(added)
    owners = [edit for edit in edits
              if any(value in joined or any(line in value for line in added)
                     for value in _written(arguments.get(str(edit.get("toolCallId")), "")))]
    return owners or edits


def _written(arguments: str) -> list[str]:
    """The text a tool call wrote: its string arguments but the paths and what it replaced."""
    try:
        values = json.loads(arguments) if arguments else {}
    except ValueError:
        return []
    if not isinstance(values, dict):
        return []
    return [v.strip() for k, v in values.items()
            if isinstance(v, str) and k not in ("path", "old", "to") and len(v.strip()) >= 4]


def _tags(edits: list[Document]) -> str:
    """Each step's tag; a step whose change the patch boundary forbade is marked with the rule."""
    if not edits:
        return '<span class="tag none">no step on record</span>'
    return " ".join(_tag(e) for e in edits)


def _tag(edit: Document) -> str:
    rule = edit.get("forbidden")
    kind, mark = ("tag forbidden", f" · ✗ {escape(str(rule))}") if rule else ("tag", "")
    return (f'<span class="{kind}" title="{escape(str(edit.get("toolCallId") or ""))}">'
            f'step {edit["sequenceNumber"]} · {escape(str(edit["toolName"]))}{mark}</span>')
