"""`agentctl run start`: run a task here, or queue it for a worker, and answer the exit code its
verdict calls for."""


from pathlib import Path
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import AGENT_SPECS, Flag, JsonOption
from agentctl.cli.running import report_run, run_here_or_queue
from agentctl.services.lifecycle.start import StartRun, parse_agent, start_run


def start(
    ctx: typer.Context,
    task_id: Annotated[str, typer.Argument(metavar="TASK", help="Task id or unique prefix.")],
    agent: Annotated[str | None, typer.Option("--agent", metavar="SPEC", help=(
        f"{AGENT_SPECS}. (default: agent.default)"))] = None,
    detach: Annotated[bool, Flag("--detach", help="Queue the run for `agentctl worker` "
                      "and return at once.")] = False,
    interactive: Annotated[bool, Flag("--interactive", help="Ask at the terminal before "
                           "running a tool call that matches an `ask` rule.")] = False,
    keep_workspace: Annotated[bool, Flag("--keep-workspace", help="Keep the workspace "
                              "after the run, for inspection.")] = False,
    no_sandbox: Annotated[bool, Flag("--no-sandbox", help="Run the agent, tools, checks and "
                          "judge unconfined (recorded; the verdict then needs a human "
                          "approval).")] = False,
    as_json: JsonOption = False,
) -> None:
    """Run a task: workspace, agent, patch, verification, judge, verdict. Exit 1 unless the
    verdict is SUCCESS or SUCCESS_NEEDS_REVIEW."""
    current = state(ctx)
    spec = parse_agent(agent or current.config.agent.default, Path.cwd())
    started = run_here_or_queue(
        current, f"task {task_id}",
        lambda how: start_run(current.store, current.config, StartRun(task=task_id, how=how)),
        agent=spec, detach=detach, keep_workspace=keep_workspace, interactive=interactive,
        no_sandbox=no_sandbox)
    raise typer.Exit(report_run(current, started, detached=detach, as_json=as_json))
