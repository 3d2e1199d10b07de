"""A Statement leaves the system signed, so its bytes are RFC 8785's (JCS), which any verifier
rebuilds from the parsed Statement, and not agentctl's own canonical JSON (stored digests),
which spells floats as Python does and orders keys by code point. Expected bytes written out by
hand from the RFC's rules."""

from __future__ import annotations

import json

from agentctl.domain.attestation import TEST_RESULT, Subject, statement
from agentctl.domain.canonical import canonical_json
from agentctl.services.actions.attest import signed_bytes

DOCUMENT = statement([Subject("patch.diff", {"sha256": "ab"})], TEST_RESULT, {
    "whole": 2.0, "ratio": 1e-05, "small": 1e-07, "large": 1e21,
    "keys": {"\uff61": 1, "\U0001f600": 2}, "text": "é\n\u2028\x1f"})


def test_a_statement_is_signed_in_its_rfc_8785_form() -> None:
    expected = ('{"_type":"https://in-toto.io/Statement/v1","predicate":{"keys":{"\U0001f600":2,'
                '"\uff61":1},"large":1e+21,"ratio":0.00001,"small":1e-7,'
                '"text":"é\\n\u2028\\u001f","whole":2},'
                '"predicateType":"https://in-toto.io/attestation/test-result/v0.1",'
                '"subject":[{"digest":{"sha256":"ab"},"name":"patch.diff"}]}')
    assert signed_bytes(DOCUMENT) == expected.encode("utf-8")


def test_its_bytes_come_back_from_the_parsed_statement() -> None:
    signed = signed_bytes(DOCUMENT)
    assert signed_bytes(json.loads(signed)) == signed


def test_the_stored_digests_canonical_json_is_another_form() -> None:
    """Why the two stay apart: changing the stored form would change every stored digest."""
    assert canonical_json(DOCUMENT).encode("utf-8") != signed_bytes(DOCUMENT)
