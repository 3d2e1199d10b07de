"""Config via the CLI: a bad .agentctl.toml found upwards is one clear error; `init` writes one.
In-process (`cli`, tests/cli_runner.py)."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

EXAMPLE = files("agentctl.resources").joinpath("agentctl.example.toml").read_text("utf-8")


def submit(cli, repo: Path, cwd: Path, *extra: str):  # type: ignore[no-untyped-def]
    return cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
               "--instruction", "x", *extra, cwd=cwd)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder two levels above the working directory `project/a/b`."""
    (tmp_path / "project" / "a" / "b").mkdir(parents=True)
    return tmp_path / "project"


@pytest.mark.parametrize(("text", "fragments"), [
    ("[policy]\nmax_autonomy = \"dry_run\"\nmax_autonomy = \"auto_pr\"\n",
     ("invalid TOML", "line 3")),
    ("[policy]\nmax_autonomy = \"yolo\"\n", ("'policy.max_autonomy'", "dry_run, draft_pr")),
    ("[boundary]\nforbiden = [\"infra/**\"]\n", ("unknown key 'boundary.forbiden'",)),
    ("[budgets]\nmax_attempts = 2\n", ("unknown section [budgets]",)),
], ids=["malformed", "bad-value", "unknown-key", "unknown-section"])
def test_bad_config_found_upwards_is_one_error_naming_the_file(
    cli, repo: Path, project: Path, home: Path, error_line, text: str,
    fragments: tuple[str, ...],
) -> None:
    config = project / ".agentctl.toml"
    config.write_text(text)
    result = submit(cli, repo, project / "a" / "b")
    assert result.returncode == 2, result.stdout
    line = error_line(result.stderr)
    assert str(config) in line
    for fragment in fragments:
        assert fragment in line
    assert result.stdout == ""


def test_bad_config_writes_nothing(cli, repo: Path, project: Path, home: Path,
                                   state_of) -> None:
    (project / ".agentctl.toml").write_text("[policy\n")
    assert submit(cli, repo, project).returncode == 2
    assert state_of(home) is None


def test_explicit_config_option_and_variable(cli, repo: Path, project: Path,
                                             tmp_path: Path, error_line) -> None:
    (project / ".agentctl.toml").write_text("[policy\n")  # would fail if it were read
    chosen = tmp_path / "chosen.toml"
    chosen.write_text('[policy]\ndefault_autonomy = "draft_pr"\n')
    by_option = cli("--config", str(chosen), "task", "submit", "--repo", str(repo), "--type",
                    "bug_fix", "--instruction", "x", "--json", cwd=project)
    assert by_option.returncode == 0, by_option.stderr
    assert by_option.json()["autonomyLevel"] == "draft_pr"

    missing = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                  "--instruction", "x", cwd=project,
                  env={"AGENTCTL_CONFIG": str(tmp_path / "missing.toml")})
    assert missing.returncode == 2
    assert f"{tmp_path / 'missing.toml'}: config file not found" in error_line(missing.stderr)


def test_read_only_commands_refuse_a_config_that_does_not_load(cli, project: Path,
                                                               error_line) -> None:
    """Its `[store]` may name another store: reading the default one instead would mislead."""
    (project / ".agentctl.toml").write_text("[policy\n")
    result = cli("task", "list", cwd=project)
    assert result.returncode == 2
    assert "invalid TOML" in error_line(result.stderr)


def test_init_writes_the_documented_config_and_creates_the_home(
    cli, tmp_path: Path, home: Path, state_of, error_line, repo: Path,
) -> None:
    workdir = tmp_path / "fresh"
    workdir.mkdir()
    created = cli("init", cwd=workdir)
    assert created.returncode == 0, created.stderr
    config = workdir / ".agentctl.toml"
    assert config.read_text("utf-8") == EXAMPLE
    assert str(config) in created.stdout and str(home) in created.stdout
    assert tomllib.loads(config.read_text("utf-8"))["policy"]["max_autonomy"] == "supervised_pr"
    state = state_of(home)
    assert state is not None and state["task"] == 0 and state["event"] == 0

    config.write_text('[policy]\nmax_autonomy = "auto_pr"\n')
    refused = cli("init", cwd=workdir)
    assert refused.returncode == 2
    line = error_line(refused.stderr)
    assert str(config) in line and "already exists" in line and "--force" in line
    assert config.read_text("utf-8") == '[policy]\nmax_autonomy = "auto_pr"\n'

    forced = cli("init", "--force", cwd=workdir)
    assert forced.returncode == 0, forced.stderr
    assert config.read_text("utf-8") == EXAMPLE

    # the written file is a valid config that submit picks up
    task = cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
               "--instruction", "x", "--json", cwd=workdir)
    assert task.returncode == 0, task.stderr
    assert task.json()["autonomyLevel"] == "dry_run"
