"""`agentctl init`: a documented config file here, and the state home."""


from pathlib import Path
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag


def init(
    ctx: typer.Context,
    force: Annotated[bool, Flag("--force", help="Overwrite an existing .agentctl.toml."
                                        )] = False,
) -> None:
    """Write .agentctl.toml (every key documented, with its default) and create the state home."""
    from importlib.resources import files

    from agentctl.cli.output import out
    from agentctl.config import CONFIG_FILENAME
    from agentctl.domain.errors import BadInput

    target = Path.cwd() / CONFIG_FILENAME
    if target.exists() and not force:
        raise BadInput(f"{target} already exists; edit it, or pass --force to overwrite it")
    example = files("agentctl.resources").joinpath("agentctl.example.toml").read_text("utf-8")
    current = state(ctx)
    current.store.ensure_schema()
    target.write_text(example, encoding="utf-8")
    out().print(f"wrote {target}")
    out().print(f"state home: {current.home.root}")
