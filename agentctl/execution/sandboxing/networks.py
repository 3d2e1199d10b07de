"""The network namespaces sandboxed processes run in, each held by a bridge to the proxy.

Where a namespace can be joined (root, with `nsenter`), they belong to agentctl's process, not
to one attempt: one is made on first use for a rule set (or ahead, `prepare`, while an attempt
clones), lent to one process at a time, given back once that process and its whole tree are
gone (the jail's cgroup is killed first), and lent again to the next process, of this attempt or
of a later one. A bridge costs a bwrap, a new network namespace and a Python start-up (~20 ms
of CPU); the demo and a worker run many attempts in one process, so that is paid once per rule
set, not once per attempt. Two processes that run at once get two namespaces (each connection
is counted against its own process, and their loopback ports do not collide).

Nothing a process does in a namespace outlives it for the next one: its sockets die with it, and
it holds no capability there (its own user namespace is a sibling of the bridge's, its
capabilities dropped), so it cannot change addresses, routes or filters. Its connection attempts
are taken from the gate when it gives the namespace back.

The shared namespaces' proxy (one event loop thread, a private socket directory under /tmp,
which every jail hides) lasts the process; their bridges end at exit, or when agentctl dies
(their stdin closes). Where a namespace cannot be joined, each process brings its own bridge in
front of its command, through a gate of the attempt's own proxy made for it alone.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shutil
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentctl.domain.sandbox import ConnectAttempt
from agentctl.execution.sandboxing.egress import EgressProxy, Gate
from agentctl.execution.sandboxing.netbridge import PROXY_SOCKET, SharedNetwork
from agentctl.execution.sandboxing.socket_dirs import SocketDir

# Namespaces kept with no process in them, over every rule set (the oldest given back goes)
MAX_IDLE = 4
CLONE_NEWNET = 0x40000000


def can_join_networks() -> bool:
    """Whether a process can be started in a network namespace made before it: setns into a
    namespace of another user namespace needs CAP_SYS_ADMIN here, i.e. root."""
    return os.geteuid() == 0 and shutil.which("nsenter") is not None


def nsenter_argv(namespace: Path) -> list[str]:
    """What starts a command in `namespace` (before bwrap, which cannot join one)."""
    return ["nsenter", f"--net={namespace}", "--"]


@contextlib.contextmanager
def entered(namespace: Path) -> Iterator[bool]:
    """The calling thread in the network namespace `namespace` for the block (True), back in
    its own after; False, and nothing changed, where it cannot join it. A process started on
    this thread meanwhile is born in it: one exec (`nsenter`) less than `nsenter_argv`. Only
    the thread moves (a network namespace is per thread): agentctl's other threads, and its
    sockets, stay where they are; the block must open no socket."""
    try:
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        yield False
        return
    try:
        joined = _join(namespace)
        try:
            yield joined
        finally:
            if joined and not _setns(own):
                raise OSError("cannot return to agentctl's own network namespace")
    finally:
        os.close(own)


def _join(namespace: Path) -> bool:
    try:
        target = os.open(namespace, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return _setns(target)
    finally:
        os.close(target)


def _setns(descriptor: int) -> bool:
    setns = getattr(os, "setns", None)  # Python 3.12
    if setns is not None:
        try:
            setns(descriptor, CLONE_NEWNET)
        except OSError:
            return False
        return True
    try:
        return int(_libc().setns(descriptor, CLONE_NEWNET)) == 0
    except (OSError, AttributeError):
        return False


_libc_handle: ctypes.CDLL | None = None


def _libc() -> ctypes.CDLL:
    global _libc_handle
    if _libc_handle is None:
        _libc_handle = ctypes.CDLL(None, use_errno=True)
    return _libc_handle


@dataclass
class Network:
    """One network namespace lent to one process at a time: the bridge held in it (None when
    the process brings its own) and the gate its connections go through."""

    gate: Gate
    ports: str
    shared: SharedNetwork | None = None

    def take(self) -> tuple[ConnectAttempt, ...]:
        """The connections tried since the last lender's, which are this one's."""
        return self.gate.take()

    @property
    def alive(self) -> bool:
        return self.shared is None or self.shared.alive


# (the bridge's jail up to its socket's bind, the rules, the ports)
Key = tuple[tuple[str, ...], tuple[str, ...], str]


class NetworkPool:
    """The process's shared namespaces, by key: free ones in the order given back."""

    def __init__(self) -> None:
        self.sockets = SocketDir()
        self.proxy = EgressProxy(self.sockets.path)
        self._free: list[tuple[Key, Network]] = []
        self._all: list[Network] = []
        self._made: dict[Key, int] = {}  # free or lent, by key
        self._preparing: dict[Key, list[threading.Thread]] = {}
        self._lock = threading.Lock()

    def prepare(self, key: Key, count: int = 1) -> None:
        """Start making enough for `key`, each on a thread of its own, that `count` are made
        (free or lent) or on their way: the processes that need them do not wait for them."""
        with self._lock:
            for _ in range(count - self._made.get(key, 0) - len(self._preparing.get(key, ()))):
                thread = threading.Thread(target=self._prepared, args=(key,),
                                          name="agentctl-network", daemon=True)
                self._preparing.setdefault(key, []).append(thread)
                thread.start()  # under the lock: no lender joins it before it has started

    def _prepared(self, key: Key) -> None:
        """Make one for `key`, free for the next lender (a prepare's thread)."""
        try:
            with contextlib.suppress(OSError):  # a lender makes it, and says why not
                self._give_back(key, self._make(key))
        finally:
            with self._lock:
                with contextlib.suppress(ValueError):
                    self._preparing.get(key, []).remove(threading.current_thread())

    @contextlib.contextmanager
    def lend(self, key: Key) -> Iterator[Network]:
        network = self._take_free(key)
        while network is None:  # one on its way is waited for; with none, one is made
            with self._lock:
                waiting = self._preparing.get(key)
                preparing = waiting[0] if waiting else None
            if preparing is None:
                network = self._take_free(key) or self._make(key)
            else:
                preparing.join()
                network = self._take_free(key)
        try:
            yield network
        finally:
            self._give_back(key, network)

    def _take_free(self, key: Key) -> Network | None:
        while True:
            with self._lock:
                found = next((i for i in reversed(range(len(self._free)))
                              if self._free[i][0] == key), None)
                if found is None:
                    return None
                _, network = self._free.pop(found)
            if network.alive:
                return network
            self._drop(key, network)  # its bridge died: a new one is made

    def _give_back(self, key: Key, network: Network) -> None:
        with self._lock:
            self._free.append((key, network))
            surplus = self._free[:-MAX_IDLE] if len(self._free) > MAX_IDLE else []
            del self._free[:len(surplus)]
        for old_key, old in surplus:
            self._drop(old_key, old)

    def _make(self, key: Key) -> Network:
        jail, rules, ports = key
        gate = self.proxy.open_gate(rules)
        try:
            network = Network(gate, ports, SharedNetwork(
                [*jail, "--bind", str(gate.socket_path), str(PROXY_SOCKET)], PROXY_SOCKET, ports))
        except OSError:
            gate.close()
            raise
        with self._lock:
            self._all.append(network)
            self._made[key] = self._made.get(key, 0) + 1
        return network

    def _drop(self, key: Key, network: Network) -> None:
        with self._lock:
            if network in self._all:
                self._all.remove(network)
                self._made[key] -= 1
        if network.shared is not None:
            network.shared.close()
        network.gate.close()

    def close(self) -> None:
        """Every bridge ended, the proxy stopped (at exit)."""
        with self._lock:
            preparing = [t for threads in self._preparing.values() for t in threads]
            self._preparing = {}
        for thread in preparing:
            thread.join()
        with self._lock:
            held, self._all, self._free, self._made = self._all, [], [], {}
        for network in held:  # all told at once, then waited for: they end side by side
            if network.shared is not None:
                network.shared.end()
        for network in held:
            if network.shared is not None:
                network.shared.close()
            network.gate.close()
        self.proxy.close()
        self.sockets.remove()


