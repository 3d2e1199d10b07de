"""Listings that fit the terminal: a column is shown whole or not at all.

Rich squeezes a table that is too wide until columns have no width left (`FAILED_INF` /
`RASTRUCTUR`); here every column keeps its natural width, and what does not fit moves to an
indented line under its row (`task task_01JZ9  base 3f2a1c9e`), so nothing is cut or lost.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.text import Text

GAP = 2
INDENT = 4


@dataclass(frozen=True)
class Column:
    header: str
    # 0: shown as a column while it fits, else on the detail line; higher ranks stay columns
    # longest (the verdict outlasts the status when even the essentials are too wide).
    rank: int = 0
    text: bool = False  # free text (a title, a reason): when it does not fit, a line of its own


def fitted(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int,
           ) -> RenderableType:
    """`rows` of Rich markup cells laid out in at most `width` columns."""
    cells = [[Text.from_markup(cell, emoji=False) for cell in row] for row in rows]
    widths = [max([len(c.header), *(row[i].cell_len for row in cells)])
              for i, c in enumerate(columns)]
    shown = _choose(columns, widths, width)
    header = Text(style="bold", no_wrap=True, overflow="ellipsis")
    lines: list[RenderableType] = [header]
    _join(header, [Text(columns[i].header) for i in shown], [widths[i] for i in shown])
    for row in cells:
        line = Text(no_wrap=True, overflow="ellipsis")
        _join(line, [row[i] for i in shown], [widths[i] for i in shown])
        lines.append(line)
        rest = [i for i in range(len(columns)) if i not in shown and row[i].plain not in ("", "-")]
        short = [i for i in rest if not columns[i].text]
        if short:
            detail = Text()
            for n, i in enumerate(short):
                if n:
                    detail.append("  ")
                detail.append(columns[i].header.lower() + " ", style="dim")
                detail.append_text(row[i])
            lines.append(Padding(detail, (0, 0, 0, INDENT)))
        lines += [Padding(row[i], (0, 0, 0, INDENT)) for i in rest if columns[i].text]
    return Group(*lines)


def _choose(columns: Sequence[Column], widths: Sequence[int], width: int) -> list[int]:
    """The columns shown in the table: every ranked one (dropping the lowest ranks while they
    do not fit), then the others in order while they fit."""
    def total(chosen: Sequence[int]) -> int:
        return sum(widths[i] for i in chosen) + GAP * max(len(chosen) - 1, 0)

    chosen = [i for i, c in enumerate(columns) if c.rank > 0]
    by_rank = sorted(chosen, key=lambda i: (columns[i].rank, -i))
    while total(chosen) > width and len(chosen) > 1:
        chosen.remove(by_rank.pop(0))
    for i, column in enumerate(columns):
        if column.rank == 0 and total(sorted([*chosen, i])) <= width:
            chosen.append(i)
    return sorted(chosen)


def _join(line: Text, parts: Sequence[Text], widths: Sequence[int]) -> None:
    for n, (part, size) in enumerate(zip(parts, widths, strict=True)):
        line.append_text(part)
        if n < len(parts) - 1:
            line.append(" " * (size - part.cell_len + GAP))


_LEAD = re.compile(r" *(?:\d+\. \S |- |\S+ +)?")
MAX_HANGING = 16  # deeper than this, a narrow terminal would leave the text too little room


class Hanging:
    """A line of text that wraps under its own text (a hanging indent), never back to column
    0: `5. ✗ judge  …` continues under `judge`, `  - reason …` under the reason, `sandbox …`
    under what follows the key."""

    def __init__(self, text: Text) -> None:
        self.text = text
        found = _LEAD.match(text.plain)
        lead = len(text.plain) - len(text.plain.lstrip(" "))
        end = found.end() if found else 0
        self.indent = min(end if end > lead else lead + 2, MAX_HANGING)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        indent = min(self.indent, width // 2)
        first = self.text.wrap(console, width, overflow="fold")[0]
        first.rstrip()
        yield first
        rest = self.text[len(first.plain):]
        rest = rest[len(rest.plain) - len(rest.plain.lstrip(" ")):]
        if rest.plain:
            for line in rest.wrap(console, max(width - indent, 1), overflow="fold"):
                line.rstrip()
                yield Text.assemble(" " * indent, line)


def hanging(lines: Sequence[str]) -> RenderableType:
    """Lines of Rich markup, each wrapping under its own text."""
    return Group(*(Hanging(Text.from_markup(line, emoji=False)) for line in lines))
