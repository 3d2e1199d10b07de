"""The read side of the storage port, on each implementation: what the use cases that only look
(a PR's facts, an attestation, a trace, the sweep of leftovers) rely on a store for."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from agentctl.domain.audit import CheckpointState
from agentctl.domain.clock import utcnow
from agentctl.domain.enums import ApprovalDecision
from agentctl.domain.errors import NotFound
from agentctl.domain.verdict import Approval
from agentctl.services.lifecycle.runs import lease_run, reap_expired
from agentctl.services.unit_of_work import Storage
from agentctl.testing import InMemoryStorage

from .test_unit_of_work import a_run, a_task


def test_a_runs_records_read_back_as_the_record_has_them(storage: Storage, repo: Path,
                                                        tmp_path: Path) -> None:
    run = a_run(storage, a_task(storage, repo, tmp_path), tmp_path)
    lease = lease_run(storage, worker_id="w", ttl_seconds=10, run_id=run.run_id)
    assert lease is not None
    with storage.reads() as reads:
        record = reads.record(run.run_id)
        assert reads.attempts(run.run_id) == list(record.attempts)
        assert [a.attempt_id for a in reads.attempts(run.run_id)] == [lease.attempt_id]
        assert reads.steps(run.run_id) == list(record.steps)
        assert reads.tool_calls(run.run_id) == list(record.tool_calls)
        assert reads.artifacts(run.run_id) == list(record.artifacts)
        assert reads.verdict(run.run_id) is None and reads.patch(run.run_id) is None
        assert reads.verification(run.run_id) is None
        assert reads.attempts("run_none") == [] and reads.verdict("run_none") is None


def test_approvals_read_back_first_given_first(storage: Storage, repo: Path,
                                               tmp_path: Path) -> None:
    run = a_run(storage, a_task(storage, repo, tmp_path), tmp_path)
    given = [Approval(approval_id=f"approval_0{n}", run_id=run.run_id, verdict_id="verdict_x",
                      by="alice", decision=ApprovalDecision.APPROVED, reason=f"reason {n}",
                      created_at=utcnow().replace(microsecond=0)) for n in (2, 1)]
    with storage.unit_of_work() as uow:
        uow.approvals.add_many(given)
    with storage.reads() as reads:
        assert reads.approvals(run.run_id) == sorted(given, key=lambda a: a.approval_id)
        assert reads.approvals("run_none") == []


def test_the_event_head_is_the_newest_event_and_a_snapshot_holds_still(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    with storage.reads() as reads:
        assert reads.event_head() is None
    run = a_run(storage, a_task(storage, repo, tmp_path), tmp_path)
    with storage.reads() as reads, reads.snapshot():
        record = reads.record(run.run_id)
        head = reads.event_head()
    assert head is not None and head == (record.events[-1].seq, record.events[-1].hash)


def test_a_lease_is_due_once_it_ran_out_and_only_ended_attempts_directories_are_named(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    task = a_task(storage, repo, tmp_path)
    live, ended = a_run(storage, task, tmp_path), a_run(storage, task, tmp_path)
    now = utcnow()
    leases = [lease_run(storage, worker_id="w", ttl_seconds=ttl, run_id=run.run_id,
                        clock=lambda: now) for run, ttl in ((live, 100), (ended, 10))]
    assert leases[0] is not None and leases[1] is not None
    with storage.unit_of_work() as uow:
        uow.record_directory(leases[0].attempt_id, "/tmp/live-dir")
        uow.record_directory(leases[1].attempt_id, "/tmp/ended-dir")
    with storage.reads() as reads:
        assert not reads.lease_due(now + timedelta(seconds=5))
        assert reads.lease_due(now + timedelta(seconds=11))
        assert reads.ended_attempt_directories(["/tmp/live-dir", "/tmp/ended-dir"]) == []
    reap_expired(storage, clock=lambda: now + timedelta(seconds=11))  # the short lease ends
    with storage.reads() as reads:
        assert not reads.lease_due(now + timedelta(seconds=50))
        assert reads.lease_due(now + timedelta(seconds=101))
        assert reads.ended_attempt_directories(["/tmp/live-dir", "/tmp/ended-dir", "/tmp/x"]) \
            == ["/tmp/ended-dir"]


def test_blobs_verify_by_hash_and_read_back_as_chunks_or_a_file(storage: Storage) -> None:
    blob = storage.blobs.put_bytes(b"the patch")
    assert storage.blobs.verify(blob.uri, blob.sha256) is None
    assert storage.blobs.verify(blob.uri, "0" * 64) == \
        f"content hashes to {blob.sha256[:12]}, not {'0' * 12}"
    assert b"".join(storage.blobs.open_chunks(blob.uri)) == b"the patch"
    assert storage.blobs.path_for(blob.uri).read_bytes() == b"the patch"
    missing = blob.uri.replace(blob.sha256, "f" * 64)
    assert storage.blobs.verify(missing, "f" * 64) == "file is missing"


def test_the_audit_of_a_store_that_was_written_through_the_port_verifies(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    run = a_run(storage, a_task(storage, repo, tmp_path), tmp_path)
    report = storage.audit()
    with storage.reads() as reads:
        head = reads.event_head()
        events = reads.record(run.run_id).events
    assert report.ok, report.failure()
    assert head is not None and report.head == head and report.events == head[0]
    assert len(events) >= 2
    checkpoint = storage.checkpoint()
    if isinstance(storage, InMemoryStorage):
        assert checkpoint is None and report.checkpoint_state is CheckpointState.UNSIGNED
    else:  # a new store signs its log from the first event
        assert checkpoint is not None and (checkpoint.seq, checkpoint.hash) == head
        assert report.checkpoint_state is CheckpointState.VERIFIED
    assert storage.state_root.is_dir()


def test_a_prefix_that_names_no_run_is_not_found(storage: Storage) -> None:
    with storage.reads() as reads, pytest.raises(NotFound):
        reads.run("run_01ZZZZ")


def test_a_snapshot_reads_a_runs_verification_once_and_a_later_snapshot_sees_a_new_one(
        storage: Storage, repo: Path, tmp_path: Path) -> None:
    from dataclasses import replace

    from agentctl.domain.enums import VerificationCheckStatus, VerificationStatus
    from agentctl.domain.verification import VerificationCheck, VerificationReport

    run = a_run(storage, a_task(storage, repo, tmp_path), tmp_path)
    check = VerificationCheck(name="tests", command="pytest", status=VerificationCheckStatus.PASSED,
                              exit_code=0, duration_seconds=1.0, log_artifact=None,
                              summarized_failure=None, required=True)
    first = VerificationReport(verification_report_id="verification_1", run_id=run.run_id,
                               attempt_id="attempt_1", status=VerificationStatus.PASSED,
                               checks=(check,), full_report_artifact="artifact_1",
                               started_at=utcnow(), ended_at=utcnow())
    with storage.unit_of_work() as uow:
        uow.verifications.add(first)
    with storage.reads() as reads:
        with reads.snapshot():
            assert reads.verification(run.run_id) == first
            assert reads.verification(run.run_id) == first  # the second read: the same
        with storage.unit_of_work() as uow:
            uow.verifications.add(replace(first, verification_report_id="verification_2",
                                          status=VerificationStatus.FAILED))
        with reads.snapshot():  # a new snapshot reads again: nothing held over from the last
            found = reads.verification(run.run_id)
            assert found is not None and found.verification_report_id == "verification_2"
        with storage.unit_of_work() as uow:
            uow.verifications.add(replace(first, verification_report_id="verification_3"))
        found = reads.verification(run.run_id)  # and so does a read outside any snapshot
        assert found is not None and found.verification_report_id == "verification_3"
