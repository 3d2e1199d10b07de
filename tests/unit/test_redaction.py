"""The Redactor's patterns, and redacting files of any size with bounded memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.domain.redaction import Redactor
from agentctl.execution.redact_stream import read_tail, redact_file

KEY_BLOCK = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----\n"
)
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5" * 4


def redact(text: str, *literals: str) -> str:
    return Redactor(literals=literals).clean(text)


def test_private_key_block_is_redacted_whole() -> None:
    assert redact(f"key:\n{KEY_BLOCK}after\n") == "key:\n[REDACTED:private-key]\nafter\n"


def test_aws_access_key_is_redacted() -> None:
    assert redact("id AKIAIOSFODNN7EXAMPLE here") == "id [REDACTED:aws-access-key] here"


def test_github_token_is_redacted() -> None:
    assert redact(f"token {GITHUB_TOKEN} end") == "token [REDACTED:github-token] end"


def test_credentials_in_a_url_are_redacted_and_the_host_kept() -> None:
    assert (redact("git clone https://bot:hunter2pass@github.com/org/repo.git")
            == "git clone https://[REDACTED:url-credentials]@github.com/org/repo.git")


@pytest.mark.parametrize(("text", "expected"), [
    ("DB_PASSWORD=hunter2hunter2", "DB_PASSWORD=[REDACTED:assignment]"),
    ("password: 'hunter22'", "password: '[REDACTED:assignment]'"),
    ('api_key = "abcd1234efgh"', 'api_key = "[REDACTED:assignment]"'),
    ("export SECRET_TOKEN=s3cr3tvalue", "export SECRET_TOKEN=[REDACTED:assignment]"),
])
def test_password_and_token_assignments_keep_the_name_and_hide_the_value(
    text: str, expected: str,
) -> None:
    assert redact(text) == expected


def test_known_literal_values_are_redacted_wherever_they_appear() -> None:
    assert (redact("value=plain s3cr3t-literal-value!", "s3cr3t-literal-value")
            == "value=plain [REDACTED:secret-value]!")


def test_literals_shorter_than_eight_characters_are_ignored() -> None:
    assert redact("the word short stays", "short") == "the word short stays"


@pytest.mark.parametrize("text", [
    "password = get_password()",
    "def test_password_reset():",
    "api_key = os.environ['API_KEY']",
    "password_reset_url = reset_url()",
    "see https://github.com/org/repo for the token docs",
    "AKIA is the prefix of an AWS key id",
])
def test_code_and_prose_about_secrets_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_redact_reports_how_many_secrets_it_found() -> None:
    text = f"{GITHUB_TOKEN}\nAKIAIOSFODNN7EXAMPLE\nnothing here\n"
    assert Redactor().redact(text)[1] == 2


def test_a_quoted_password_containing_spaces_is_redacted_whole() -> None:
    assert "horse" not in redact('PASSWORD="correct horse battery"')


def test_redact_file_handles_a_multi_megabyte_log(tmp_path: Path) -> None:
    lines = [f"line {n} ok\n" if n % 1000 else f"line {n} token {GITHUB_TOKEN}\n"
             for n in range(200_000)]
    source = tmp_path / "big.log"
    source.write_text("".join(lines))
    assert source.stat().st_size > 2 * 1024 * 1024  # several batches
    count = redact_file(source, tmp_path / "big.redacted", Redactor())
    redacted = (tmp_path / "big.redacted").read_text()
    assert count == 200
    assert GITHUB_TOKEN not in redacted
    assert redacted.count("[REDACTED:github-token]") == 200
    assert redacted.splitlines()[1] == "line 1 ok"
    assert len(redacted.splitlines()) == 200_000


def test_redact_file_redacts_a_private_key_block_split_over_lines(tmp_path: Path) -> None:
    source = tmp_path / "key.log"
    source.write_text(f"before\nconfig dump: {KEY_BLOCK}after\n")
    count = redact_file(source, tmp_path / "key.redacted", Redactor())
    assert count == 1
    assert (tmp_path / "key.redacted").read_text() == (
        "before\nconfig dump: [REDACTED:private-key]\nafter\n")


def test_a_key_block_straddling_a_batch_boundary_is_still_redacted(tmp_path: Path) -> None:
    filler = "x" * 99 + "\n"
    source = tmp_path / "key.log"
    source.write_text(filler * 10_485 + KEY_BLOCK + "after\n")  # BEGIN just before 1 MiB
    redact_file(source, tmp_path / "key.redacted", Redactor())
    redacted = (tmp_path / "key.redacted").read_text()
    assert "MIIE" not in redacted and "PRIVATE KEY" not in redacted
    assert redacted.endswith("[REDACTED:private-key]\nafter\n")


def test_a_key_block_without_an_end_is_redacted_to_the_end_of_the_file(tmp_path: Path) -> None:
    body = "".join(f"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo{n:08d}\n" for n in range(20_000))
    source = tmp_path / "key.log"
    source.write_text("start\n-----BEGIN PRIVATE KEY-----\n" + body)
    redact_file(source, tmp_path / "key.redacted", Redactor())
    assert (tmp_path / "key.redacted").read_text() == "start\n[REDACTED:private-key]"


def test_an_oversized_key_block_is_dropped_up_to_its_end_marker(tmp_path: Path) -> None:
    body = "".join(f"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo{n:08d}\n" for n in range(20_000))
    source = tmp_path / "key.log"
    source.write_text(f"-----BEGIN PRIVATE KEY-----\n{body}-----END PRIVATE KEY----- tail\nnext\n")
    redact_file(source, tmp_path / "key.redacted", Redactor())
    assert (tmp_path / "key.redacted").read_text() == "[REDACTED:private-key] tail\nnext\n"


def test_non_utf8_bytes_survive_redaction_unchanged(tmp_path: Path) -> None:
    source = tmp_path / "binary.log"
    source.write_bytes(b"\xff\xfe binary \x80\n" + GITHUB_TOKEN.encode() + b" \xc3\n")
    redact_file(source, tmp_path / "binary.redacted", Redactor())
    assert (tmp_path / "binary.redacted").read_bytes() == (
        b"\xff\xfe binary \x80\n[REDACTED:github-token] \xc3\n")


def test_an_enormous_single_line_is_processed_in_pieces(tmp_path: Path) -> None:
    source = tmp_path / "one-line.log"
    source.write_bytes(b"a" * (3 * 1024 * 1024) + b" AKIAIOSFODNN7EXAMPLE")
    count = redact_file(source, tmp_path / "one-line.redacted", Redactor())
    redacted = (tmp_path / "one-line.redacted").read_bytes()
    assert count == 1
    assert redacted == b"a" * (3 * 1024 * 1024) + b" [REDACTED:aws-access-key]"


def test_read_tail_returns_the_last_bytes_decoded_with_replacement(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"start\n" + b"y" * 100 + b"\n\xffend\n")
    assert read_tail(path, max_bytes=5) == "\ufffdend\n"
    assert read_tail(path).startswith("start\n")


def test_read_tail_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_tail(tmp_path / "missing") == ""
