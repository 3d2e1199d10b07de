"""Options shared by many commands."""


from typing import Annotated, Any

import typer


def Flag(*names: str, **options: Any) -> Any:  # noqa: N802 - reads like typer.Option
    """A boolean flag; an empty metavar keeps help from showing a `<bool>` value it never takes."""
    return typer.Option(*names, metavar="", **options)


# A command that hands its arguments on unparsed (`hook`, `mcp serve`).
PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True,
                "help_option_names": ["-h", "--help"]}

MAX_LIMIT = 1_000_000  # a listing's --limit; past it SQLite's integers overflow

JsonOption = Annotated[bool, Flag("--json", help="Print JSON instead of text.")]
RunArgument = Annotated[str | None, typer.Argument(
    metavar="[RUN]", help="Run id or unique prefix. (default: the newest run)")]
FullOption = Annotated[bool, Flag("--full", help="Whole ids, hashes and paths instead of "
                                  "short unique prefixes and names.")]
RepoOption = Annotated[str | None, typer.Option(
    "--repo", metavar="PATH|URL", help="Only this repository's. (default: every repository)")]
NoPagerOption = Annotated[bool, Flag("--no-pager", help="Write straight to stdout, without "
                                     "a pager. (default on a terminal: AGENTCTL_PAGER, PAGER "
                                     "or less -FRX)")]
