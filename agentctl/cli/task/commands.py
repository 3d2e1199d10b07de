"""The `agentctl task` group: its commands in the order `agentctl task --help` lists them, each
imported only when it runs."""


import typer

from agentctl.cli.lazy import Lazy, LazyGroup


class TaskGroup(LazyGroup):
    """Each command's module and first help paragraph (tests/e2e/test_help.py checks them)."""

    lazy = {
        "submit": Lazy("agentctl.cli.task.submit:submit", "Submit a task; policy decides "
                       "READY_FOR_RUN or POLICY_DENIED (exit 2 with the reason)."),
        "list": Lazy("agentctl.cli.task.show:list_", "List tasks, newest first."),
        "show": Lazy("agentctl.cli.task.show:show", "Show one task and its runs."),
        "cancel": Lazy("agentctl.cli.task.cancel:cancel", "Cancel a task: no new run is "
                       "scheduled; its queued and running runs are cancelled."),
    }


app = typer.Typer(help="Submit and inspect tasks: structured, executable intent.",
                  cls=TaskGroup, no_args_is_help=True)
