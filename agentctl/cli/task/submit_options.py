"""The options of `task submit`, declared once each, so that the command reads as what it does.
Help texts are the command's own (`agentctl task submit --help`)."""


from pathlib import Path
from typing import Annotated

import typer

from agentctl.cli.options import AGENT_SPECS, Flag

Repo = Annotated[str | None, typer.Option(
    "--repo", metavar="PATH|URL",
    help="The repository: a local git work tree, a git URL, or a config alias.")]
Base = Annotated[str | None, typer.Option(
    "--base", metavar="REF",
    help="Base ref to work from. (default: the repository's current branch)")]
Type = Annotated[str | None, typer.Option("--type", metavar="TYPE", help=(
    "dependency_upgrade, api_migration, bug_fix, refactor, test_fix, lint_fix, docs or custom."))]
Instruction = Annotated[str | None, typer.Option("--instruction", metavar="TEXT",
                                                 help="What to change, in words.")]
Title = Annotated[str | None, typer.Option(
    "--title", metavar="TEXT", help="Short title. (default: first line of the instruction)")]
Allow = Annotated[list[str] | None, typer.Option(
    "--allow", metavar="GLOB", help="Only paths matching these globs may change (repeatable).")]
Forbid = Annotated[list[str] | None, typer.Option(
    "--forbid", metavar="GLOB", help="Paths matching these globs must not change (repeatable).")]
Verify = Annotated[list[str] | None, typer.Option(
    "--verify", metavar="CMD", help="Verification command, added to config's (repeatable).")]
MustPass = Annotated[list[str] | None, typer.Option("--must-pass", metavar="TEST_ID", help=(
    "A test that must pass with the patch, as its runner names it (repeatable)."))]
TestPatch = Annotated[str | None, typer.Option("--test-patch", metavar="FILE", help=(
    "A diff of tests over the base (SWE-bench's test_patch): the patch is judged by them, "
    "applied over its code, and its own edits to them do not count."))]
AllowRemovedTests = Annotated[bool, Flag("--allow-removed-tests", help=(
    "Tests that passed on the base may vanish (a task that removes tests)."))]
Autonomy = Annotated[str | None, typer.Option("--autonomy", metavar="LEVEL", help=(
    "dry_run, draft_pr, supervised_pr or auto_pr. (default: policy.default_autonomy)"))]
Label = Annotated[list[str] | None, typer.Option("--label", metavar="K=V",
                                                 help="Label (repeatable).")]
Session = Annotated[str | None, typer.Option("--session", metavar="ID",
                                             help="The session this task came from.")]
File = Annotated[Path | None, typer.Option("--file", metavar="TASK.json|TASK.toml", help=(
    "Read the request from a file (the seed's request JSON as is); flags override it."))]
RunNow = Annotated[bool, Flag("--run", help="Start a run right away.")]
Agent = Annotated[str | None, typer.Option("--agent", metavar="SPEC", help=(
    f"With --run: {AGENT_SPECS}."))]
Detach = Annotated[bool, Flag("--detach", help="With --run: queue the run for a "
                              "worker and return at once.")]
KeepWorkspace = Annotated[bool, Flag("--keep-workspace", help="With --run: keep the "
                                     "workspace after the run.")]
Interactive = Annotated[bool, Flag("--interactive", help="With --run: ask at the terminal "
                                   "before a tool call that matches an `ask` rule.")]
NoInput = Annotated[bool, Flag("--no-input", help="Never ask: what is missing is an "
                               "error, as when stdin is not a terminal.")]
