"""A dataclass's made-up docstring, written when read: in a real process, each class's `__doc__`
is the text `dataclasses` writes itself (`AGENTCTL_PLAIN=1`, the same classes), and until it is
read it is not written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    from __future__ import annotations
    import json, sys
    from dataclasses import InitVar, dataclass, field
    from agentctl._speedups import dataclass_doc
    dataclass_doc.install()

    @dataclass(frozen=True, slots=True)
    class Point:
        x: int
        tags: tuple[str, ...] = field(default=())

    @dataclass(kw_only=True)
    class Settings:
        name: str = "a"
        seen: list[int] = field(default_factory=list)
        secret: InitVar[str | None] = None

    @dataclass
    class Told:
        '''A docstring of its own.'''
        x: int

    @dataclass(frozen=True)
    class Below(Point):
        y: float = 0.5

    @dataclass(init=False)
    class NoInit:
        x: int = 0

    classes = (Point, Settings, Told, Below, NoInit)
    unread = [c.__name__ for c in classes if not isinstance(c.__dict__["__doc__"], str)]
    docs = {c.__name__: c.__doc__ for c in classes}
    print(json.dumps({"unread": unread, "docs": docs, "instance": Point(1).__doc__,
                      "kept": isinstance(Point.__dict__["__doc__"], str)}))
""")


def docs(**env: str) -> dict[str, object]:
    environment = {k: v for k, v in os.environ.items() if k != "AGENTCTL_PLAIN"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env={**environment, **env}, timeout=60)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert isinstance(found, dict)
    return found


def test_a_dataclass_without_a_docstring_has_the_text_dataclasses_writes_once_it_is_read() -> None:
    lazy, plain = docs(), docs(AGENTCTL_PLAIN="1")
    assert lazy["docs"] == plain["docs"]
    assert lazy["instance"] == plain["instance"] == plain["docs"]["Point"]  # type: ignore[index]
    assert plain["docs"]["Point"] == "Point(x: 'int', tags: 'tuple[str, ...]' = ())"  # type: ignore[index]
    assert plain["docs"]["Told"] == "A docstring of its own."  # type: ignore[index]
    # not written as the classes were made (a class with a docstring keeps it); kept once read
    if sys.version_info < (3, 14):
        assert lazy["unread"] == ["Point", "Settings", "Below", "NoInit"]
    assert plain["unread"] == []
    assert lazy["kept"] is True
