"""The OS sandbox a run's processes execute in, as a frozen part of its ExecutionSpec, and the
pure rules about it: which hosts the network allowlist lets through, what an unsandboxed run
may still earn.

The profile says what the run was promised (mode, extra read-only dirs, allowed hosts, limits);
`agentctl.execution.sandboxing.sandbox` turns it into a bubblewrap command line on a given machine.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from agentctl.domain.errors import BadInput

MAX_PROCESSES, MAX_MEMORY_MB, MAX_FILE_SIZE_MB = 512, 4096, 1024
NET_CONNECT = "net.connect"  # the ToolCall every connection attempt through the proxy becomes


@dataclass(frozen=True, slots=True)
class ConnectAttempt:
    """One connection a sandboxed process asked the egress proxy for."""

    host: str
    port: int
    allowed: bool
    rule: str | None  # the allow rule that matched; None when denied
    at: datetime
    reason: str | None = None  # why it was denied, or why the tunnel failed


class SandboxMode(StrEnum):
    ON = "on"
    OFF = "off"


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxLimits:
    """Per spawned process tree: cgroups where writable, rlimits as the backstop."""

    max_processes: int = MAX_PROCESSES
    max_memory_mb: int = MAX_MEMORY_MB
    max_file_size_mb: int = MAX_FILE_SIZE_MB


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxProfile:
    """What every process of the run is confined to; the machine-specific parts (toolchain dirs
    found on the PATH, the state home) are added when the attempt runs and noted on its steps."""

    mode: SandboxMode = SandboxMode.ON
    read_only: tuple[str, ...] = ()  # extra dirs visible read-only (`~/.m2`), `~` = the home
    writable: tuple[str, ...] = ()  # dirs every process may write besides its workspace
    network_allow: tuple[str, ...] = ()  # `host[:port]` globs the proxy lets through
    limits: SandboxLimits = SandboxLimits()

    @property
    def enabled(self) -> bool:
        return self.mode is SandboxMode.ON


def validate_rule(rule: str) -> str:
    """A `host[:port]` glob (`pypi.org:443`, `*.internal.example`, `localhost:8080`)."""
    text = rule.strip().lower()
    host, _, port = text.rpartition(":") if ":" in text else (text, "", "")
    if not host or any(c in host for c in "/@ \t") or (port and port != "*"
                                                       and not port.isdigit()):
        raise BadInput(f"malformed network rule {rule!r}: expected host[:port], e.g. "
                       "'pypi.org:443' or '*.example.com:443'")
    if port.isdigit() and not 0 < int(port) < 65536:
        raise BadInput(f"malformed network rule {rule!r}: port {port} is out of range")
    return text


def matching_rule(rules: tuple[str, ...], host: str, port: int) -> str | None:
    """The first rule that lets `host:port` through, or None (denied). A rule without a port
    allows every port of its hosts; globs are case-insensitive, as host names are."""
    name = host.strip().lower().rstrip(".")
    for rule in rules:
        pattern, _, wanted = rule.rpartition(":") if ":" in rule else (rule, "", "")
        if wanted and wanted != "*" and wanted != str(port):
            continue
        if fnmatch.fnmatchcase(name, pattern.lower()):
            return rule
    return None


def sandbox_reason(profile: SandboxProfile) -> str | None:
    """The verdict reason an unsandboxed run carries (None when it was sandboxed)."""
    if not profile.enabled:
        return ("the sandbox was off for this run (--no-sandbox or [sandbox] mode = \"off\"): "
                "a human must approve before a PR")
    return None
