"""A command an agent runs inside its sandbox to look for the real API key everywhere it can:
its environment, every process's environment and command line it can see, and the files under
its home, the workspace, /tmp, /run, /etc and /var/tmp. The key is passed reversed (so the
command line itself does not hold it); the placeholder key the gateway gave the CLI is looked
for too (a shell command, run in a jail of its own, has none either).

The Python installs of a pyenv in the user's home (the toolchains the sandbox shows back, read
only) are not read: they were installed before the test made its key, and reading their
100,000-odd files cost a command agent's run 7 s."""

from __future__ import annotations

import shlex

SCRIPT = r"""
import os, sys
key = sys.argv[1][::-1].encode()
hits, placeholder, files = [], False, 0
for name, value in os.environ.items():
    placeholder = placeholder or value.startswith("agentctl-gateway-")
    if key in value.encode():
        hits.append("env:" + name)
for pid in os.listdir("/proc"):
    for part in ("environ", "cmdline"):
        try:
            data = open(f"/proc/{pid}/{part}", "rb").read()
        except OSError:
            continue
        if pid.isdigit() and key in data:
            hits.append(f"/proc/{pid}/{part}")
roots = [os.environ.get("HOME", "/"), os.getcwd(), "/tmp", "/run", "/etc", "/var/tmp",
         os.environ.get("CODEX_HOME", "/tmp")]
for root in dict.fromkeys(roots):
    for folder, folders, names in os.walk(root):
        if folder.endswith("/.pyenv"):
            folders[:] = [name for name in folders if name != "versions"]
        for name in names:
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as handle:
                    data = handle.read(16 << 20)
            except OSError:
                continue
            files += 1
            if key in data:
                hits.append(path)
print("KEY-HITS", hits, "PLACEHOLDER", placeholder, "FILES", files)
"""


def search_command(key: str) -> str:
    return shlex.join(["python3", "-c", SCRIPT, key[::-1]])
