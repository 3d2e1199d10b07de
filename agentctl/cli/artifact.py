"""`agentctl artifact`: list, show and verify the evidence a run produced."""


import sys
from typing import Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag, JsonOption

app = typer.Typer(help="Artifacts: content-addressed evidence, verified by sha256.",
                  no_args_is_help=True)


@app.command("list")
def list_(
    ctx: typer.Context,
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Run id or prefix. "
                      "(default: the newest run)")] = None,
    as_json: JsonOption = False,
) -> None:
    """List a run's artifacts."""
    from agentctl.cli.output import emit_json, out
    from agentctl.cli.render.style import escape

    with state(ctx).views() as views:
        run = views.run(run_id)
        artifacts = views.artifacts(run.run_id)
    if as_json:
        emit_json(artifacts)
        return
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("ARTIFACT", "NAME", "TYPE", "SIZE", "VISIBILITY", "REDACTION", "SHA256"):
        table.add_column(column, no_wrap=True)
    for a in artifacts:
        table.add_row(a.artifact_id, escape(a.name), a.type.value, str(a.size_bytes), a.visibility.value,
                      a.redaction_status.value, a.sha256[:16])
    out().print(table)


@app.command()
def show(
    ctx: typer.Context,
    artifact_id: Annotated[str, typer.Argument(metavar="ARTIFACT", help="Artifact id or prefix.")],
    as_json: Annotated[bool, Flag("--json", help="Print the artifact's record as JSON "
                       "instead of its content.")] = False,
) -> None:
    """Print an artifact's content (verified against its hash; secrets redacted on the way)."""
    from agentctl.cli.output import emit_json
    from agentctl.domain.enums import RedactionStatus
    from agentctl.domain.errors import IntegrityError
    from agentctl.store.blobs import BlobStore

    current = state(ctx)
    with current.views() as views:
        artifact = views.artifact(artifact_id)
    if as_json:
        emit_json(artifact)
        return
    blobs = BlobStore(current.home.artifacts)
    problem = blobs.verify(artifact.uri, artifact.sha256)
    if problem:
        raise IntegrityError(f"artifact {artifact.artifact_id} ({artifact.name}): {problem}")
    if artifact.redaction_status is RedactionStatus.RAW:
        from agentctl.domain.redaction import Redactor

        redactor = Redactor()
        for chunk in blobs.open_chunks(artifact.uri):
            sys.stdout.write(redactor.clean(chunk.decode("utf-8", errors="replace")))
    else:
        for chunk in blobs.open_chunks(artifact.uri):
            sys.stdout.buffer.write(chunk)
    sys.stdout.flush()


@app.command()
def verify(
    ctx: typer.Context,
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Only this run's "
                      "artifacts. (default: every artifact)")] = None,
) -> None:
    """Re-hash every stored artifact; exit 3 if one is missing or does not match its hash."""
    from agentctl.cli.output import out
    from agentctl.domain.errors import IntegrityError
    from agentctl.store.blobs import BlobStore

    current = state(ctx)
    with current.views() as views:
        artifacts = views.artifacts(views.run(run_id).run_id if run_id else None)
    blobs = BlobStore(current.home.artifacts)
    problems = [(a, p) for a in artifacts if (p := blobs.verify(a.uri, a.sha256))]
    for artifact, problem in problems:
        sys.stderr.write(f"{artifact.artifact_id} {artifact.name}: {problem}\n")
    if problems:
        raise IntegrityError(f"{len(problems)} of {len(artifacts)} artifacts failed verification")
    out().print(f"ok: {len(artifacts)} artifacts verified")
