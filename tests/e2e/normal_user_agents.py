"""Claude Code, Codex, Gemini CLI, Copilot CLI and opencode run by a normal user
(test_normal_user): the pinned CLIs made readable to that user, each one's scripted run (an
allowed write, an allowed shell call, a denied one), its config and the environment agentctl
needs for its model gateway.

The test tier installs the CLIs under the test process's home (root's is closed to others):
they are linked, not copied, into a folder the user can read, once per module (hard links: no
data is copied; a real copy only when the two folders are on different file systems)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.agents.conftest import (
    CLAUDE,
    CODEX,
    COPILOT,
    GEMINI,
    OPENCODE,
    agents_cache,
    copilot_cache,
    install_cli,
)
from tests.agents.fake_gemini import gemini_server
from tests.agents.fake_models import Call, FakeModel, Script, Text, anthropic_server, openai_server

# What each run's shell calls do: one the guard allows (`python3 *`), run in its jail, and one
# it denies (`curl *`), which would leave a marker had it run.
PRINTS = "python3 -c \"import sys; print('jailed', 6 * 7); sys.exit(3)\""
DENIED_MARKER = "denied-marker.txt"
DENIED = f"curl -s -o {DENIED_MARKER} file:///etc/hostname"
NOTES = "notes written by the agent\n"
# the three calls of each CLI's run: the write, the allowed shell call, the denied one
TOOLS = {"claude": ("Write", "Bash", "Bash"),
         "codex": ("apply_patch", "Bash", "Bash"),  # its exec_command is recorded as Bash
         "copilot": ("create", "bash", "bash"),
         "gemini": ("write_file", "run_shell_command", "run_shell_command"),
         "opencode": ("write", "bash", "bash")}
SCRIPTS: dict[str, list[list[Text | Call]]] = {
    "claude": [[Call("Write", {"file_path": "{cwd}/notes.txt", "content": NOTES})],
               [Call("Bash", {"command": PRINTS, "description": "print"})],
               [Call("Bash", {"command": DENIED, "description": "fetch"})],
               [Text("done")]],
    "codex": [[Call("apply_patch", "*** Begin Patch\n*** Add File: notes.txt\n"
                    + "".join(f"+{line}\n" for line in NOTES.splitlines()) + "*** End Patch\n")],
              [Call("exec_command", {"cmd": PRINTS})],
              [Call("exec_command", {"cmd": DENIED})],
              [Text("done")]],
    "copilot": [[Call("create", {"path": "{cwd}/notes.txt", "file_text": NOTES})],
                [Call("bash", {"command": PRINTS, "description": "print"})],
                [Call("bash", {"command": DENIED, "description": "fetch"})],
                [Text("done")]],
    "gemini": [[Call("write_file", {"file_path": "{cwd}/notes.txt", "content": NOTES})],
               [Call("run_shell_command", {"command": PRINTS, "description": "print"})],
               [Call("run_shell_command", {"command": DENIED, "description": "fetch"})],
               [Text("done")]],
    "opencode": [[Call("write", {"filePath": "{cwd}/notes.txt", "content": NOTES})],
                 [Call("bash", {"command": PRINTS, "description": "print"})],
                 [Call("bash", {"command": DENIED, "description": "fetch"})],
                 [Text("done")]],
}
PASSTHROUGH = {"claude": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
               "codex": ("FAKE_API_KEY",), "copilot": (),
               "gemini": ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY"),
               "opencode": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")}
# the model catalog that lets Codex offer apply_patch (test_codex's)
CATALOG = Path(__file__).resolve().parents[1] / "agents" / "codex-catalog.json"
MODELS = {"claude": None, "codex": "fake-model", "copilot": "fake-model",
          "gemini": "gemini-2.5-pro", "opencode": None}


@dataclass(frozen=True)
class UserAgents:
    """The CLIs where the user can run them, and one fake vendor API per CLI."""

    commands: dict[str, Path]  # agent name -> its executable, readable by the user
    copilot_cache: Path  # Copilot's unpacked package, readable by the user
    codex_catalog: Path  # the model catalog that lets Codex offer apply_patch, readable too
    models: dict[str, FakeModel]

    def env(self, agent: str) -> dict[str, str]:
        """agentctl's own environment for a run of `agent`: its upstream and a key."""
        model = self.models[agent]
        return {"claude": {"ANTHROPIC_BASE_URL": model.url,
                           "ANTHROPIC_API_KEY": "sk-ant-real-user-0123456789"},
                "codex": {"FAKE_API_KEY": "sk-real-openai-user-0123456789"},
                "copilot": {"OPENAI_BASE_URL": f"{model.url}/v1",
                            "OPENAI_API_KEY": "sk-real-openai-user-0123456789",
                            "COPILOT_CACHE_HOME": str(self.copilot_cache)},
                "gemini": {"GOOGLE_GEMINI_BASE_URL": model.url,
                           "GEMINI_API_KEY": "AIza-real-gemini-user-0123456789"},
                "opencode": {"ANTHROPIC_BASE_URL": model.url,
                             "ANTHROPIC_API_KEY": "sk-ant-real-user-0123456789"}}[agent]

    def config(self, agent: str, extra: str = "", command: Path | None = None,
               read_only: tuple[Path, ...] = ()) -> str:
        model = MODELS[agent]
        return (f'[agents.{agent}]\ncommand = "{command or self.commands[agent]}"\n'
                + (f'model = "{model}"\n' if model else "")
                + (self._codex() if agent == "codex" else "max_turns = 10\n") + "\n"
                f"[env]\npassthrough = {json.dumps(list(PASSTHROUGH[agent]))}\n\n"
                '[budget]\nmax_attempts = 1\nbackoff_initial_seconds = 0\nwall_seconds = 300\n\n'
                f"[sandbox]\nread_only = {json.dumps([str(p) for p in read_only])}\n"
                f"{extra}")

    def _codex(self) -> str:
        """Codex's upstream, its key's name and its catalog (it has no turn limit to set)."""
        catalog = json.dumps("model_catalog_json=" + json.dumps(str(self.codex_catalog)))
        return (f'base_url = "{self.models["codex"].url}/v1"\nenv_key = "FAKE_API_KEY"\n'
                f"extra_args = [\"-c\", {catalog}]\n")


