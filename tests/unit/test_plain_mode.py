"""`AGENTCTL_PLAIN=1` turns every speed-up off at once, in a real process: the records keep the
dataclass's own `__init__`, JSON goes through `JSONEncoder.encode`, `Enum.value` is Python's,
`dataclasses` compiles as it always does, and the garbage collector keeps CPython's pace. The
same probe without the switch finds each one on, so the test can tell the two apart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import dataclasses, enum, gc, json, sys
from agentctl._speedups import dataclass_code, dataclass_doc, process
from agentctl._speedups.json_text import compiled
from agentctl.domain.enums import RunStatus
from agentctl.domain.step import Step

dataclass_code.install(sys.argv[1])
dataclass_doc.install()
process.collect_less()
encoder = json.JSONEncoder(sort_keys=True)
print(json.dumps({
    "fast_init": Step.__init__.__code__.co_filename.startswith("<fast __init__"),
    "json_text": compiled(encoder) != encoder.encode,
    "enum_values": type(RunStatus.__dict__.get("value")) is property,
    "dataclass_code": "exec" in vars(dataclasses),
    "dataclass_doc": dataclasses._process_class is not dataclass_doc.PLAIN_PROCESS,
    "collect_less": gc.get_threshold()[0] != 700,
    "off_because": dataclass_code.off_because(),
}))
"""


def speedups(tmp_path: Path, **env: str) -> dict[str, object]:
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("AGENTCTL_PLAIN", "PYTHONDONTWRITEBYTECODE")}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "table.marshal")],
                          capture_output=True, text=True, env={**environment, **env})
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert isinstance(found, dict)
    return found


TRICKS = ("fast_init", "json_text", "enum_values", "dataclass_code", "dataclass_doc",
          "collect_less")


def test_without_the_switch_every_speed_up_is_on(tmp_path: Path) -> None:
    found = speedups(tmp_path)
    assert {name: found[name] for name in TRICKS} == dict.fromkeys(TRICKS, True)
    assert found["off_because"] is None


@pytest.mark.parametrize("value", ["1", "yes"])
def test_agentctl_plain_turns_every_speed_up_off(tmp_path: Path, value: str) -> None:
    found = speedups(tmp_path, AGENTCTL_PLAIN=value)
    assert {name: found[name] for name in TRICKS} == dict.fromkeys(TRICKS, False)
    assert found["off_because"] == "AGENTCTL_PLAIN is set"


def test_agentctl_plain_0_leaves_them_on(tmp_path: Path) -> None:
    assert speedups(tmp_path, AGENTCTL_PLAIN="0")["fast_init"] is True


def test_where_python_writes_no_bytecode_the_dataclass_table_says_it_is_off(
        tmp_path: Path) -> None:
    found = speedups(tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert found["off_because"] == "PYTHONDONTWRITEBYTECODE (or -B) is set"
    assert not (tmp_path / "table.marshal").exists()
