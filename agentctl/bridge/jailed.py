"""`python -E -s -S .../agentctl/bridge/jailed.py SOCKET TOKEN`: what a native shell call
(Claude Code's `Bash`, Codex's `exec_command`) runs instead of its command.

The PreToolUse hook allowed the command and replaced it with this stub and a one-shot token.
The stub hands its stdin, stdout and stderr (as descriptors) and its working directory to the
attempt over the socket; the attempt runs the command it holds for the token in a jail of its
own, outside the agent CLI's sandbox (no agent home, no hook socket, no settings, its own pid
namespace), writing straight to those descriptors, and answers with the exit status, which the
stub exits with. The stub itself runs nothing: the command never exists in the CLI's sandbox,
so no process it starts can read the hooks' key, reach the socket or open the CLI's `/proc`.

It fails closed: no attempt, a used or unknown token or a refusal is one line on stderr and
exit 126 (the command did not run). Standard library C modules only, as the hook: it starts
once per shell call.
"""

from __future__ import annotations

import os
import sys

try:
    import _socket as sockets
except ImportError:  # pragma: no cover - not CPython
    import socket as sockets  # type: ignore[no-redef]
try:
    from _json import encode_basestring_ascii as _quoted
except ImportError:  # pragma: no cover - not CPython
    from json.encoder import encode_basestring_ascii as _quoted

NOT_RUN = 126
DESCRIPTORS = (0, 1, 2)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        return _fail("usage: jailed.py SOCKET TOKEN (only an agentctl run starts this)")
    path, token = argv
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    request = ('{"event":"exec","token":%s,"cwd":%s}\n' % (_quoted(token), _quoted(cwd))).encode()
    connection = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    try:
        connection.connect(path)
        fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in DESCRIPTORS)
        connection.sendmsg([request], [(sockets.SOL_SOCKET, sockets.SCM_RIGHTS, fds)])
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = connection.recv(4096)
            if not chunk:
                break
            answer += chunk
    except OSError as error:
        return _fail(f"cannot reach the attempt: {error.strerror or error} (the run is over)")
    finally:
        connection.close()
    text = answer.decode("utf-8", "replace").strip()
    # the answer is `{"exit":N}` or a refusal: no JSON parser needed for the one number
    if text.startswith('{"exit":') and text.endswith("}"):
        code = text[len('{"exit":'):-1].strip()
        if code.lstrip("-").isdigit():
            status = int(code)
            return 128 - status if status < 0 else status  # killed by a signal: as a shell says
    return _fail(text or "the attempt gave no answer")


def _fail(reason: str) -> int:
    sys.stderr.write(f"agentctl: not run: {' '.join(reason.split())[:500]}\n")
    return NOT_RUN


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
