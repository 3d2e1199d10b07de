"""`run report --format html|ctrf|atif` and `run open`: the run page's value, rendered."""

from __future__ import annotations

import tempfile
import webbrowser
from pathlib import Path

from agentctl.cli.render import interchange
from agentctl.cli.run_page import gather
from agentctl.domain.errors import BadInput
from agentctl.store.blobs import BlobStore
from agentctl.store.views import Views

PAGE_FORMATS = ("html", "ctrf", "atif")


def page_report(views: Views, blobs: BlobStore, run_text: str | None, fmt: str, *,
                public: bool) -> str:
    page = gather(views, blobs, run_text, public=public)
    if fmt == "html":
        from agentctl.cli.render.html_page import run_page_html

        return run_page_html(page)

    return interchange.ctrf(page) if fmt == "ctrf" else interchange.atif(page)


def write_report(output: Path, text: str) -> None:
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        raise BadInput(f"cannot write {output}: {error.strerror or error}") from None


def open_page(views: Views, artifacts: Path, run_text: str | None, *,
              public: bool) -> tuple[Path, bool]:
    """The page in a private temporary file, and whether a browser took it (`webbrowser`
    finds none on a server without one: the caller prints the path either way)."""
    text = page_report(views, BlobStore(artifacts), run_text, "html", public=public)
    handle, name = tempfile.mkstemp(prefix="agentctl-run-", suffix=".html")
    path = Path(name)
    with open(handle, "w", encoding="utf-8") as file:
        file.write(text)
    return path, webbrowser.open(path.as_uri())
