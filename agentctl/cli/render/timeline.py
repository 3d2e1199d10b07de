"""The run's timeline as inline SVG: one band per attempt, one bar per step (a Gantt chart).

Plain SVG with a `<title>` per bar, so it reads without JavaScript and prints. Each bar is named
on its row, in the left column (its number and tool or type), so the chart reads without hovering;
past LABELLED steps the rows are too thin for text and only the titles name them. Times come from
the records; a step still open (or one whose end was never written) ends where the next begins.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

Document = dict[str, Any]

WIDTH = 960
LABEL = 170
ROW = 14
BAND_GAP = 22
LABELLED = 200  # steps; a longer run's rows shrink to a chart, not a wall
LABEL_CHARS = 26


def _time(text: str | None) -> float | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def step_class(step: Document) -> str:
    """The mark a step gets on the page: denied calls and failures stand out."""
    call = step.get("toolCall")
    if step["status"] == "DENIED" or (call and call["decision"] not in ("ALLOWED", None)):
        return "denied"
    if step["status"] in ("FAILED", "TIMED_OUT"):
        return "failed"
    return {"SUCCEEDED": "ok", "SKIPPED": "skipped"}.get(step["status"], "open")


def timeline_svg(attempts: list[Document]) -> str:
    spans: list[tuple[float, float]] = []
    for attempt in attempts:
        for step in attempt["steps"]:
            start = _time(step["startedAt"]) or 0.0
            spans.append((start, _time(step["endedAt"]) or start))
    if not spans:
        return '<p class="muted">no steps were recorded</p>'
    first = min(s for s, _ in spans)
    last = max(max(e for _, e in spans), first + 0.001)
    scale = (WIDTH - LABEL - 10) / (last - first)
    labelled = len(spans) <= LABELLED
    row = ROW if labelled else 4
    parts: list[str] = []
    y = 4
    for attempt in attempts:
        retried = attempt["attemptNumber"] > 1
        label = f"attempt {attempt['attemptNumber']} · {attempt['status']}"
        if retried:
            label += " (retry)"
        head = ROW if labelled else 0  # the band's own label gets a row above its bars
        band_height = max(row * len(attempt["steps"]), row) + 6 + head
        parts.append(f'<g class="attempt{" retried" if retried else ""}" '
                     f'data-attempt="{escape(attempt["attemptId"])}">'
                     f'<rect class="band" x="0" y="{y}" width="{WIDTH}" height="{band_height}"/>'
                     f'<text class="band-label" x="4" y="{y + 12}">{escape(label)}</text>')
        y += 3 + head
        for step in attempt["steps"]:
            start = _time(step["startedAt"]) or first
            end = _time(step["endedAt"]) or start
            x = LABEL + (start - first) * scale
            width = max((end - start) * scale, 2.0)
            mark = step_class(step)
            call = step.get("toolCall")
            what = call["toolName"] if call else step["type"]
            tip = f"#{step['sequenceNumber']} {what} {step['status']} ({end - start:.3f}s)"
            if call and call["decision"] != "ALLOWED":
                tip += f" {call['decision']} by {call.get('matchedRule') or '-'}"
            parts.append(f'<rect class="bar {mark}" data-step="{escape(step["stepId"])}" '
                         f'x="{x:.1f}" y="{y}" width="{width:.1f}" height="{max(row - 2, 2)}">'
                         f'<title>{escape(tip)}</title></rect>')
            if labelled:
                name = _short(f"#{step['sequenceNumber']} {what}", LABEL_CHARS)
                parts.append(f'<text class="bar-label" data-step="{escape(step["stepId"])}" '
                             f'x="14" y="{y + row - 4}">{escape(name)}</text>')
            y += row
        y += BAND_GAP - 3
        parts.append("</g>")
    seconds = last - first
    parts.append(f'<text class="axis" x="{LABEL}" y="{y}">0 s</text>'
                 f'<text class="axis" x="{WIDTH - 10}" y="{y}" text-anchor="end">'
                 f'{seconds:.2f} s</text>')
    return (f'<svg class="timeline" role="img" aria-label="timeline of attempts and steps" '
            f'width="{WIDTH}" height="{y + 6}" '
            f'viewBox="0 0 {WIDTH} {y + 6}">{"".join(parts)}</svg>')


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
