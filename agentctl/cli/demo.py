"""`agentctl demo`: a full dry-run on a bundled sample repository, in under a minute."""


import os
import shlex
import shutil
from pathlib import Path
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.long_work import begin_long_work
from agentctl.cli.options import Flag
from agentctl.cli.output import live_status, out
from agentctl.cli.render.fit import Column, fitted
from agentctl.cli.render.style import badge, escape
from agentctl.cli.unsandboxed import warn_unsandboxed
from agentctl.config import defaults
from agentctl.home import resolve_home
from agentctl.services.admin.demo import new_demo_root, run_demo
from agentctl.services.lifecycle.start import run_config
from agentctl.store.storage import Store
from agentctl.store.views import Views


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

    current = state(ctx)
    begin_long_work()  # before the progress line's thread: a normal user's views need it
    chosen_config = run_config(defaults(), no_sandbox=no_sandbox)
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
        if not keep and store.home.root.is_relative_to(root):  # the home is explored after
            shutil.rmtree(root / "payments-service", ignore_errors=True)
            shutil.rmtree(root / "plans", ignore_errors=True)
        elif not keep:  # a home of its own elsewhere: nothing here is wanted any more
            shutil.rmtree(root, ignore_errors=True)
    columns = [Column("SCENARIO", 3), Column("RUN", 2), Column("VERDICT", 3),
               Column("ELIGIBILITY", 3), Column("TASK"), Column("FIRST REASON", text=True)]
    rows = []
    with Views(store.home) as views:
        short = views.short_ids("run", [r.run.run_id for r in results])
        short.update(views.short_ids("task", [r.task.task_id for r in results]))
        for result in results:
            verdict = views.verdict(result.run.run_id)
            assert verdict is not None, "every demo run ends with a verdict"
            rows.append([escape(result.scenario.name), short[result.run.run_id],
                         badge(verdict.status), badge(verdict.pr_eligibility),
                         short[result.task.task_id], escape(verdict.reasons[0])])
    out().print("[bold]agentctl demo: payments-service[/]\n")
    out().print(fitted(columns, rows, out().width))
    first = short[results[0].run.run_id]
    out().print("\nExplore what happened:")
    if not _in_use(store.home.root):
        out().print(f"  export AGENTCTL_HOME={escape(shlex.quote(str(store.home.root)))}",
                    soft_wrap=True)
    out().print(f"  agentctl run show --tree {first}")
    out().print(f"  agentctl verdict explain {first}")
    out().print("  agentctl run list")
    out().print(f"  agentctl events --run {short[results[1].run.run_id]}")
    if keep:
        out().print(f"  sample repository: {escape(root / 'payments-service')}", soft_wrap=True)


def _in_use(home: Path) -> bool:
    """Whether later commands in this shell already find `home` (AGENTCTL_HOME names it)."""
    named = os.environ.get("AGENTCTL_HOME", "").strip()
    return bool(named) and Path(named).expanduser().resolve() == home.resolve()