_pool: NetworkPool | None = None
_pool_lock = threading.Lock()


def shared_pool() -> NetworkPool:
    """The process's pool, made on first use and closed at exit."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = NetworkPool()
            atexit.register(_pool.close)
        return _pool


class Networks:
    """One attempt's way to its networks: the process's shared ones where a namespace can be
    joined (`bridge_jail`: the bwrap command line a bridge is held in, less its socket's bind),
    else a gate of the attempt's own proxy for each process, which brings its own bridge."""

    def __init__(self, bridge_jail: Sequence[str], proxy: EgressProxy, *, shared: bool) -> None:
        self.bridge_jail = tuple(bridge_jail)
        self.proxy = proxy
        self.shared = shared

    def prepare(self, rules: tuple[str, ...], ports: str, count: int = 1) -> None:
        """Have `count` made for `rules` before processes need them (made meanwhile, on
        threads, unless there are already)."""
        if self.shared:
            shared_pool().prepare((self.bridge_jail, rules, ports), count)

    @contextlib.contextmanager
    def lend(self, rules: tuple[str, ...], ports: str) -> Iterator[Network]:
        if self.shared:
            with shared_pool().lend((self.bridge_jail, rules, ports)) as network:
                yield network
            return
        gate = self.proxy.open_gate(rules)
        try:
            yield Network(gate, ports)
        finally:
            gate.close()
