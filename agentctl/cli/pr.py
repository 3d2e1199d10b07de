"""`agentctl pr create` and `pr status`: the run's patch as a branch and a PR on its forge.

Each command imports its use case when it runs: both reach GitPython (the branch, the remote's
URL), which `pr --help` and `pr create --help` must not load.
"""


from typing import Annotated

import typer

from agentctl.cli.context import State, state
from agentctl.cli.options import Flag
from agentctl.cli.output import emit_json, out
from agentctl.cli.render.style import escape
from agentctl.services.actions.tasks import current_user
from agentctl.store.run_views import RunViews

app = typer.Typer(help="Pull requests: a downstream action on an eligible verdict.",
                  no_args_is_help=True)


@app.command()
def create(
    ctx: typer.Context,
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Run id or prefix. "
                      "(default: the newest run of the repository you stand in)")] = None,
    branch: Annotated[str | None, typer.Option("--branch", metavar="NAME", help="Branch to "
                      "create. (default: agentctl/<task-type>-<short run id>)")] = None,
    remote: Annotated[str | None, typer.Option("--remote", metavar="NAME", help="Push the "
                      "branch to this remote (name, URL or path).")] = None,
    draft: Annotated[bool, Flag("--draft", help="Open the PR as a draft (forced for "
                     "DRAFT_ONLY verdicts).")] = False,
    attest: Annotated[bool, Flag("--attest", help="Attach the run's signed in-toto "
                      "attestation bundle to the PR.")] = False,
    by: Annotated[str | None, typer.Option("--by", metavar="WHO", help="Who asks. (default: the "
                  "current user)")] = None,
    as_json: Annotated[bool, Flag("--json", help="Print JSON.")] = False,
) -> None:
    """Create a branch whose one commit is the run's patch on its base commit, push it, and open
    the PR on GitHub or GitLab ([pr] in the config; the token from GITHUB_TOKEN, GH_TOKEN or
    GITLAB_TOKEN). Run again, it updates that PR; an open PR of the branch is adopted. Refused
    (exit 2, with the verdict's reasons) unless the verdict allows it; a forge error exits 1
    and is safe to retry."""

    from agentctl.services.actions.pull_requests import PrRequest, create_pull_request

    current = state(ctx)
    pull_request = create_pull_request(current.store, PrRequest(
        run=_run_here(current, run_id), branch=branch, remote=remote, draft=draft, by=by or current_user(),
        attest=attest), current.config.pr,
        timeout=current.config.pr.timeout_seconds)
    if as_json:
        emit_json(pull_request)
        return
    out().print(f"branch {escape(pull_request.branch)} at {pull_request.commit_sha[:12]} in "
                f"{escape(pull_request.repository)}" + (" (draft)" if pull_request.draft else ""))
    if pull_request.remote:
        out().print(f"pushed to {escape(pull_request.remote)}")
    if pull_request.url:
        out().print(f"{pull_request.forge.value} #{pull_request.number} "
                    f"{pull_request.state.value}: {escape(pull_request.url)}")
    out().print(f"body: agentctl artifact show {pull_request.body_artifact}")


@app.command()
def status(
    ctx: typer.Context,
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Run id or prefix. "
                      "(default: the newest run of the repository you stand in)")] = None,
    as_json: Annotated[bool, Flag("--json", help="Print JSON.")] = False,
) -> None:
    """Read the run's PR back from its forge (open, merged, closed) and record a change."""

    from agentctl.services.actions.pr_status import refresh_pull_request

    current = state(ctx)
    pull_request = refresh_pull_request(current.store, _run_here(current, run_id), current.config.pr,
                                        timeout=current.config.pr.timeout_seconds)
    if as_json:
        emit_json(pull_request)
        return
    where = f"{pull_request.forge.value} #{pull_request.number}" if pull_request.number \
        else "no forge"
    out().print(f"{escape(pull_request.branch)}: {pull_request.state.value} ({where})"
                + (f" {escape(pull_request.url)}" if pull_request.url else ""))


def _run_here(current: State, run_id: str | None) -> str:
    """The run asked for, or the newest run of the repository you stand in (outside any, the
    newest overall), as `run show` and `verdict explain` pick it."""
    if run_id is not None:
        return run_id
    with current.views(RunViews) as views:
        return views.run(None).run_id
