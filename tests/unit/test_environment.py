"""The scrubbed environment and the values that must be redacted."""

from __future__ import annotations

import pytest

from agentctl.execution.environment import scrubbed_env, secret_values

DEFAULT_ALLOWLIST = ("PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR", "VIRTUAL_ENV")

SOURCE = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/dev",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_TIME": "en_GB.UTF-8",
    "LCX": "not-a-locale",
    "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "db_password": "hunter2hunter2",
    "SHORT_TOKEN": "abc",
    "EDITOR": "vim-is-not-a-secret",
    "NPM_CONFIG_REGISTRY": "https://registry.example.com",
    "DEPLOY_KEY": "deploy-key-value-123",
}


def test_only_allowlisted_variables_are_kept() -> None:
    env = scrubbed_env(DEFAULT_ALLOWLIST, source=SOURCE)
    assert env == {
        "PATH": "/usr/bin:/bin", "HOME": "/home/dev", "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8", "LC_TIME": "en_GB.UTF-8",
    }


def test_prefix_pattern_matches_names_that_start_with_the_prefix_only() -> None:
    env = scrubbed_env(("LC_*",), source=SOURCE)
    assert set(env) == {"LC_ALL", "LC_TIME"}


def test_names_are_case_sensitive() -> None:
    assert scrubbed_env(("path",), source=SOURCE) == {}


def test_passthrough_variables_are_kept_even_if_not_allowlisted() -> None:
    env = scrubbed_env(("PATH",), ("GITHUB_TOKEN", "NOT_SET"), source=SOURCE)
    assert env == {"PATH": "/usr/bin:/bin", "GITHUB_TOKEN": SOURCE["GITHUB_TOKEN"]}


def test_extra_variables_are_added_and_win_over_the_source() -> None:
    env = scrubbed_env(("PATH", "HOME"), source=SOURCE, extra={"HOME": "/tmp/ws", "CI": "1"})
    assert env == {"PATH": "/usr/bin:/bin", "HOME": "/tmp/ws", "CI": "1"}


def test_source_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTL_ENV_TEST", "kept")
    monkeypatch.setenv("AGENTCTL_ENV_TEST_TOKEN", "scrubbed-token-value")
    env = scrubbed_env(("AGENTCTL_ENV_TEST",))
    assert env == {"AGENTCTL_ENV_TEST": "kept"}
    assert "scrubbed-token-value" in secret_values()


def test_secret_values_are_variables_with_secret_looking_names() -> None:
    values = secret_values(source=SOURCE)
    assert set(values) == {
        SOURCE["GITHUB_TOKEN"], SOURCE["AWS_SECRET_ACCESS_KEY"], SOURCE["db_password"],
        SOURCE["DEPLOY_KEY"],
    }


def test_secret_values_include_every_passthrough_value_whatever_its_name() -> None:
    values = secret_values(("NPM_CONFIG_REGISTRY",), source=SOURCE)
    assert SOURCE["NPM_CONFIG_REGISTRY"] in values


def test_secret_values_shorter_than_eight_characters_are_left_out() -> None:
    values = secret_values(("SHORT_TOKEN",), source=SOURCE)
    assert "abc" not in values


def test_plain_variables_are_not_secret_values() -> None:
    values = secret_values(source=SOURCE)
    assert "vim-is-not-a-secret" not in values
    assert "/home/dev" not in values
    assert "C.UTF-8" not in values


def test_secret_values_come_longest_first_without_duplicates() -> None:
    source = {"A_TOKEN": "same-value-1234", "B_TOKEN": "same-value-1234",
              "C_KEY": "a-much-longer-value"}
    values = secret_values(source=source)
    assert values == ("a-much-longer-value", "same-value-1234")


@pytest.mark.parametrize("name", [
    "API_TOKEN", "client_secret", "SSH_KEY", "PGPASSWORD", "MYSQL_PASSWD", "GOOGLE_CREDENTIALS",
    "HTTP_AUTH", "SESSION_ID", "COOKIE_JAR", "PRIVATE_DATA",
])
def test_each_secret_word_in_a_name_marks_its_value_secret(name: str) -> None:
    assert secret_values(source={name: "value-of-a-secret"}) == ("value-of-a-secret",)


def test_an_allowlisted_variable_with_a_secret_looking_name_is_still_redacted() -> None:
    assert secret_values(source={"NPM_TOKEN": "npm-token-1234567"}) == ("npm-token-1234567",)
