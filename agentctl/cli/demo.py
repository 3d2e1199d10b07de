"""`agentctl demo`: a full dry-run on a bundled sample repository, in under a minute."""


import shutil
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag


def demo(
    ctx: typer.Context,
    home: Annotated[str | None, typer.Option("--home", metavar="DIR", help="State home for the "
                    "demo. (default: a new folder beside the sample repository)")] = None,
    keep: Annotated[bool, Flag("--keep", help="Keep the sample repository and plans "
                    "(to rerun, or to try `pr create`).")] = False,
    no_sandbox: Annotated[bool, Flag("--no-sandbox", help="Run the scenarios unconfined "
                          "(where bubblewrap cannot start).")] = False,
) -> None:
    """Run the seed's four scenarios on a bundled payments-service: a migration that needs
    review, a forbidden workflow edit, a dependency mirror timeout, a broken assertion."""
    from rich.table import Table

    from agentctl.cli.output import live_status, out
    from agentctl.cli.render.style import badge, escape
    from agentctl.cli.sandbox import unsandboxed, warn_unsandboxed
    from agentctl.config import defaults
    from agentctl.services.demo import new_demo_root, run_demo
    from agentctl.store import Store
    from agentctl.store.location import resolve_home
    from agentctl.store.views import Views

    current = state(ctx)
    chosen_config = unsandboxed(defaults(), no_sandbox)
    warn_unsandboxed(chosen_config)
    sandboxed = chosen_config.sandbox.mode.value == "on"
    root = new_demo_root()
    chosen = home or current.home_option
    if chosen is None:
        chosen = str(root / "home")
    store = Store(resolve_home(chosen))
    try:
        with live_status("agentctl demo") as progress:
            results = run_demo(store, root, home=store.home.root, progress=progress,
                               sandboxed=sandboxed)
    finally:
        if not keep:
            shutil.rmtree(root / "payments-service", ignore_errors=True)
            shutil.rmtree(root / "plans", ignore_errors=True)
    table = Table(title="agentctl demo: payments-service", header_style="bold")
    for column in ("SCENARIO", "TASK", "RUN", "VERDICT", "ELIGIBILITY", "FIRST REASON"):
        table.add_column(column, overflow="fold", no_wrap=column in ("TASK", "RUN"))
    with Views(store.home) as views:
        for result in results:
            verdict = views.verdict(result.run.run_id)
            assert verdict is not None, "every demo run ends with a verdict"
            table.add_row(result.scenario.name, result.task.task_id, result.run.run_id,
                          badge(verdict.status), badge(verdict.pr_eligibility),
                          escape(verdict.reasons[0]))
    out().print(table)
    prefix = f"agentctl --home {store.home.root}"
    first = results[0].run.run_id
    out().print("\nExplore what happened:")
    out().print(f"  {prefix} run show --tree {first}")
    out().print(f"  {prefix} verdict explain {first}")
    out().print(f"  {prefix} run list")
    out().print(f"  {prefix} events --run {results[1].run.run_id}")
    if keep:
        out().print(f"  sample repository: {root / 'payments-service'}")
