"""Options shared by many commands."""


from enum import Enum
from typing import Annotated, Any, TypeVar

import typer

from agentctl.domain.errors import BadInput

S = TypeVar("S", bound=Enum)


def Flag(*names: str, **options: Any) -> Any:  # noqa: N802 - reads like typer.Option
    """A boolean flag; an empty metavar keeps help from showing a `<bool>` value it never takes."""
    return typer.Option(*names, metavar="", **options)


def status_filter(statuses: type[S], text: str | None, what: str) -> S | None:
    """A listing's `--status`, in any case, as its enum; BadInput names the ones there are."""
    if text is None:
        return None
    if text.upper() not in statuses.__members__:
        raise BadInput(f"unknown {what} status {text!r}; expected one of: "
                       f"{', '.join(statuses.__members__)}")
    return statuses[text.upper()]


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
NewestLimitOption = Annotated[int, typer.Option("--limit", min=1, max=MAX_LIMIT,
                                               help="At most this many, newest first.")]
CancelReasonOption = Annotated[str, typer.Option("--reason", help="Why, for the audit trail.")]
CancelledByOption = Annotated[str | None, typer.Option(
    "--by", metavar="WHO", help="Who cancels. (default: the current user)")]
NoPagerOption = Annotated[bool, Flag("--no-pager", help="Write straight to stdout, without "
                                     "a pager. (default on a terminal: AGENTCTL_PAGER, PAGER "
                                     "or less -FRX)")]

# What `--agent` takes, for the commands that start a run
AGENT_SPECS = ("claude[:MODEL], codex[:MODEL], copilot[:MODEL], gemini[:MODEL], "
               "opencode[:PROVIDER/MODEL], script:PLAN.toml, patch:FILE.diff, command:CMD or noop")
