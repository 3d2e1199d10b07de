"""A gate of the egress proxy listens from its making, and loads the proxy's event loop only
when a process connects: a check that opens no connection never imports asyncio."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from agentctl.execution.sandboxing.egress import EgressProxy


def test_a_gate_no_process_connects_to_loads_no_event_loop(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from agentctl.execution.sandboxing.egress import EgressProxy\n"
        f"proxy = EgressProxy(Path({str(tmp_path)!r}))\n"
        "gate = proxy.open_gate(['example.org:443'])\n"
        "listening = gate.socket_path.is_socket()\n"
        "print(listening, gate.close(), gate.socket_path.exists(), 'asyncio' in sys.modules)\n"
        "proxy.close()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "()", "False", "False"]


def _ask(socket_path: Path, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(30)
        client.connect(str(socket_path))
        client.sendall(request)
        answer = b""
        while chunk := client.recv(4096):
            answer += chunk
        return answer


def test_a_gates_first_connection_and_the_next_are_judged_and_noted(tmp_path: Path) -> None:
    proxy = EgressProxy(tmp_path)
    gate = proxy.open_gate(["example.org:443"])
    try:
        for host in ("denied.invalid", "other.invalid"):
            answer = _ask(gate.socket_path, f"CONNECT {host}:443 HTTP/1.1\r\n\r\n".encode())
            assert answer.startswith(b"HTTP/1.1 403 Forbidden"), answer
        attempts = gate.close()
        assert [(a.host, a.port, a.allowed) for a in attempts] == [
            ("denied.invalid", 443, False), ("other.invalid", 443, False)]
        assert not gate.socket_path.exists()
        assert gate.close() == attempts  # closed once; asked again, the same
    finally:
        proxy.close()
