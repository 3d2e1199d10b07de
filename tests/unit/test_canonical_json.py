"""The one canonical JSON every stored hash is taken over, and its agreement with the forms
earlier versions hashed."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctl.domain.audit import digest
from agentctl.domain.canonical import (
    canonical_json,
    record_digest,
    record_digest_before,
    sha256_digest,
)
from agentctl.domain.enums import ToolOutcome
from agentctl.domain.serialize import sealed_before_json, sealed_json, to_json
from agentctl.domain.verification import VerificationReport
from tests.unit.conftest import sample_records, sample_spec

UNICODE = "résumé — ✓ «naïve» \x7f 😀"


def test_keys_are_sorted_without_whitespace_and_text_is_kept_as_utf8() -> None:
    assert canonical_json({"b": 1, "a": {"d": [1, 2], "c": None}, "é": "✓"}) == \
        '{"a":{"c":null,"d":[1,2]},"b":1,"é":"✓"}'


def test_a_value_that_is_not_json_is_refused_rather_than_hashed_as_its_str() -> None:
    with pytest.raises(TypeError):
        canonical_json({"at": datetime(2025, 1, 2, tzinfo=UTC)})


def test_the_digest_is_sha256_of_the_utf8_text() -> None:
    text = canonical_json({"x": UNICODE})
    assert sha256_digest({"x": UNICODE}) == \
        "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("record", sample_records(), ids=lambda r: type(r).__name__)
def test_record_digests_are_byte_for_byte_what_earlier_versions_stored(record: object) -> None:
    """The record digests in old homes' events were taken over this very form, so they verify."""
    if hasattr(record, "reason"):
        record = replace(record, reason=UNICODE)  # type: ignore[type-var]
    earlier = json.dumps(sealed_json(record), sort_keys=True, separators=(",", ":"),
                         ensure_ascii=False)
    assert digest(record) == record_digest(record) == \
        "sha256:" + hashlib.sha256(earlier.encode("utf-8")).hexdigest()


def test_a_field_added_later_is_sealed_only_when_it_says_something() -> None:
    """A record written before `evidenceRuns` existed keeps its digest; one that has evidence
    runs seals them."""
    (report,) = [r for r in sample_records() if isinstance(r, VerificationReport)]
    sealed = sealed_json(report)
    assert isinstance(sealed, dict) and "evidenceRuns" not in sealed["checks"][0]
    assert "evidenceRuns" in to_json(report)["checks"][0]  # type: ignore[index,call-overload]
    with_runs = replace(report, checks=(replace(report.checks[0],
                                                evidence_runs=("fix evidence",)),))
    assert record_digest(with_runs) != record_digest(report)
    assert sealed_json(with_runs)["checks"][0]["evidenceRuns"] == [  # type: ignore[index,call-overload]
        "fix evidence"]


def test_a_field_added_unmarked_has_a_digest_with_it_and_one_from_before_it() -> None:
    """`runner` came without LATER: sealed (null) since then, absent from records sealed
    before it; the earlier digest leaves it out only at its default."""
    (report,) = [r for r in sample_records() if isinstance(r, VerificationReport)]
    sealed, before = sealed_json(report), sealed_before_json(report)
    assert isinstance(sealed, dict) and isinstance(before, dict)
    assert "runner" in sealed["checks"][0] and "runner" not in before["checks"][0]
    assert record_digest_before(report) == sha256_digest(before) != record_digest(report)
    named = replace(report, checks=(replace(report.checks[0], runner="pytest"),))
    assert sealed_before_json(named)["checks"][0]["runner"] == "pytest"  # type: ignore[index]
    assert record_digest_before(named) != record_digest_before(report)


def test_a_record_without_unmarked_fields_has_one_digest() -> None:
    unmarked = [r for r in sample_records() if record_digest_before(r) is None]
    assert unmarked and not any(isinstance(r, VerificationReport) for r in unmarked)


def test_an_ascii_spec_keeps_the_digest_earlier_versions_gave_it() -> None:
    spec = sample_spec()
    earlier = json.dumps(to_json(spec), sort_keys=True, separators=(",", ":"))
    assert spec.digest() == "sha256:" + hashlib.sha256(earlier.encode()).hexdigest()


_TEXT = st.text(st.characters(exclude_categories=()))  # lone surrogates and controls included
_SCALARS = st.one_of(_TEXT, st.integers(), st.booleans(), st.none())
_FLAT = st.dictionaries(_TEXT, _SCALARS)
_NESTED = st.dictionaries(_TEXT, st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner,
                                                                          max_size=4),
    max_leaves=20))


def _as_json_writes_it(document: object) -> str:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@given(_FLAT)
def test_a_flat_document_is_written_as_json_writes_it(document: dict[str, object]) -> None:
    """Flat documents take the fast writer; it must agree with `json` to the byte, beyond 64-bit
    integers and unpaired surrogates too (which it hands back to `json`)."""
    assert canonical_json(document) == _as_json_writes_it(document)


@given(_NESTED)
def test_a_document_of_dicts_and_lists_without_floats_is_written_as_json_writes_it(
        document: dict[str, object]) -> None:
    """The same for nested documents (a batch's seals: {table: {id: seal}})."""
    assert canonical_json(document) == _as_json_writes_it(document)


@pytest.mark.parametrize("document", [
    {"small": 1e-05, "large": 1e16, "third": 0.1},  # the fast writer spells 1e-05 as 0.00001
    {"nested": {"b": 1, "a": [1.5e-07]}},
    {"deep": [{"seals": {"b": "x"}}, [[1e-05]]]},
    {"tuple": ("a", 1)},
    {2: "integer keys", 1: "written as text"},
    {"flag": True, "outcome": ToolOutcome.OK},  # a str enum: its value, as json writes it
], ids=["floats", "nested", "deep", "tuple", "integer-keys", "enum-value"])
def test_documents_the_fast_writer_would_spell_otherwise_are_written_as_json_writes_them(
        document: dict[object, object]) -> None:
    assert canonical_json(document) == _as_json_writes_it(document)
