"""in-toto Statements about a run, and the DSSE envelope that carries each one signed.

Standard predicates where one fits (SLSA provenance v1, in-toto test-result v0.1) and agentctl's
own run predicate for what none covers (verdict, approvals, the audit chain head), so that any
in-toto tool can check the signatures and subjects without agentctl.

A Statement leaves the system, so its bytes are RFC 8785's (the JSON Canonicalization Scheme,
serialized where it is signed: `services/actions/attest.py`), not agentctl's own canonical JSON
(`domain/canonical.py`), which every stored digest is taken over and which differs from RFC 8785
on floats (`1e-05` against `0.00001`, `2.0` against `2`) and on the order of keys beyond the
BMP: a verifier that re-serializes a Statement, in any language, gets the signed bytes back.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from agentctl.domain.enums import TestClassification, TestOutcome, VerificationCheckStatus
from agentctl.domain.verification import TestReport, VerificationCheck

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
SLSA_PROVENANCE = "https://slsa.dev/provenance/v1"
TEST_RESULT = "https://in-toto.io/attestation/test-result/v0.1"
RUN_PREDICATE = "https://agentctl.dev/attestation/run/v1"
BUILD_TYPE = "https://agentctl.dev/build/agent-run/v1"
BUILDER_ID = "https://agentctl.dev/agentctl"

Json = Mapping[str, object]


@dataclass(frozen=True, slots=True)
class Subject:
    name: str
    digest: Mapping[str, str]  # algorithm -> hex: sha256 of the patch, gitTree of its tree

    def as_json(self) -> Json:
        return {"name": self.name, "digest": dict(self.digest)}


# Tests that passed on some runs and failed on others: "passed with warnings", the predicate says.
_WARNED = frozenset({TestClassification.FLAKY, TestClassification.PASS_TO_FLAKY})
_FAILED = frozenset({TestOutcome.FAILED, TestOutcome.ERROR})


def test_result(check: VerificationCheck, report: TestReport | None) -> Json:
    """in-toto's test-result v0.1 predicate for one check: `result` PASSED, WARNED (it passed,
    but some test only on a rerun) or FAILED, and every test the runner named by outcome (from
    its per-test report, else from the comparison with the base)."""
    outcomes = {r.test_id: r.outcome for r in report.results} if report is not None else {}
    for test in check.classified_tests:
        outcomes.setdefault(test.test_id, test.candidate)
    warned = {t.test_id for t in check.classified_tests if t.classification in _WARNED}
    failed = ({t for t, outcome in outcomes.items() if outcome in _FAILED}
              | set(check.failing_test_ids)) - warned
    passed = {t for t, outcome in outcomes.items() if outcome is TestOutcome.PASSED} \
        - warned - failed
    if check.status is not VerificationCheckStatus.PASSED:
        result = "FAILED"
    else:
        result = "WARNED" if warned else "PASSED"
    return {"result": result,
            "configuration": [{"name": check.name, "digest": {
                "sha256": hashlib.sha256(check.command.encode()).hexdigest()},
                "annotations": {"command": check.command, "required": check.required}}],
            "passedTests": sorted(passed), "warnedTests": sorted(warned),
            "failedTests": sorted(failed)}


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what is signed, binding the type to the payload."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def statement(subjects: Sequence[Subject], predicate_type: str, predicate: Json) -> Json:
    """One in-toto Statement v1 (its signed bytes are its RFC 8785 form)."""
    return {"_type": STATEMENT_TYPE, "subject": [s.as_json() for s in subjects],
            "predicateType": predicate_type, "predicate": predicate}


def envelope(payload: bytes, keyid: str, sign: Callable[[bytes], bytes]) -> str:
    """A DSSE envelope as one JSON line."""
    signature = sign(pae(PAYLOAD_TYPE, payload))
    return json.dumps({"payload": base64.b64encode(payload).decode(), "payloadType": PAYLOAD_TYPE,
                       "signatures": [{"keyid": keyid,
                                       "sig": base64.b64encode(signature).decode()}]},
                      separators=(",", ":"))


def listed(name: str, predicate_type: str, payload: bytes) -> Json:
    """How the run predicate names a Statement of its bundle: what it is and its digest."""
    return {"name": name, "predicateType": predicate_type,
            "sha256": hashlib.sha256(payload).hexdigest()}


@dataclass(frozen=True, slots=True)
class Opened:
    """An envelope whose signature checked, and the Statement it carries."""

    predicate_type: str
    subjects: tuple[Subject, ...]
    statement: Json
    sha256: str  # of the payload: what the run predicate lists


def open_envelope(line: str, keyid: str | None,
                  verify: Callable[[bytes, bytes], bool] | None) -> Opened:
    """The Statement of an envelope signed by `keyid` (None: the signature is not checked);
    ValueError naming what is wrong."""
    try:
        document = json.loads(line)
        payload = base64.b64decode(document["payload"], validate=True)
        payload_type = str(document["payloadType"])
        signatures = [(str(s.get("keyid", "")), base64.b64decode(s["sig"], validate=True))
                      for s in document["signatures"]]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not a DSSE envelope ({error})") from None
    if payload_type != PAYLOAD_TYPE:
        raise ValueError(f"payloadType is {payload_type!r}, not {PAYLOAD_TYPE}")
    signed = pae(payload_type, payload)
    if verify is not None and not any(k == keyid and verify(signed, sig)
                                      for k, sig in signatures):
        raise ValueError(f"no valid signature by key {keyid}")
    try:
        body = json.loads(payload)
        subjects = tuple(Subject(str(s["name"]), {str(k): str(v) for k, v in s["digest"].items()})
                         for s in body["subject"])
        predicate_type = str(body["predicateType"])
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"the payload is not an in-toto Statement ({error})") from None
    if body.get("_type") != STATEMENT_TYPE:
        raise ValueError(f"the payload's _type is {body.get('_type')!r}, not {STATEMENT_TYPE}")
    return Opened(predicate_type, subjects, body, hashlib.sha256(payload).hexdigest())


def complete(bundle: Sequence[Opened]) -> tuple[str, ...]:
    """The checks whose results the bundle holds, once it is whole: its run predicate last, and
    before it exactly the Statements that predicate lists (the provenance among them), each with
    the digest listed. ValueError naming the first missing or extra one."""
    last = bundle[-1]
    if last.predicate_type != RUN_PREDICATE:
        where = [n for n, o in enumerate(bundle, 1) if o.predicate_type == RUN_PREDICATE]
        raise ValueError(f"incomplete bundle: the run predicate ({RUN_PREDICATE}) is "
                         + (f"envelope {where[0]}, not the last" if where else "missing"))
    predicate = last.statement.get("predicate")
    entries = predicate.get("statements") if isinstance(predicate, Mapping) else None
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        raise ValueError("the run predicate lists no statements (a bundle from an older "
                         "agentctl): make it again with `agentctl run attest`")
    unlisted = list(range(len(bundle) - 1))  # each envelope answers for one entry at most
    for entry in entries:
        at = next((i for i in unlisted if bundle[i].sha256 == entry.get("sha256")
                   and bundle[i].predicate_type == entry.get("predicateType")), None)
        if at is None:
            raise ValueError(f"incomplete bundle: {_what(entry)} is missing")
        unlisted.remove(at)
    if unlisted:
        extra = bundle[unlisted[0]]
        raise ValueError(f"envelope {unlisted[0] + 1} ({extra.predicate_type}) is not one the "
                         "run predicate lists")
    if not any(e.get("predicateType") == SLSA_PROVENANCE for e in entries):
        raise ValueError(f"incomplete bundle: the run predicate lists no provenance "
                         f"({SLSA_PROVENANCE})")
    return tuple(str(e.get("name")) for e in entries if e.get("predicateType") == TEST_RESULT)


def _what(entry: Mapping[str, object]) -> str:
    kind = entry.get("predicateType")
    if kind == SLSA_PROVENANCE:
        return f"the provenance ({SLSA_PROVENANCE})"
    if kind == TEST_RESULT:
        return f"the test result of check {entry.get('name')!r}"
    return f"the statement {entry.get('name')!r} ({kind})"
