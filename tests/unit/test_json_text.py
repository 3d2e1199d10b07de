"""The encoder built once gives exactly the text `JSONEncoder.encode` gives: event hashes and
row seals are over that text, so one differing byte would break `audit verify`."""

from __future__ import annotations

import json

import pytest

from agentctl._speedups.json_text import compiled
from agentctl.domain.enums import RunStatus, StepType

DOCUMENTS: list[object] = [
    {"b": 1, "a": {"d": [1, 2.5, -0.0, 1e300], "c": None}, "e": True, "f": False},
    {"text": "é ü \u2028 \x00 \"quoted\" \\ tab\t", "emoji": "\U0001f600"},
    {"inf": float("inf"), "nan": float("nan"), "neg": float("-inf")},
    {"enum": StepType.TOOL_CALL, "nested": [{"z": 1, "y": [RunStatus.QUEUED]}]},
    "a bare string", 42, 1.5, None, [], {},
]
ENCODERS = [
    json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str),
    json.JSONEncoder(separators=(",", ":"), ensure_ascii=False),
    json.JSONEncoder(),
]


@pytest.mark.parametrize("encoder", ENCODERS, ids=["canonical", "compact", "default"])
@pytest.mark.parametrize("document", DOCUMENTS)
def test_compiled_encoder_gives_the_same_text(encoder: json.JSONEncoder, document: object) -> None:
    assert compiled(encoder)(document) == encoder.encode(document)


def test_compiled_encoder_uses_the_default_hook() -> None:
    canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)
    assert compiled(canonical)({"at": object}) == canonical.encode({"at": object})
    with pytest.raises(TypeError):
        compiled(json.JSONEncoder())({"at": object()})


def test_compiled_encoder_falls_back_without_the_c_speedups(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encoder = json.JSONEncoder(sort_keys=True)
    assert compiled(encoder)({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'


def test_enum_values_are_plain_strings() -> None:
    """`.value` is read as a plain attribute (faster on 3.11): still the value, as `str`."""
    assert RunStatus.QUEUED.value == "QUEUED" and type(RunStatus.QUEUED.value) is str
    assert StepType("TOOL_CALL") is StepType.TOOL_CALL and StepType.TOOL_CALL.name == "TOOL_CALL"
