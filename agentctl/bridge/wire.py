"""The hook socket's wire format: one JSON line each way per connection.

A request names the attempt and its lease, so the attempt's process refuses a hook of a stale
attempt; the reply is a decision (`allow`/`deny` and why) or, for a result, an acknowledgement.
No imports: the hook process reads these names on every tool call.
"""

SOCKET_NAME = "bridge.sock"
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
ALLOW, DENY = "allow", "deny"
