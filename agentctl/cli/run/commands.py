"""The `agentctl run` group: its commands in the order `agentctl run --help` lists them, each
imported only when it runs (`run show` never loads the run pipeline `run start` needs)."""


import typer

from agentctl.cli.lazy import Lazy, LazyGroup


class RunGroup(LazyGroup):
    """Each command's module and first help paragraph (tests/e2e/test_help.py checks them)."""

    lazy = {
        "start": Lazy("agentctl.cli.run.start:start", "Run a task: workspace, agent, patch, "
                      "verification, judge, verdict. Exit 1 unless the verdict is SUCCESS or "
                      "SUCCESS_NEEDS_REVIEW."),
        "replay": Lazy("agentctl.cli.run.replay:replay", "Run a recorded claude/codex run "
                       "again, its model answering from the recorded exchanges (no model, no "
                       "key): the same task, base commit and agent CLI. Says whether the replay "
                       "is identical (tool calls, decisions, patch tree); exit 1 when it is "
                       "not."),
        "list": Lazy("agentctl.cli.run.show:list_", "List runs, newest first, with their "
                     "verdicts."),
        "show": Lazy("agentctl.cli.run.show:show", "Show a run (the newest without an id); "
                     "--tree draws everything it did (through a pager on a terminal, as "
                     "`verdict explain`)."),
        "diff": Lazy("agentctl.cli.run.show:diff", "Print a run's patch (patch.diff, verified "
                     "by its hash), coloured on a terminal."),
        "cancel": Lazy("agentctl.cli.run.cancel:cancel", "Cancel a run: a queued run at once, "
                       "a running one by its worker within seconds."),
        "report": Lazy("agentctl.cli.run.report:report", "A run for other tools and people: "
                       "SWE-bench's report.json, JUnit XML, a self-contained HTML page, CTRF or "
                       "ATIF."),
        "attest": Lazy("agentctl.cli.run.attest:attest", "What the run proved, as signed "
                       "in-toto Statements: JSON lines of DSSE envelopes (SLSA provenance, a "
                       "test-result per check, agentctl's run predicate) about the patch and its "
                       "tree. Check it with `agentctl attest verify` or any in-toto tool."),
        "open": Lazy("agentctl.cli.run.page:open_", "Write the run page (the newest run "
                     "without an id) to a temporary file and open it in the browser; the file's "
                     "path goes to stdout."),
        "trace": Lazy("agentctl.cli.run.trace_export:trace", "Export a finished run as one "
                      "OpenTelemetry trace over OTLP/HTTP."),
    }


app = typer.Typer(help="Runs: one execution of a task on a pinned commit, ending in a verdict.",
                  cls=RunGroup, no_args_is_help=True)
