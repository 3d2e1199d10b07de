"""The bridge inside a sandbox from `127.0.0.1:3128` to the proxy's unix socket.

It runs as the sandbox's first command (`python -I -S -c BRIDGE SOCKET PORT CMD...`): it binds
the port before anything else runs (no race with a client that connects at once), forks the
real command, forwards each accepted connection to the socket, and exits with the command's
status when the command ends, which ends the sandbox and everything left in it. Stdlib only,
passed as source text, so nothing of agentctl needs to be importable inside.
"""

from __future__ import annotations

PROXY_PORT = 3128

SOURCE = r'''
import os, sys, _socket as S, _thread
path, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
server = S.socket(S.AF_INET, S.SOCK_STREAM)
server.setsockopt(S.SOL_SOCKET, S.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(128)
child = os.fork()
if child == 0:
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
def serve(fd):
    client = S.socket(S.AF_INET, S.SOCK_STREAM, 0, fd)
    upstream = S.socket(S.AF_UNIX, S.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        return
    _thread.start_new_thread(pump, (upstream, client))
    pump(client, upstream)
def accept():
    while True:
        fd, _ = server._accept()
        _thread.start_new_thread(serve, (fd,))
_thread.start_new_thread(accept, ())
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
