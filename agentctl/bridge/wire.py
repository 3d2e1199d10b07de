"""The hook socket's wire format: one JSON line each way per connection.

A request names the attempt and its lease, so the attempt's process refuses a hook of a stale
attempt; the reply is a decision (`allow`/`deny` and why) or, for a result, an acknowledgement.
"""

from __future__ import annotations

import json
import socket

SOCKET_NAME = "bridge.sock"
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
ALLOW, DENY = "allow", "deny"


def send(connection: socket.socket, message: dict[str, object]) -> None:
    connection.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")


def receive(connection: socket.socket) -> dict[str, object]:
    """One JSON object line; ValueError if the peer sent anything else."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            break
        if size > MAX_MESSAGE_BYTES:
            raise ValueError("message too large")
    data = b"".join(chunks)
    if not data.strip():
        raise ValueError("empty message")
    value = json.loads(data)
    if not isinstance(value, dict):
        raise ValueError("message is not a JSON object")
    return value
