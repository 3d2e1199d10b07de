"""What doctor and sandbox check say about each run's limits: true for whoever reads it (a
normal user is never told what binds root), naming what only an rlimit caps, and a fix that
works on the machine (systemd's delegation only where cgroup v2 has pids and memory)."""

from __future__ import annotations

import pytest

from agentctl.domain.cgroup_advice import CgroupFacts, describe, fix

BOTH = frozenset({"pids", "memory", "cpu", "io"})
HYBRID = frozenset({"hugetlb"})  # a container's v2 beside v1 pids and memory


def facts(*, root: bool = False, pids: bool = False, memory: bool = False,
          unified: bool = False, v2: frozenset[str] = BOTH,
          systemd_user: bool = False) -> CgroupFacts:
    return CgroupFacts(root=root, pids=pids, memory=memory, unified=unified,
                       v2_controllers=v2, systemd_user=systemd_user)


def test_a_run_with_both_groups_needs_no_fix() -> None:
    for unified in (False, True):
        found = facts(pids=True, memory=True, unified=unified)
        assert describe(found) == f"cgroup {'v2' if unified else 'v1'} (pids, memory)"
        assert fix(found) is None


def test_a_normal_user_without_a_group_is_told_what_rlimits_leave_and_never_about_root() -> None:
    said = describe(facts())
    assert said.startswith("no writable cgroup: rlimits only")
    assert "process count is not enforced per run" in said and "data-size" in said
    assert "root" not in said


def test_root_without_a_group_is_told_the_process_count_is_not_enforced() -> None:
    assert "process count not enforced for root" in describe(facts(root=True))
    assert "writable /sys/fs/cgroup" in (fix(facts(root=True)) or "")


@pytest.mark.parametrize(("root", "pids", "memory", "words"), [
    (False, True, False, "cgroup v1 (pids); memory is a data-size rlimit"),
    (False, False, True, "cgroup v1 (memory); the process count is an rlimit: not enforced per "
                         "run, it caps all of your processes together"),
    (True, False, True, "cgroup v1 (memory); process count not enforced for root"),
])
def test_one_group_of_two_says_what_the_other_limit_is(root: bool, pids: bool, memory: bool,
                                                       words: str) -> None:
    found = facts(root=root, pids=pids, memory=memory)
    assert describe(found) == words
    assert fix(found) is not None


def test_systemds_delegation_is_the_fix_where_a_user_manager_runs_and_v2_has_both() -> None:
    advice = fix(facts(systemd_user=True)) or ""
    assert advice.startswith("start agentctl in a cgroup systemd delegates to you")
    assert "systemd-run --user --scope -p Delegate=yes" in advice


def test_without_a_user_manager_the_fix_says_how_to_get_one_or_a_group() -> None:
    advice = fix(facts()) or ""
    assert "no systemd user session" in advice and "loginctl enable-linger" in advice
    assert "Delegate=yes" in advice and "administrator" in advice


@pytest.mark.parametrize("systemd_user", [False, True])
def test_where_v2_has_no_pids_or_memory_systemd_is_not_offered_as_the_fix(
        systemd_user: bool) -> None:
    """A hybrid layout: systemd would delegate a v2 group that can hold neither limit."""
    for v2 in (HYBRID, frozenset()):
        advice = fix(facts(v2=v2, systemd_user=systemd_user)) or ""
        assert "cannot help here" in advice, advice
        assert f"it offers: {', '.join(sorted(v2)) or 'none'}" in advice
        assert "on cgroup v1" in advice and "cgroup.procs, tasks" in advice
        assert not advice.startswith("start agentctl in a cgroup systemd delegates")
