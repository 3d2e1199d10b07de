"""`agentctl init`: a documented config file here, and the state home."""


import json
import sys
from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer
from rich.prompt import Confirm

from agentctl.cli.cancel import cancellable
from agentctl.cli.context import state
from agentctl.cli.options import Flag
from agentctl.cli.output import err, hint, out
from agentctl.cli.render.style import escape
from agentctl.config import CONFIG_FILENAME
from agentctl.domain.errors import BadInput
from agentctl.services.actions.test_commands import detected_test_commands
from agentctl.services.queries.repositories import repository_here


def init(
    ctx: typer.Context,
    force: Annotated[bool, Flag("--force", help="Overwrite an existing .agentctl.toml."
                                        )] = False,
) -> None:
    """Write .agentctl.toml (every key documented, with its default) and create the state home."""


    target = Path.cwd() / CONFIG_FILENAME
    if target.exists() and not force:
        raise BadInput(f"{target} already exists; edit it, or pass --force to overwrite it")
    example = files("agentctl.resources").joinpath("agentctl.example.toml").read_text("utf-8")
    current = state(ctx)
    current.store.ensure_schema()
    commands = _proposed_checks(Path.cwd())
    if commands:

        example = example.replace("\ncommands = []\n", "\ncommands = "
                                  f"{json.dumps(list(commands))}\n", 1)
    target.write_text(example, encoding="utf-8")
    out().print(f"wrote {target}")
    out().print(f"state home: {current.home.root}")


def _proposed_checks(cwd: Path) -> tuple[str, ...]:
    """The test commands this repository's files imply: asked at a terminal, taken without one
    (and said so: the file is the person's to edit)."""
    detected = detected_test_commands(Path(repository_here(cwd) or cwd))
    if not detected:
        return ()
    shown = "; ".join(detected)
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        hint(f"detected test command: {shown}; written under [verification] commands")
        return detected
    with cancellable():
        return detected if Confirm.ask(f"Verify every run with [bold]{escape(shown)}[/]?",
                                       console=err(), default=True) else ()
