"""The `agentctl verdict` group: its commands in the order `agentctl verdict --help` lists
them, each imported only when it runs."""


import typer

from agentctl.cli.lazy import Lazy, LazyGroup


class VerdictGroup(LazyGroup):
    """Each command's module and first help paragraph (tests/e2e/test_help.py checks them)."""

    lazy = {
        "show": Lazy("agentctl.cli.verdict.show:show", "Show a run's verdict: status, PR "
                     "eligibility, reasons, evidence (by name and short hash; --full for whole "
                     "hashes and paths)."),
        "explain": Lazy("agentctl.cli.verdict.show:explain", "Walk the decision chain "
                        "(boundary, apply, verification, judge, autonomy, eligibility, "
                        "approvals) with the evidence artifact behind each link (`agentctl "
                        "artifact show RUN NAME` prints one)."),
        "approve": Lazy("agentctl.cli.verdict.decide:approve", "Approve a verdict that awaits "
                        "a human (NEEDS_APPROVAL); its reasons stay as they are."),
        "reject": Lazy("agentctl.cli.verdict.decide:reject", "Reject a verdict: no PR will be "
                       "opened from this run."),
    }


app = typer.Typer(help="Verdicts: whether a run's patch is fit for a PR, and why.",
                  cls=VerdictGroup, no_args_is_help=True)
