"""A run's document as `run start` and `run replay` print it, read back after the run."""


from agentctl.cli.context import State
from agentctl.cli.documents import run_document
from agentctl.domain.run import Run
from agentctl.store.views import Views


def run_document_of(current: State, run: Run) -> dict:  # type: ignore[type-arg]
    with current.views(Views) as views:
        return run_document(views, views.run(run.run_id))