def user_agents(place: Path, shared: bool) -> Iterator[UserAgents]:
    """The pinned CLIs and Copilot's package cache, linked under `place` (readable by every
    user) when `shared`, else where the test tier installed them; a fake API for each."""
    installed = {name: install_cli(*release) for name, release in
                 (("claude", CLAUDE), ("codex", CODEX), ("copilot", COPILOT),
                  ("gemini", GEMINI), ("opencode", OPENCODE))}
    catalog = place / CATALOG.name  # the checkout may be closed to the user
    shutil.copyfile(CATALOG, catalog)
    catalog.chmod(0o644)
    cache = copilot_cache()
    if shared:
        linked = place / "agents"
        linked.mkdir()
        for folder in {*(path.parents[2] for path in installed.values()), cache}:
            _link_tree(folder, linked / folder.name)
        subprocess.run(["chmod", "-R", "a+rX", str(linked)], check=True)
        installed = {name: linked / path.relative_to(agents_cache())
                     for name, path in installed.items()}
        cache = linked / cache.name
    models = {"claude": anthropic_server(), "codex": openai_server(),
              "copilot": openai_server(), "gemini": gemini_server(),
              "opencode": anthropic_server()}
    try:
        yield UserAgents(installed, cache, catalog, models)
    finally:
        for model in models.values():
            model.close()


def _link_tree(source: Path, target: Path) -> None:
    done = subprocess.run(["cp", "-al", str(source), str(target)], capture_output=True,
                          check=False)
    if done.returncode:  # another file system: one real copy
        subprocess.run(["rm", "-rf", str(target)], check=True)
        subprocess.run(["cp", "-a", str(source), str(target)], check=True)


def script(agents: UserAgents, agent: str) -> Script:
    model = agents.models[agent]
    model.script = Script(SCRIPTS[agent])
    return model.script


def hooks_dropped(agents: UserAgents, where: Path) -> Path:
    """`[agents.gemini] command` that takes agentctl's hooks out of the settings agentctl wrote,
    then starts the real CLI: its guard never loads."""
    wrapper = where / "gemini-without-hooks"
    drop = ("import json, os; p = os.path.expanduser('~/.gemini/settings.json'); "
            "s = json.load(open(p)); s.pop('hooks'); json.dump(s, open(p, 'w'))")
    wrapper.write_text(f'#!/bin/sh\npython3 -c "{drop}" || exit 1\n'
                       f'exec {agents.commands["gemini"]} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper
