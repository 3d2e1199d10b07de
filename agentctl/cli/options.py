"""Options shared by many commands."""


from typing import Annotated, Any

import typer


def Flag(*names: str, **options: Any) -> Any:  # noqa: N802 - reads like typer.Option
    """A boolean flag; an empty metavar keeps help from showing a `<bool>` value it never takes."""
    return typer.Option(*names, metavar="", **options)


MAX_LIMIT = 1_000_000  # a listing's --limit; past it SQLite's integers overflow

JsonOption = Annotated[bool, Flag("--json", help="Print JSON instead of text.")]
RunArgument = Annotated[str | None, typer.Argument(
    metavar="[RUN]", help="Run id or unique prefix. (default: the newest run)")]
