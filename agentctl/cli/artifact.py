"""`agentctl artifact`: list, show and verify the evidence a run produced."""


import sys
from typing import TYPE_CHECKING, Annotated

import typer

from agentctl.cli.context import state
from agentctl.cli.options import Flag, FullOption, JsonOption
from agentctl.cli.output import emit_json, out
from agentctl.domain.enums import RedactionStatus
from agentctl.domain.errors import IntegrityError, NotFound
from agentctl.domain.redaction import Redactor
from agentctl.store.blobs import BlobStore

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from agentctl.domain.artifact import Artifact
from agentctl.cli.render.fit import Column, fitted
from agentctl.cli.render.style import escape
from agentctl.store.run_views import RunViews

app = typer.Typer(help="Artifacts: content-addressed evidence, verified by sha256.",
                  no_args_is_help=True)


@app.command("list")
def list_(
    ctx: typer.Context,
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Run id or prefix. "
                      "(default: the newest run)")] = None,
    full: FullOption = False,
    as_json: JsonOption = False,
) -> None:
    """List a run's artifacts."""

    with state(ctx).views(RunViews) as views:
        run = views.run(run_id)
        artifacts = views.artifacts(run.run_id)
        short = {} if full or as_json else views.short_ids(
            "artifact", [a.artifact_id for a in artifacts])
    if as_json:
        emit_json(artifacts)
        return

    columns = [Column("NAME", 3), Column("SIZE", 2), Column("ARTIFACT", 1), Column("TYPE"),
               Column("VISIBILITY"), Column("REDACTION"), Column("SHA256")]
    rows = [[escape(a.name), str(a.size_bytes), short.get(a.artifact_id, a.artifact_id),
             a.type.value, a.visibility.value, a.redaction_status.value,
             a.sha256 if full else a.sha256[:12]] for a in artifacts]
    out().print(fitted(columns, rows, out().width))


@app.command()
def show(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(metavar="ARTIFACT|RUN", help="Artifact id or prefix; "
                      "or a run id or prefix, followed by NAME.")],
    name: Annotated[str | None, typer.Argument(metavar="[NAME]", help="With a run: the "
                    "artifact's name (patch.diff, verifier-report.json, a check's log).")] = None,
    as_json: Annotated[bool, Flag("--json", help="Print the artifact's record as JSON "
                       "instead of its content.")] = False,
) -> None:
    """Print an artifact's content (verified against its hash; secrets redacted on the way):
    `artifact show ARTIFACT` or `artifact show RUN NAME`."""
    current = state(ctx)
    with current.views(RunViews) as views:
        artifact = views.artifact(target) if name is None else named_artifact(views, target, name)
    if as_json:
        emit_json(artifact)
        return
    print_artifact(current.home.artifacts, artifact)


def named_artifact(views: RunViews, run_text: str | None, name: str) -> "Artifact":
    """The artifact of a run called `name` (the newest of that name when a retry made two)."""
    run = views.run(run_text)
    found = [a for a in views.artifacts(run.run_id) if a.name == name]
    if not found:
        names = sorted({a.name for a in views.artifacts(run.run_id)})
        raise NotFound(f"run {run.run_id} has no artifact named {name!r}; it has: "
                       f"{', '.join(names) or 'none'}")
    return found[-1]


def artifact_content(root: "Path", artifact: "Artifact") -> "Iterator[bytes]":
    """The verified content, chunk by chunk; secrets redacted when it was stored RAW.
    IntegrityError (exit 3) when it does not match its hash."""
    blobs = BlobStore(root)
    problem = blobs.verify(artifact.uri, artifact.sha256)
    if problem:
        raise IntegrityError(f"artifact {artifact.artifact_id} ({artifact.name}): {problem}")
    if artifact.redaction_status is RedactionStatus.RAW:
        redactor = Redactor()
        for chunk in blobs.open_chunks(artifact.uri):
            yield redactor.clean(chunk.decode("utf-8", errors="replace")).encode("utf-8")
    else:
        yield from blobs.open_chunks(artifact.uri)


def print_artifact(root: "Path", artifact: "Artifact") -> None:
    for chunk in artifact_content(root, artifact):
        sys.stdout.buffer.write(chunk)
    sys.stdout.flush()


@app.command()
def verify(
    ctx: typer.Context,
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Only this run's "
                      "artifacts. (default: every artifact)")] = None,
) -> None:
    """Re-hash every stored artifact; exit 3 if one is missing or does not match its hash."""
    current = state(ctx)
    with current.views(RunViews) as views:
        artifacts = views.artifacts(views.run(run_id).run_id if run_id else None)
    blobs = BlobStore(current.home.artifacts)
    problems = [(a, p) for a in artifacts if (p := blobs.verify(a.uri, a.sha256))]
    for artifact, problem in problems:
        sys.stderr.write(f"{artifact.artifact_id} {artifact.name}: {problem}\n")
    if problems:
        raise IntegrityError(f"{len(problems)} of {len(artifacts)} artifacts failed verification")
    out().print(f"ok: {len(artifacts)} artifacts verified")
