"""`agentctl pr create`: a branch with the run's patch committed on its base commit."""


from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag

app = typer.Typer(help="Pull requests: a downstream action on an eligible verdict.",
                  no_args_is_help=True)


@app.command()
def create(
    ctx: typer.Context,
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Run id or prefix. "
                      "(default: the newest run)")] = None,
    branch: Annotated[str | None, typer.Option("--branch", metavar="NAME", help="Branch to "
                      "create. (default: agentctl/<task-type>-<short run id>)")] = None,
    remote: Annotated[str | None, typer.Option("--remote", metavar="NAME", help="Push the "
                      "branch to this remote (name, URL or path).")] = None,
    draft: Annotated[bool, Flag("--draft", help="Mark the PR a draft (forced for "
                     "DRAFT_ONLY verdicts).")] = False,
    by: Annotated[str | None, typer.Option("--by", metavar="WHO", help="Who asks. (default: the "
                  "current user)")] = None,
    as_json: Annotated[bool, Flag("--json", help="Print JSON.")] = False,
) -> None:
    """Create a branch whose one commit is the run's patch on its base commit, with pr-body.md;
    refused (exit 2, with the verdict's reasons) unless the verdict allows it."""
    from agentctl.cli.output import emit_json, out
    from agentctl.cli.render.style import escape
    from agentctl.services.pull_requests import PrRequest, create_pull_request
    from agentctl.services.tasks import current_user

    pull_request = create_pull_request(state(ctx).store, PrRequest(
        run=run_id, branch=branch, remote=remote, draft=draft, by=by or current_user()))
    if as_json:
        emit_json(pull_request)
        return
    out().print(f"branch {escape(pull_request.branch)} at {pull_request.commit_sha[:12]} in "
                f"{escape(pull_request.repository)}" + (" (draft)" if pull_request.draft else ""))
    if pull_request.remote:
        out().print(f"pushed to {escape(pull_request.remote)}")
    out().print(f"body: agentctl artifact show {pull_request.body_artifact}")
