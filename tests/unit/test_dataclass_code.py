"""The dataclass code table, across real processes: a second process makes its classes from the
file the first wrote, a changed class is not given its old code, a broken file is no file."""

from __future__ import annotations

import marshal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent("""
    import sys
    from dataclasses import FrozenInstanceError, dataclass, field
    from agentctl._speedups import dataclass_code
    dataclass_code.install(sys.argv[1])

    @dataclass(frozen=True, slots=True)
    class Point:
        x: int
        {extra}
        tags: tuple[str, ...] = field(default=())

    point, same = Point(1, {extra_value} tags=("a",)), Point(1, {extra_value} tags=("a",))
    assert point == same and hash(point) == hash(same) and point is not same
    try:
        point.x = 2
    except FrozenInstanceError:
        pass
    else:
        raise AssertionError("a frozen class took an assignment")
    print(repr(point))
""")


def make_classes(table: Path, *, extra: str = "", extra_value: str = "",
                 env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(extra=extra, extra_value=extra_value), str(table)],
        capture_output=True, text=True, check=False,
        env={"PATH": "/usr/bin:/bin", **(env or {})})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def entries(table: Path) -> dict[str, object]:
    _, found = marshal.loads(table.read_bytes())
    assert isinstance(found, dict)
    return found


def test_the_first_process_writes_the_table_and_the_second_makes_its_classes_from_it(
        tmp_path: Path) -> None:
    table = tmp_path / "cache" / "dataclass-code.marshal"
    assert make_classes(table) == "Point(x=1, tags=('a',))"
    written = table.stat()
    assert any("def __init__(self,x:_type_x,tags:" in text for text in entries(table))

    assert make_classes(table) == "Point(x=1, tags=('a',))"
    assert table.stat().st_mtime_ns == written.st_mtime_ns  # nothing missed: not written again


def test_a_class_that_changed_gets_code_of_its_own_not_the_old(tmp_path: Path) -> None:
    table = tmp_path / "dataclass-code.marshal"
    make_classes(table)
    assert make_classes(table, extra="y: int = 0", extra_value="5,") == \
        "Point(x=1, y=5, tags=('a',))"
    texts = entries(table)
    assert any("def __init__(self,x:_type_x,tags:" in text for text in texts)  # the old one is kept
    assert any("def __init__(self,x:_type_x,y:_type_y=_dflt_y,tags:" in text for text in texts)


@pytest.mark.parametrize("content", [b"", b"not marshal", marshal.dumps((b"\0\0\r\n", {}))],
                         ids=["empty", "garbage", "another-python"])
def test_a_file_that_cannot_be_used_is_replaced(tmp_path: Path, content: bytes) -> None:
    table = tmp_path / "dataclass-code.marshal"
    table.write_bytes(content)
    assert make_classes(table) == "Point(x=1, tags=('a',))"
    assert any("def __init__(self,x:_type_x,tags:" in text for text in entries(table))


def test_nothing_is_written_where_python_writes_no_bytecode(tmp_path: Path) -> None:
    table = tmp_path / "dataclass-code.marshal"
    assert make_classes(table, env={"PYTHONDONTWRITEBYTECODE": "1"}) == \
        "Point(x=1, tags=('a',))"
    assert not table.exists()


def test_a_folder_that_cannot_be_written_costs_nothing_but_the_table(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("in the way\n")
    assert make_classes(blocked / "dataclass-code.marshal") == "Point(x=1, tags=('a',))"
    assert blocked.read_text() == "in the way\n"


THREADS = textwrap.dedent("""
    import sys, threading
    from dataclasses import dataclass, make_dataclass
    from agentctl._speedups import dataclass_code
    dataclass_code.install(sys.argv[1])
    ready = threading.Barrier(8)
    made = {}

    def make(number):
        ready.wait()
        made[number] = make_dataclass(f"Made{number}", [(f"field_{number}", int)], frozen=True)

    threads = [threading.Thread(target=make, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(sorted(repr(cls(n)) for n, cls in made.items()))
""")


def test_classes_first_made_on_several_threads_at_once_all_reach_the_one_table(
        tmp_path: Path) -> None:
    table = tmp_path / "dataclass-code.marshal"
    done = subprocess.run([sys.executable, "-c", THREADS, str(table)], capture_output=True,
                          text=True, check=False, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(sorted(f"Made{n}(field_{n}={n})" for n in range(8)))
    texts = entries(table)
    assert all(any(f"def __init__(self,field_{n}:" in text for text in texts) for n in range(8))


def test_the_default_table_goes_where_python_puts_bytecode(tmp_path: Path) -> None:
    """PYTHONPYCACHEPREFIX (a read-only installation's bytecode kept elsewhere) moves the table
    with the bytecode; -O gives it a file of its own, as it gives .pyc files."""
    package = Path(__file__).resolve().parents[2] / "agentctl" / "_speedups"
    script = ("from dataclasses import dataclass\n"
              "from agentctl._speedups import dataclass_code\n"
              "dataclass_code.install()\n"
              "@dataclass(frozen=True)\n"
              "class Elsewhere:\n    where: str\n"
              "print(dataclass_code.WHERE_BYTECODE_GOES)\n")
    done = subprocess.run([sys.executable, "-O", "-c", script], capture_output=True, text=True,
                          check=False, cwd=package.parents[1],
                          env={"PATH": "/usr/bin:/bin", "PYTHONPYCACHEPREFIX": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    table = tmp_path / package.relative_to("/") / \
        f"dataclass-code.{sys.implementation.cache_tag}.opt-1.marshal"
    assert done.stdout.strip() == str(table)
    assert any("def __init__(self,where:_type_where)" in text for text in entries(table))
