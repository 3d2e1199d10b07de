"""The sandbox's pure rules: network allow rules, the unsandboxed eligibility cap, the profile in
the spec digest, and how toolchain dirs are found on a PATH."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from agentctl.domain.enums import PrEligibility
from agentctl.domain.errors import BadInput
from agentctl.domain.sandbox import (
    SandboxMode,
    SandboxProfile,
    matching_rule,
    sandbox_reason,
    validate_rule,
)
from agentctl.domain.verdict import unsandboxed_cap
from agentctl.execution.sandboxing.sandbox import configured_dirs, model_endpoints, toolchain_dirs
from agentctl.services.attempts.confinement import named_paths

E = PrEligibility


@pytest.mark.parametrize(("rules", "host", "port", "expected"), [
    (("pypi.org:443",), "pypi.org", 443, "pypi.org:443"),
    (("pypi.org:443",), "PyPI.org.", 443, "pypi.org:443"),
    (("pypi.org:443",), "pypi.org", 80, None),
    (("pypi.org",), "pypi.org", 8443, "pypi.org"),
    (("*.internal.example:443",), "a.b.internal.example", 443, "*.internal.example:443"),
    (("*.internal.example:443",), "internal.example", 443, None),
    (("*.internal.example:443",), "evil.example", 443, None),
    (("localhost:*",), "localhost", 1234, "localhost:*"),
    ((), "pypi.org", 443, None),
])
def test_a_host_passes_only_when_a_rule_names_it(rules: tuple[str, ...], host: str, port: int,
                                                 expected: str | None) -> None:
    assert matching_rule(rules, host, port) == expected


@pytest.mark.parametrize("rule", ["", "https://pypi.org", "pypi.org:http", "pypi.org:70000",
                                  "user@host:22", "a b:1"])
def test_a_malformed_rule_is_bad_input_naming_it(rule: str) -> None:
    with pytest.raises(BadInput, match="host\\[:port\\]|out of range"):
        validate_rule(rule)


def test_an_unsandboxed_run_is_at_best_eligible_after_a_human() -> None:
    assert unsandboxed_cap(E.ELIGIBLE_FOR_AUTO_PR, "x")[0] is E.ELIGIBLE_AFTER_HUMAN_APPROVAL
    for lower in (E.ELIGIBLE_AFTER_HUMAN_APPROVAL, E.DRAFT_ONLY, E.NOT_ELIGIBLE):
        assert unsandboxed_cap(lower, "x") == (lower, "x")
    assert sandbox_reason(SandboxProfile()) is None
    assert "sandbox was off" in str(sandbox_reason(SandboxProfile(mode=SandboxMode.OFF)))


def test_the_profile_is_part_of_the_spec_digest() -> None:
    from agentctl.config import defaults
    from agentctl.domain.enums import AutonomyLevel, TaskType
    from agentctl.services.attempts.spec import build_spec

    class _Task:
        forbidden_paths: tuple[str, ...] = ()
        allowed_paths: tuple[str, ...] = ()
        verification_commands: tuple[str, ...] = ()
        must_pass: tuple[str, ...] = ()
        allow_removed_tests = False
        test_patch: str | None = None
        repository, base_ref, instruction = "/r", "main", "x"
        task_type, autonomy_level = TaskType.BUG_FIX, AutonomyLevel.DRY_RUN

    config = defaults()
    on = build_spec(_Task(), config, base_commit="a" * 40, agent="noop",  # type: ignore[arg-type]
                    agent_digest=None)
    off = build_spec(_Task(), replace(config, sandbox=replace(  # type: ignore[arg-type]
        config.sandbox, mode=SandboxMode.OFF)), base_commit="a" * 40, agent="noop",
        agent_digest=None)
    assert on.sandbox.enabled and not off.sandbox.enabled
    assert on.digest() != off.digest()


def test_toolchains_under_hidden_places_are_bound_back_but_never_a_whole_home(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    for path in (".pyenv/shims", ".pyenv/versions/3.11/bin", "bin", ".cargo/bin"):
        (home / path).mkdir(parents=True)
    path = ":".join(str(home / p) for p in (".pyenv/shims", "bin", ".cargo/bin")) + ":/usr/bin"
    found = toolchain_dirs(path, [home])
    assert home / ".pyenv" in found and home / ".cargo" in found
    assert home / "bin" in found and home not in found
    assert Path("/usr") not in found  # visible anyway: only hidden places are bound back


def test_a_toolchain_whose_name_starts_like_another_is_not_taken_for_inside_it(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    for path in (".cargo/bin", ".cargo-nightly/bin"):
        (home / path).mkdir(parents=True)
    found = toolchain_dirs(f"{home}/.cargo/bin:{home}/.cargo-nightly/bin", [home])
    assert home / ".cargo" in found and home / ".cargo-nightly" in found


def test_configured_dirs_expand_the_home_and_skip_relative_entries() -> None:
    assert configured_dirs(["~/.m2", "/opt/sdk", "relative"], Path("/home/u")) == (
        Path("/home/u/.m2"), Path("/opt/sdk"))


def test_a_command_line_hands_over_named_files_but_no_dotfiles(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text("")
    secret = tmp_path / ".ssh" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("key")
    protected = tmp_path / "state"
    protected.mkdir()
    (protected / "db").write_text("")
    line = f"python3 {script} --key={secret} {protected / 'db'} {tmp_path / 'missing'}"
    assert named_paths(line, [protected]) == (script,)


def test_a_command_line_naming_a_venvs_interpreter_hands_over_the_venv_even_a_dot_venv(
        tmp_path: Path) -> None:
    """The interpreter alone runs without its packages: the venv goes, `.venv` as well, and
    still not one in a protected place."""
    venvs = []
    for name in (".venv", "env", "state/.venv"):
        (tmp_path / name / "bin").mkdir(parents=True)
        (tmp_path / name / "pyvenv.cfg").write_text("home = /usr/bin\n")
        (tmp_path / name / "bin" / "python").symlink_to(sys.executable)
        venvs.append(tmp_path / name)
    not_a_venv = tmp_path / ".tools" / "bin" / "python"
    not_a_venv.parent.mkdir(parents=True)
    not_a_venv.write_text("")
    line = " && ".join(f"{venv}/bin/python -m pytest" for venv in venvs) + f" && {not_a_venv}"
    assert named_paths(line, [tmp_path / "state"]) == tuple(venvs[:2])


def test_the_model_endpoint_comes_from_the_base_url_or_the_vendor_default() -> None:
    assert model_endpoints({"ANTHROPIC_BASE_URL": "http://localhost:8080/x"})[0] == \
        "localhost:8080"
    assert "api.anthropic.com:443" in model_endpoints({})
