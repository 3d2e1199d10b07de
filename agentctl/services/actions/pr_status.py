"""`pr status`: the run's PR read back from its forge; a change of state is recorded."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Protocol

from agentctl.config.schema import DEFAULT_PR, PrSettings
from agentctl.domain.audit import digest
from agentctl.domain.clock import Clock, utcnow
from agentctl.domain.enums import EventType, Forge
from agentctl.domain.errors import NotFound
from agentctl.domain.events import NewEvent
from agentctl.domain.pull_request import PullRequest
from agentctl.domain.run import Run
from agentctl.execution.pull_requests.forge import TIMEOUT_SECONDS, client, detect, token_for
from agentctl.execution.pull_requests.pr_branch import remote_url_in
from agentctl.services.unit_of_work import Events, Repository


class PrReads(Protocol):
    def run(self, text: str | None) -> Run: ...
    def pull_requests(self, run_id: str) -> list[PullRequest]: ...


class PrWork(Protocol):
    @property
    def pull_requests(self) -> Repository[PullRequest]: ...
    @property
    def events(self) -> Events: ...


class PrStore(Protocol):
    """The part of the storage port `pr status` uses (any `Storage` is one): the run's pull
    requests, read and, when the forge says they changed, written with their event."""

    def reads(self) -> AbstractContextManager[PrReads]: ...
    def unit_of_work(self) -> AbstractContextManager[PrWork]: ...


def refresh_pull_request(storage: PrStore, run: str | None, settings: PrSettings = DEFAULT_PR,
                         *, clock: Clock = utcnow, timeout: float = TIMEOUT_SECONDS,
                         ) -> PullRequest:
    with storage.reads() as reads:
        record = reads.run(run)
        found = reads.pull_requests(record.run_id)
    if not found:
        raise NotFound(f"run {record.run_id} has no pull request; open one with "
                       f"`agentctl pr create {record.run_id}`")
    current = found[-1]
    if current.forge is Forge.NONE or current.number is None:
        return current
    url = remote_url_in(current.repository, current.remote) if current.remote else None
    target = detect(url, forge=current.forge, api_url=settings.api_url,
                    repository=settings.repository)
    remote = client(target, token_for(target.kind), timeout=timeout).get(current.number)
    if remote.state is current.state and remote.draft == current.draft:
        return current
    updated = replace(current, state=remote.state, draft=remote.draft, url=remote.url or current.url)
    with storage.unit_of_work() as uow:
        uow.pull_requests.get(current.pr_id)
        uow.pull_requests.save(updated, expected_status=None)
        uow.events.append(NewEvent(
            type=EventType.PR_STATE_CHANGED, created_at=clock(), task_id=record.task_id,
            run_id=record.run_id, payload={"prId": current.pr_id, "number": current.number,
                                           "from": current.state.value, "to": remote.state.value,
                                           "draft": remote.draft,
                                           "pullRequestDigest": digest(updated)}))
    return updated
