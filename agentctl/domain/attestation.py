"""in-toto Statements about a run, and the DSSE envelope that carries each one signed.

Standard predicates where one fits (SLSA provenance v1, in-toto test-result v0.1) and agentctl's
own run predicate for what none covers (verdict, approvals, the audit chain head), so that any
in-toto tool can check the signatures and subjects without agentctl.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from agentctl.domain.canonical import canonical_json
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


def statement(subjects: Sequence[Subject], predicate_type: str, predicate: Json) -> bytes:
    """One in-toto Statement v1, serialized once: these bytes are what gets signed."""
    return canonical_json({"_type": STATEMENT_TYPE, "subject": [s.as_json() for s in subjects],
                           "predicateType": predicate_type, "predicate": predicate}).encode()


def envelope(payload: bytes, keyid: str, sign: Callable[[bytes], bytes]) -> str:
    """A DSSE envelope as one JSON line."""
    signature = sign(pae(PAYLOAD_TYPE, payload))
    return json.dumps({"payload": base64.b64encode(payload).decode(), "payloadType": PAYLOAD_TYPE,
                       "signatures": [{"keyid": keyid,
                                       "sig": base64.b64encode(signature).decode()}]},
                      separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Opened:
    """An envelope whose signature checked, and the Statement it carries."""

    predicate_type: str
    subjects: tuple[Subject, ...]
    statement: Json


def open_envelope(line: str, keyid: str, verify: Callable[[bytes, bytes], bool]) -> Opened:
    """The Statement of an envelope signed by `keyid`; ValueError naming what is wrong."""
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
    if not any(k == keyid and verify(signed, sig) for k, sig in signatures):
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
    return Opened(predicate_type, subjects, body)
