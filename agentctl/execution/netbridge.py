"""The bridge inside a sandbox from `127.0.0.1:3128` to the proxy's unix socket.

It runs as the sandbox's first command (`python -I -S -c BRIDGE SOCKET PORTS CMD...`): it binds
the ports before anything else runs (no race with a client that connects at once), forks the
real command, forwards each accepted connection to the socket, and exits with the command's
status when the command ends, which ends the sandbox and everything left in it. Stdlib only,
passed as source text, so nothing of agentctl needs to be importable inside.

PORTS is `3128` (the proxy) and, for a model endpoint on the host's loopback (a local model
server), `,PORT=HOST:PORT` entries: inside, that port opens a CONNECT tunnel through the same
proxy, so the connection is decided and recorded like any other, and a client that bypasses
proxies for loopback still reaches it.
"""

from __future__ import annotations

PROXY_PORT = 3128

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
child = os.fork()
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
def accept(server, target):
    while True:
        fd, _ = server._accept()
        _thread.start_new_thread(serve, (fd, target))
for server, target in servers:
    _thread.start_new_thread(accept, (server, target))
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
