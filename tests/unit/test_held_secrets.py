"""The shapes of a held secret a patch may carry, and the model key kept out of the sandbox in
whatever variable and form it hides."""

from __future__ import annotations

import base64
import urllib.parse

import pytest

from agentctl.domain.enums import Severity
from agentctl.domain.findings import DiffLine
from agentctl.domain.held_secrets import found_forms, held, held_secret_findings
from agentctl.execution.gateway.keys import without_keys

SECRET = "Pk2Lm9Qz7Ws3-deploy-secret"
KEY = "sk-ant-model-key-8f3a2c9d1e"


@pytest.mark.parametrize(("text", "form"), [
    (f"x = '{SECRET}'", "plain"),
    (f"x = '{SECRET[::-1]}'", "reversed"),
    (f"x = '{SECRET.encode().hex()}'", "hex"),
    (f"X = 0x{SECRET.encode().hex().upper()}", "hex"),
    (f"x = {SECRET.encode()[::-1].hex()!r}", "reversed hex"),
    (f"x = {list(SECRET)!r}", "list of characters"),
    ("x = [\n" + "".join(f'    "{c}",\n' for c in SECRET) + "]", "list of characters"),
    (f"x = {list(SECRET[::-1])!r}", "reversed list of characters"),
    (f"x = {[ord(c) for c in SECRET]!r}", "list of character codes"),
    ("x = '" + "".join(f"%{b:02x}" for b in SECRET.encode()) + "'", "percent-encoded"),
    ("x = '" + "".join(f"\\x{b:02x}" for b in SECRET.encode()) + "'", "escaped"),
    ("x = '" + "".join(f"\\u{ord(c):04x}" for c in SECRET) + "'", "escaped"),
    ("x = '" + "".join(f"\\{b:03o}" for b in SECRET.encode()) + "'", "escaped"),
    (base64.b64encode(SECRET.encode()).decode(), "base64"),
    (base64.b64encode(b"token: " + SECRET.encode()).decode(), "base64"),
    (base64.urlsafe_b64encode(b"ab" + SECRET.encode() + b"cd").decode(), "base64"),
    (base64.b32encode(b"xyz" + SECRET.encode()).decode(), "base32"),
])
def test_each_common_encoding_of_a_held_value_is_found(text: str, form: str) -> None:
    assert form in found_forms(SECRET, text)


def test_ordinary_text_and_values_too_short_to_search_are_not_found() -> None:
    assert found_forms(SECRET, "def add(a, b):\n    return a + b\n") == ()
    assert found_forms("abc", "abc cba 616263") == ()


def test_findings_name_the_variable_and_file_never_the_value() -> None:
    lines = [DiffLine(path="a.py", line_number=1, added=True, text=SECRET[::-1]),
             DiffLine(path="b.py", line_number=1, added=False, text=SECRET),
             DiffLine(path="c.py", line_number=2, added=True, text="nothing")]
    findings = held_secret_findings({"DEPLOY_TOKEN": SECRET, "SHORT": "x"}, lines)
    assert [(f.severity, f.file_path, f.blocks_auto_pr, f.message) for f in findings] == [
        (Severity.CRITICAL, "a.py", True,
         "the patch adds the value of DEPLOY_TOKEN (reversed) in a.py"),
        (Severity.WARNING, None, True, "the agent held secrets DEPLOY_TOKEN, SHORT ([env] "
                                       "passthrough): a person reviews the patch before any PR"),
    ]
    assert all(SECRET not in f.message for f in findings)
    assert held_secret_findings({}, lines) == []


def test_a_variable_carrying_the_model_key_in_any_form_never_reaches_the_sandbox() -> None:
    env = {
        "PATH": "/usr/bin",
        "ANTHROPIC_API_KEY": KEY,
        "AUTH_HEADER": f"Bearer {KEY}",
        "PACKED": base64.b64encode(f"user:{KEY}".encode()).decode(),
        "HEXED": KEY.encode().hex(),
        "BACKWARDS": KEY[::-1],
        "QUOTED": urllib.parse.quote(f"k={KEY}", safe=""),
        "DEPLOY_TOKEN": SECRET,
    }
    kept = without_keys(env, source={"ANTHROPIC_API_KEY": KEY})
    assert kept == {"PATH": "/usr/bin", "DEPLOY_TOKEN": SECRET}
    assert without_keys(env, key=KEY, source={}) == kept


def test_a_model_endpoint_passed_through_is_no_secret_unless_it_carries_credentials() -> None:
    assert held({"ANTHROPIC_BASE_URL": "http://localhost:8080", "DEPLOY_TOKEN": SECRET,
                 "OPENAI_BASE_URL": "https://me:pw@proxy.example/v1", "EMPTY": ""}) == {
        "DEPLOY_TOKEN": SECRET, "OPENAI_BASE_URL": "https://me:pw@proxy.example/v1"}


def test_a_known_value_is_redacted_hex_encoded_and_reversed_too() -> None:
    from agentctl.domain.redaction import Redactor

    clean = Redactor().knowing([SECRET]).clean
    for shown in (SECRET.encode().hex(), SECRET.encode().hex().upper(), SECRET[::-1]):
        assert clean(f"id = {shown}\n") == "id = [REDACTED:secret-value]\n"
