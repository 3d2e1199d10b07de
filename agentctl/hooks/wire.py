"""The hook socket's wire format: one JSON line each way per connection.

A request names the attempt and its lease, so the attempt's process refuses a hook of a stale
attempt; the reply is a decision (`allow`/`deny` and why) or, for a result, an acknowledgement.
No imports at run time (not even `__future__`): the hook process reads these names on every
tool call.
"""

TYPE_CHECKING = False  # mypy reads this name as True; `typing` would cost the hook its import
if TYPE_CHECKING:
    import _socket

SOCKET_NAME = "bridge.sock"
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
ALLOW, DENY = "allow", "deny"


def read_line(connection: "_socket.socket") -> bytes:
    """Bytes up to and including the first newline (or the peer's close): one message.
    ValueError past MAX_MESSAGE_BYTES."""
    chunks: list[bytes] = []
    size = 0
    while not chunks or not chunks[-1].endswith(b"\n"):
        chunk = connection.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_MESSAGE_BYTES:
            raise ValueError("message too large")
    return b"".join(chunks)

