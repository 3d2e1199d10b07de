"""An optional extra that is not installed is bad input naming the extra to install: signing
without `cryptography` (the `attest` extra) and a trace without the OpenTelemetry SDK (`otel`).
Each extra is imported by one module of its own (ed25519_keys, otlp_sdk), loaded on use; a
Python that cannot import the extra (its name set to None in sys.modules) stands in for one
where it is not installed."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

SIGN = """
import sys
sys.modules["cryptography"] = None
from pathlib import Path
from agentctl.domain.errors import BadInput
from agentctl.execution.signing import load_public_key, load_signer
for load in (lambda: load_signer(Path(sys.argv[1]), create=True),
             lambda: load_public_key(Path(sys.argv[1]))):
    try:
        load()
    except BadInput as error:
        print(error)
"""

TRACE = """
import sys
sys.modules["opentelemetry"] = None
from agentctl.domain.errors import BadInput
from agentctl.domain.tracing import TracePlan
from agentctl.execution.otlp import export_trace
try:
    export_trace(TracePlan(trace_id=1, spans=()), sys.argv[1], max_spans=10, timeout=5.0)
except BadInput as error:
    print(error)
"""


def run(code: str, argument: str, cwd: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code, argument], capture_output=True,
                          text=True, cwd=cwd, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def test_signing_without_cryptography_names_the_attest_extra(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    said = run(SIGN, str(key), tmp_path)
    assert said == ["signing attestations needs the `cryptography` package: "
                    "pip install 'agentctl[attest]'"] * 2
    assert not key.exists()  # nothing was made


def test_a_trace_without_the_opentelemetry_sdk_names_the_otel_extra(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as collector:  # it answers: the SDK is needed
        port = collector.getsockname()[1]
        said = run(TRACE, f"http://127.0.0.1:{port}", tmp_path)
    assert said == ["traces need the OpenTelemetry SDK: pip install 'agentctl[otel]'"]
