"""The bridge inside a sandbox from `127.0.0.1:3128` to the proxy's unix socket.

Stdlib only, passed as source text (`python -I -S -c BRIDGE SOCKET PORTS [CMD...]`), so nothing
of agentctl needs to be importable inside. It binds the ports before anything else runs (no race
with a client that connects at once) and forwards each accepted connection to the socket.

Two ways to run it. Held (no CMD): once per attempt and rule set, in a network namespace of its
own that the attempt's processes then join one at a time (`SharedNetwork`); it says `ready` on
stdout once bound and ends when its stdin closes. Python's start-up (~20 ms in a sandbox) is paid
once, not per process. In front of CMD (the fallback where a namespace cannot be joined, i.e.
not root): it forks the real command and exits with its status when it ends, which ends the
sandbox and everything left in it.

PORTS is `3128` (the proxy) and, for a model endpoint on the host's loopback (a local model
server), `,PORT=HOST:PORT` entries: inside, that port opens a CONNECT tunnel through the same
proxy, so the connection is decided and recorded like any other, and a client that bypasses
proxies for loopback still reaches it.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from agentctl.execution.reaper import kept, release

PROXY_PORT = 3128
PROXY_SOCKET = Path("/run/agentctl/proxy.sock")  # where a jail sees its gate to the proxy
READY_SECONDS = 10.0

SOURCE = r'''
import os, sys, _socket as S, _thread
path, ports, argv = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
servers = []
for entry in ports:
    port, _, target = entry.partition("=")
    server = S.socket(S.AF_INET, S.SOCK_STREAM)
    server.setsockopt(S.SOL_SOCKET, S.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(port)))
    server.listen(128)
    servers.append((server, target))
def accept(server, target):
    while True:
        fd, _ = server._accept()
        _thread.start_new_thread(serve, (fd, target))
child = os.fork() if argv else -1  # held: no command of its own
if child == 0:
    for server, _ in servers:
        server.close()
    try:
        os.execvp(argv[0], argv)
    except FileNotFoundError:
        os.write(2, ("agentctl: %s: command not found\n" % argv[0]).encode("utf-8", "replace"))
        os._exit(127)
    except OSError as error:
        os.write(2, ("agentctl: %s: cannot execute: %s\n" % (argv[0], error.strerror)).encode())
        os._exit(126)
def pump(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(S.SHUT_RDWR)
        except OSError:
            pass
def tunnel(upstream, target):
    upstream.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        data = upstream.recv(4096)
        if not data or len(head) > 65536:
            raise OSError("the proxy closed the tunnel")
        head += data
    status, _, rest = head.partition(b"\r\n\r\n")
    if status.split(b" ", 2)[1:2] != [b"200"]:
        raise OSError("the proxy refused the tunnel")
    return rest
def serve(fd, target):
    client = S.socket(S.AF_INET, S.SOCK_STREAM, 0, fd)
    upstream = S.socket(S.AF_UNIX, S.SOCK_STREAM)
    try:
        upstream.connect(path)
        early = tunnel(upstream, target) if target else b""
        if early:
            client.sendall(early)
    except (OSError, IndexError):
        client.close()
        upstream.close()
        return
    _thread.start_new_thread(pump, (upstream, client))
    pump(client, upstream)
for server, target in servers:
    _thread.start_new_thread(accept, (server, target))
if not argv:  # held: until agentctl closes our stdin
    os.write(1, b"ready\n")
    while os.read(0, 4096):
        pass
    os._exit(0)
os.close(0)
while True:
    try:
        _, status = os.waitpid(child, 0)
        break
    except InterruptedError:
        continue
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
'''


def bridge_argv(socket: Path, ports: str) -> list[str]:
    """The bridge's own command line (followed by CMD when it runs in front of one)."""
    return [sys.executable, "-I", "-S", "-c", SOURCE, str(socket), ports]


class SharedNetwork:
    """A held bridge in a network namespace of its own (inside `sandbox_argv`, a bwrap command
    line that unshares the network and binds the gate's socket); `path` is the namespace, for
    `nsenter --net=PATH`. Ends when its stdin closes: when closed, or when agentctl ends."""

    def __init__(self, sandbox_argv: Sequence[str], socket: Path, ports: str) -> None:
        info_read, info_write = os.pipe()
        try:
            with kept() as keep:  # it lasts the attempt: no sweep of leftovers may take it
                self._process = subprocess.Popen(
                    [*sandbox_argv[:1], "--info-fd", str(info_write), *sandbox_argv[1:], "--",
                     *bridge_argv(socket, ports)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    pass_fds=(info_write,), start_new_session=True)
                keep(self._process.pid)
        finally:
            os.close(info_write)
        try:
            with os.fdopen(info_read, "rb") as info:
                child = int(json.loads(info.read() or b"{}").get("child-pid", 0))
            self._wait_ready()
        except BaseException:
            self.close()
            raise
        if child <= 0:
            self.close()
            raise OSError("the network bridge's sandbox did not say its pid")
        self.path = Path(f"/proc/{child}/ns/net")

    def _wait_ready(self) -> None:
        assert self._process.stdout is not None and self._process.stderr is not None
        ready, _, _ = select.select([self._process.stdout], [], [], READY_SECONDS)
        line = self._process.stdout.readline() if ready else b""
        if line.strip() != b"ready":
            self._process.kill()
            error = self._process.stderr.read().decode(errors="replace").strip()
            raise OSError(f"the network bridge did not start: {error or 'no word from it'}")

    @property
    def alive(self) -> bool:
        """Its namespace is still there to join (its first process, which holds it, lives; the
        bwrap that started it may take a moment longer to end)."""
        return self._process.poll() is None and self.path.exists()

    def end(self) -> None:
        """Tell the bridge to end (its stdin closes), without waiting for it."""
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()

    def close(self) -> None:
        self.end()
        try:
            self._process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        release(self._process.pid)
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()
