"""Every private or undocumented API agentctl leans on, one test each, named after the API: a
Python or Typer upgrade that moves one fails here by name, not somewhere that looks unrelated.

The speed-ups (`agentctl/_speedups/`) use the first ones; the per-tool-call hook
(`hooks/hook.py`) and the sandbox's network bridge (`execution/sandboxing/netbridge.py`), which run where
nothing of agentctl may be imported, use the C halves of `json`, `socket` and `threading`.
"""

from __future__ import annotations

import dataclasses
import json
import json.encoder
import subprocess
import sys
from dataclasses import dataclass
from enum import StrEnum
from types import MemberDescriptorType

import pytest


def test_private_api_json_encoder_c_make_encoder_exists() -> None:
    """`_speedups.json_text` builds the C encoder once with these nine arguments."""
    make = json.encoder.c_make_encoder
    assert make is not None
    run = make(None, str, json.encoder.encode_basestring_ascii, None, ":", ",", True, False,
               True)
    assert "".join(run({"b": 1, "a": [1.5, None]}, 0)) == '{"a":[1.5,null],"b":1}'


def test_private_api_dataclasses_exec_is_looked_up_as_a_module_global(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`_speedups.dataclass_code` shadows the builtin `exec` in `dataclasses`' own globals:
    that works only while `dataclasses` compiles its methods' text through that name."""
    texts: list[str] = []

    def recording(source: object, *args: object) -> None:
        if isinstance(source, str):
            texts.append(source)
        exec(source, *args)  # type: ignore[arg-type]  # noqa: S102

    monkeypatch.setattr(dataclasses, "exec", recording, raising=False)

    @dataclass(frozen=True)
    class Point:
        x: int

    assert Point(1).x == 1
    assert any("def __init__(" in text for text in texts)


def test_private_api_dataclasses_process_class_is_looked_up_as_a_module_global(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`_speedups.dataclass_doc` wraps `dataclasses._process_class`: that works only while
    `dataclass` calls it by that name, writes a class without a docstring its signature's text
    (and no other), and `type.__doc__` calls the `__get__` of a descriptor stored there."""
    plain = dataclasses._process_class  # type: ignore[attr-defined]
    made: list[type] = []

    def recording(cls: type, *args: object) -> type:
        made.append(cls)
        return plain(cls, *args)  # type: ignore[no-any-return]

    monkeypatch.setattr(dataclasses, "_process_class", recording)

    @dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 0

    assert [cls.__name__ for cls in made] == ["Point"]
    assert Point.__doc__ == "Point(x: 'int', y: 'int' = 0)"

    class Told:
        pass

    class Described:
        def __get__(self, instance: object, owner: type) -> str:
            return f"read for {owner.__name__}"

    type.__setattr__(Told, "__doc__", Described())
    assert Told.__doc__ == "read for Told" and Told().__doc__ == "read for Told"


def test_private_api_atexit_run_exitfuncs_exists() -> None:
    """`_speedups.process.leave` runs the exit handlers itself, then `os._exit`s."""
    script = ("import atexit, os\n"
              "atexit.register(lambda: print('handler ran', flush=True))\n"
              "atexit._run_exitfuncs()\n"
              "os._exit(3)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (3, "handler ran\n")


def test_private_api_typer_click_exists() -> None:
    """`_speedups.typer_click` (the lazy command group, the root help, the test runner)."""
    from typer._click import Command, Context, HelpFormatter, formatting
    from typer._click.utils import make_default_short_help
    from typer.core import TyperGroup

    assert issubclass(TyperGroup, Command) and isinstance(Context, type)
    assert isinstance(HelpFormatter, type) and hasattr(formatting, "FORCED_WIDTH")
    assert make_default_short_help("One line. And more.", 45) == "One line."


def test_private_api_enum_member_value_is_kept_in_value_() -> None:
    """`_speedups.enum_values` reads each member's `_value_`."""
    class Colour(StrEnum):
        RED = "red"

    assert Colour.RED._value_ == "red" and type(Colour.RED._value_) is str


def test_private_api_slotted_dataclass_fields_are_member_descriptors() -> None:
    """`_speedups.fast_init` sets a frozen record's fields through their slots' descriptors."""
    @dataclass(frozen=True, slots=True)
    class Point:
        x: int

    slot = Point.__dict__["x"]
    assert isinstance(slot, MemberDescriptorType)
    point = object.__new__(Point)
    slot.__set__(point, 5)
    assert point.x == 5


def test_private_api_json_c_module_exists() -> None:
    """The hook's JSON: `_json.make_scanner` and `_json.encode_basestring_ascii`."""
    import _json

    assert _json.encode_basestring_ascii("é\n") == '"\\u00e9\\n"'
    scanner = _json.make_scanner(json.JSONDecoder())
    assert scanner('{"a": [1]}', 0) == ({"a": [1]}, 10)


def test_private_api_socket_and_thread_c_modules_exist() -> None:
    """The hook's `_socket` and the network bridge's `_socket.socket._accept` and
    `_thread.start_new_thread`."""
    import _socket
    import _thread

    assert callable(_socket.socket._accept)  # type: ignore[attr-defined]
    assert _socket.AF_UNIX and _socket.SOCK_STREAM
    assert callable(_thread.start_new_thread)
