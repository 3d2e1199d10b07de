"""`[store]`: the database URL and the artifact folder from the config file, on both stores;
a wrong URL is one line and exit 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest


def command(agentctl: Callable[..., object], *args: str, cwd: Path,
            env: dict[str, str] | None = None) -> object:
    result = agentctl(*args, cwd=cwd, env={"AGENTCTL_DATABASE_URL": "", **(env or {})})
    return result


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_the_store_section_chooses_database_and_artifact_folder(
        kind: str, agentctl: Callable[..., object], repo: Path, tmp_path: Path,
        request: pytest.FixtureRequest) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shared = tmp_path / "shared-artifacts"
    url = request.getfixturevalue("postgres").database() if kind == "postgresql" else \
        f"sqlite:///{tmp_path / 'elsewhere.db'}"
    (project / ".agentctl.toml").write_text(f'[store]\nurl = "{url}"\nartifacts = "{shared}"\n')

    task = command(agentctl, "task", "submit", "--repo", str(repo), "--type", "bug_fix",
                   "--instruction", "fix the greeting", "--json", cwd=project)
    assert task.returncode == 0, task.stderr  # type: ignore[attr-defined]
    task_id = task.json()["taskId"]  # type: ignore[attr-defined]
    started = command(agentctl, "run", "start", task_id, "--agent", "noop", "--json", cwd=project)
    assert started.returncode in (0, 1), started.stderr  # type: ignore[attr-defined]
    run_id = started.json()["runId"]  # type: ignore[attr-defined]

    listed = command(agentctl, "artifact", "list", run_id, "--json", cwd=project)
    assert listed.returncode == 0, listed.stderr  # type: ignore[attr-defined]
    artifacts = json.loads(listed.stdout)  # type: ignore[attr-defined]
    assert artifacts
    for artifact in artifacts:  # each in the configured folder, and readable through agentctl
        assert (shared / artifact["uri"].removeprefix("artifacts/")).is_file()
        shown = command(agentctl, "artifact", "show", artifact["artifactId"], cwd=project)
        assert shown.returncode == 0, shown.stderr  # type: ignore[attr-defined]
    assert not (tmp_path / "home" / "artifacts").exists()
    if kind == "sqlite":
        assert (tmp_path / "elsewhere.db").exists()
    # elsewhere (no config file) the same home shows nothing of it: the config chose the store
    other = command(agentctl, "run", "list", "--json", cwd=tmp_path)
    assert run_id not in other.stdout  # type: ignore[attr-defined]


def test_a_database_url_agentctl_cannot_use_is_one_line_and_exit_2(
        cli: Callable[..., object], tmp_path: Path) -> None:
    """In-process (`cli`): only the config is read."""
    project = tmp_path / "project"
    project.mkdir()
    (project / ".agentctl.toml").write_text('[store]\nurl = "mysql://db/agentctl"\n')
    result = command(cli, "task", "list", cwd=project)
    assert result.returncode == 2  # type: ignore[attr-defined]
    assert result.stdout == ""  # type: ignore[attr-defined]
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and "store.url" in lines[0] and "postgresql+psycopg://" in lines[0]
