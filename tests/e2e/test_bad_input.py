"""Bad input: one clear line on stderr, exit 2, no traceback, and nothing written.

Each case runs twice: against a home that already holds tasks and a session (the database must be
unchanged: same row counts, same last event), and, where it does not need existing records,
against a fresh home (no database may appear). In-process (`run_cli`, tests/cli_runner.py): the
same entry point as the installed command, without an interpreter start per case.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

TYPES = "dependency_upgrade, api_migration, bug_fix, refactor, test_fix, lint_fix, docs, custom"
LEVELS = "dry_run, draft_pr, supervised_pr, auto_pr"

# (id, arguments with {repo} {plain} {files} placeholders, fragments the error line must contain)
SUBMIT = ("task", "submit", "--repo", "{repo}", "--type", "bug_fix")
CASES: list[tuple] = [  # (id, args, fragments[, mark])
    ("empty-instruction", (*SUBMIT, "--instruction", ""), ("instruction is empty",)),
    ("blank-instruction", (*SUBMIT, "--instruction", " \n\t "), ("instruction is empty",)),
    ("unknown-type", ("task", "submit", "--repo", "{repo}", "--type", "bugfix", "--instruction",
                      "x"), ("unknown task type 'bugfix'", TYPES)),
    ("unknown-autonomy", (*SUBMIT, "--instruction", "x", "--autonomy", "yolo"),
     ("unknown autonomy level 'yolo'", LEVELS)),
    ("no-repo", ("task", "submit", "--type", "bug_fix", "--instruction", "x"),
     ("missing repository",)),
    ("repo-missing", ("task", "submit", "--repo", "{plain}/nope", "--type", "bug_fix",
                      "--instruction", "x"), ("does not exist", "nope")),
    ("repo-not-git", ("task", "submit", "--repo", "{plain}", "--type", "bug_fix",
                      "--instruction", "x"), ("is not a git repository",)),
    ("base-missing", (*SUBMIT, "--instruction", "x", "--base", "no-such-branch"),
     ("base ref 'no-such-branch' does not exist",)),
    ("base-option-like", (*SUBMIT, "--instruction", "x", "--base", "--output=x"),
     ("base ref",)),
    ("base-reflog-index", (*SUBMIT, "--instruction", "x", "--base", "HEAD@{{5}}"),
     ("base ref 'HEAD@{5}'",)),
    ("glob-unclosed", (*SUBMIT, "--instruction", "x", "--allow", "src/[abc"),
     ("malformed glob 'src/[abc'", "never closed")),
    ("glob-negated", (*SUBMIT, "--instruction", "x", "--forbid", "!src/**"),
     ("malformed glob '!src/**'", "negation")),
    ("glob-uncompilable", (*SUBMIT, "--instruction", "x", "--forbid", "[z-a]"),
     ("malformed glob",)),
    ("label-no-equals", (*SUBMIT, "--instruction", "x", "--label", "team"),
     ("label 'team' must be KEY=VALUE",)),
    ("file-missing", ("task", "submit", "--file", "{files}/missing.json"),
     ("cannot read task file", "missing.json")),
    ("file-not-utf8", ("task", "submit", "--file", "{files}/latin1.json"),
     ("cannot read task file",)),
    ("file-bad-json", ("task", "submit", "--file", "{files}/bad.json"),
     ("not valid JSON", "line 2")),
    ("file-bad-toml", ("task", "submit", "--file", "{files}/bad.toml"),
     ("not valid TOML", "line 2")),
    ("file-wrong-type", ("task", "submit", "--file", "{files}/wrong-type.json"),
     ("'autonomyLevel' must be a string",)),
    ("file-unknown-field", ("task", "submit", "--file", "{files}/unknown-field.json"),
     ("unknown field 'instructions'",)),
    ("file-empty-instruction", ("task", "submit", "--file", "{files}/empty-instruction.json"),
     ("instruction is empty",)),
    ("submit-unknown-session", (*SUBMIT, "--instruction", "x", "--session", "ZZZZZZ"),
     ("no session matches 'ZZZZZZ'",)),
    ("show-unknown", ("task", "show", "ZZZZZZ"), ("no task matches 'ZZZZZZ'",)),
    ("cancel-unknown", ("task", "cancel", "ZZZZZZ"), ("no task matches 'ZZZZZZ'",)),
    ("cancel-cancelled", ("task", "cancel", "{cancelled}"),
     ("task cannot go from CANCELLED to CANCELLED",)),
    ("list-unknown-status", ("task", "list", "--status", "DONE"),
     ("unknown task status 'DONE'", "READY_FOR_RUN")),
    ("session-say-unknown", ("session", "say", "ZZZZZZ", "hello"), ("no session matches",)),
    ("session-say-role", ("session", "say", "{session}", "hello", "--role", "bot"),
     ("unknown role 'bot'", "user, system, agent")),
    ("session-say-empty", ("session", "say", "{session}", "  "), ("message text is empty",)),
    ("events-unknown-task", ("events", "--task", "ZZZZZZ"), ("no task matches",)),
    ("events-unknown-run", ("events", "--run", "ZZZZZZ"), ("no run matches",)),
    ("unknown-option", ("task", "submit", "--colour"), ("No such option", "--colour")),
    ("pr-remote-option", ("pr", "create", "ZZZZZZ", "--remote=--receive-pack=touch /tmp/pwn"),
     ("invalid remote '--receive-pack=touch /tmp/pwn'", "does not start with '-'")),
    ("pr-branch-full-ref", ("pr", "create", "ZZZZZZ", "--branch", "refs/heads/main"),
     ("invalid branch name 'refs/heads/main'", "not a full ref name")),
    ("pr-branch-option", ("pr", "create", "ZZZZZZ", "--branch=--force"),
     ("invalid branch name '--force'",)),
]

# On a fresh home a rejected command must not even create the database: one case per code path.
FRESH = ("empty-instruction", "repo-not-git", "glob-unclosed", "label-no-equals", "file-bad-json",
         "show-unknown", "cancel-unknown", "session-say-unknown", "events-unknown-task",
         "unknown-option")


def _case(case: tuple) -> object:
    return pytest.param(case[1], case[2], id=case[0], marks=case[3:])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_cli) -> dict[str, Path]:
    """A repository, a plain folder, request files, and a home with two tasks and a session."""
    root = tmp_path_factory.mktemp("bad-input")
    repo = repo_maker(root / "repo", {"README.md": "# repo\n"})
    plain = root / "plain"
    plain.mkdir()
    files = root / "files"
    files.mkdir()
    for name, text in {
        "bad.json": '{\n  "type": "bug_fix",,\n}',
        "bad.toml": 'type = "bug_fix"\ninstruction = \n',
        "wrong-type.json": f'{{"type": "bug_fix", "repository": "{repo}", "instruction": "x", '
                           '"autonomyLevel": 3}',
        "wrong-labels.json": f'{{"type": "bug_fix", "repository": "{repo}", "instruction": "x", '
                             '"labels": ["a"]}',
        "unknown-field.json": f'{{"type": "bug_fix", "repository": "{repo}", "instructions": "x"}}',
        "empty-instruction.json": f'{{"type": "bug_fix", "repository": "{repo}", '
                                  '"instruction": "   "}',
    }.items():
        (files / name).write_text(text)
    (files / "latin1.json").write_bytes(b'{"instruction": "caf\xe9"}')
    home = root / "home"
    cwd = root / "cwd"
    cwd.mkdir()
    task_ids = []
    for _ in range(2):
        done = run_cli("task", "submit", "--repo", str(repo), "--type", "bug_fix",
                       "--instruction", "existing", "--json", home=home, cwd=cwd)
        assert done.returncode == 0, done.stderr
        task_ids.append(done.json()["taskId"])
    assert run_cli("task", "cancel", task_ids[1], home=home, cwd=cwd).returncode == 0
    session = run_cli("session", "start", "--json", home=home, cwd=cwd)
    assert session.returncode == 0, session.stderr
    return {"repo": repo, "plain": plain, "files": files, "home": home, "cwd": cwd,
            "cancelled": task_ids[1][:20], "session": session.json()["sessionId"][8:20]}


def expand(args: tuple[str, ...], world: dict[str, object]) -> list[str]:
    return [a.format(**world) for a in args]


@pytest.mark.parametrize(("args", "fragments"), [_case(case) for case in CASES])
def test_bad_input_leaves_the_database_unchanged(
    world: dict[str, Path], run_cli, state_of, error_line, args: tuple[str, ...],
    fragments: tuple[str, ...],
) -> None:
    before = state_of(world["home"])
    result = run_cli(*expand(args, world), home=world["home"], cwd=world["cwd"])
    assert result.returncode == 2, (result.stdout, result.stderr)
    line = error_line(result.stderr)
    for fragment in fragments:
        assert fragment in line
    assert result.stdout == ""
    assert state_of(world["home"]) == before


@pytest.mark.parametrize(("args", "fragments"), [
    pytest.param(case[1], case[2], id=case[0]) for case in CASES if case[0] in FRESH
])
def test_bad_input_on_a_fresh_home_creates_no_database(
    world: dict[str, Path], run_cli, state_of, error_line, tmp_path: Path,
    args: tuple[str, ...], fragments: tuple[str, ...],
) -> None:
    home = tmp_path / "fresh-home"
    result = run_cli(*expand(args, world), home=home, cwd=world["cwd"])
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert fragments[0] in error_line(result.stderr)
    assert state_of(home) is None
    assert not home.exists()


def test_ambiguous_id_prefix_is_refused_naming_the_candidates(
    world: dict[str, Path], run_cli, state_of, error_line,
) -> None:
    before = state_of(world["home"])
    listed = run_cli("task", "list", "--json", home=world["home"], cwd=world["cwd"])
    ids = [task["taskId"] for task in json.loads(listed.stdout)]
    shared = os.path.commonprefix(ids)
    assert len(shared) >= len("task_") + 4, ids  # ids made together share their time prefix
    for args in (("task", "show", shared.removeprefix("task_")), ("task", "cancel", shared)):
        result = run_cli(*args, home=world["home"], cwd=world["cwd"])
        assert result.returncode == 2, result.stderr
        line = error_line(result.stderr)
        assert "ambiguous" in line and "task_01" in line
    assert state_of(world["home"]) == before
