"""`copilot[:MODEL]`: GitHub Copilot CLI headless (`copilot -p --output-format json`), every
native tool call checked by agentctl's preToolUse hook and recorded from its postToolUse.

Its home is private to the attempt (`HOME`, and `COPILOT_HOME` under it), holding only
agentctl's hook file (`hooks/agentctl.json`). The repository's own configuration never loads:
Copilot reads `.github/hooks`, `.github/copilot/settings*.json`, `.claude/settings.json` and
`.mcp.json` only from a folder it trusts, and nothing here trusts one (no `--trust-folder`, no
saved trusted folders, every `COPILOT_*`/`GITHUB_COPILOT_*` variable of the caller dropped:
`COPILOT_ALLOW_ALL=true` trusts the folder and `GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS` loads
its hooks without trust). `disableAllHooks` in an untrusted folder's settings does not reach
agentctl's hooks; `allowManagedHooksOnly` (a managed policy) would drop them, and the session
start hook, which arms the run, then never arrives.

Copilot's hook input names no event (one command per event, `--event`) and calls the call
`toolName`/`toolArgs` (an object, or a string: a JSON object's text, or `apply_patch`'s patch);
it is put in the hook's canonical shape here before the shared loop reads it. Its stream shows
a call's arguments before the hook rewrote them, so every record comes from the hooks; a
postToolUse carries the rewritten arguments, which are mapped back to the call they came from.
A hook that times out is "allow" to Copilot: the timeout is set far above agentctl's own.
A sync shell call still running after its `initial_wait` (the model's, at least 30 s) would be
returned early while its command runs on, unrecorded: the rewrite into the jail waits as long as
the jail may run it (`waiting_to_the_end`), so a command ends within its call or with the attempt;
should Copilot return one anyway, the shared PostToolUse handling ends its jail with the call.

The CLI unpacks ~200 MB into its package cache on first start: one cache is shared by every
attempt (`COPILOT_CACHE_HOME`, else agentctl's cache folder), filled by `copilot --version`
before the run and read-only inside the run's sandbox.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from agentctl.domain.agent import AgentSpec, NativeAgentSettings
from agentctl.execution.agents import AgentSession, NativeTools
from agentctl.execution.agents.hook_socket import Source
from agentctl.execution.agents.native import NativeAgent
from agentctl.execution.agents.native_launch import Launch, collector_endpoints, frozen_spec
from agentctl.execution.agents.stream import StreamReader, StreamState
from agentctl.execution.sandboxing.sandbox import model_endpoints
from agentctl.hooks import wire

# Copilot's hook events, each a command of its own, and the event agentctl reads it as.
HOOK_EVENTS = {"sessionStart": "SessionStart", "preToolUse": "PreToolUse",
               "postToolUse": "PostToolUse", "postToolUseFailure": "PostToolUseFailure"}
# Far above the hook's own deadline (it waits up to an hour for a person's approval): Copilot
# lets a call run when its hook times out.
HOOK_TIMEOUT_SECONDS = 86_400
CALLERS_VARIABLES = ("COPILOT_", "GITHUB_COPILOT_")  # the caller's, never the CLI's
PROVIDER_VARIABLES = ("COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_API_KEY",
                      "COPILOT_PROVIDER_TYPE", "COPILOT_PROVIDER_WIRE_API")  # the gateway's
FAILED_RESULTS = frozenset({"failure", "denied", "rejected", "error"})
_EXIT = re.compile(r"\n?<shellId: [^>\n]* completed with exit code (-?\d+)>\s*$")
PREPARE_SECONDS = 300.0


def hook_file(hook: str) -> str:
    """agentctl's `hooks/agentctl.json`: each event runs agentctl's hook with its name."""
    command, _, fallback = hook.rpartition(" || ")  # `hook_command`: `ARGV || exit 2`
    return json.dumps({"version": 1, "hooks": {
        name: [{"type": "command", "bash": f"{command} --event {event} || {fallback}",
                "timeoutSec": HOOK_TIMEOUT_SECONDS}]
        for name, event in HOOK_EVENTS.items()}}, indent=2)


def package_cache(env: Mapping[str, str]) -> Path:
    """Where Copilot's unpacked package is kept for every attempt."""

    given = env.get("COPILOT_CACHE_HOME") or os.environ.get("COPILOT_CACHE_HOME")
    return Path(given) if given else Path(platformdirs.user_cache_dir("agentctl")) / "copilot"


def installed_version(command: str, path: str) -> str | None:
    """The version of the npm package `command` runs (its loader's `package.json`), if any."""

    found = shutil.which(command, path=path or None)
    if found is None:
        return None
    try:
        manifest = json.loads((Path(found).resolve().parent / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = manifest.get("version") if isinstance(manifest, dict) else None
    return version if isinstance(version, str) and version else None


def prepare_cache(command: str, env: Mapping[str, str], cache: Path) -> None:
    """The package unpacked into the shared cache, one attempt at a time; skipped when the
    installed version is already there (`copilot --version` costs ~0.4 s), and a failure is
    left for the run itself to report."""

    version = installed_version(command, env.get("PATH", ""))
    if version is not None and any((cache / "pkg").glob(f"*/{version}/index.js")):
        return
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".agentctl.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            subprocess.run([command, "--version"], env=dict(env), capture_output=True,
                           timeout=PREPARE_SECONDS, check=False, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            pass


def tool_input(arguments: object) -> dict[str, object]:
    """`toolArgs` as an object: given as one, or as a JSON object's text; any other text (the
    patch `apply_patch` takes) is its `input`."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            value = None
        return value if isinstance(value, dict) else {"input": arguments}
    return {} if arguments is None else {"input": arguments}


def tool_response(result: object) -> tuple[object, bool]:
    """A postToolUse `toolResult` as the result agentctl records, and whether it failed; a
    shell command's exit code is taken from the line Copilot ends its output with."""
    if not isinstance(result, dict):
        return result if result is not None else "", False
    text = str(result.get("textResultForLlm") or "")
    failed = str(result.get("resultType") or "success") in FAILED_RESULTS
    response: dict[str, object] = {"output": text}
    found = _EXIT.search(text)
    if found:
        response = {"output": text[:found.start()], "exit_code": int(found.group(1))}
    if failed:
        response["error"] = text or str(result.get("resultType"))
    return response, failed


def wall_budget(session: AgentSession) -> float:
    """The run's wall budget: no jail runs longer (the attempt ends them by then). The frozen
    budget's, the same in a replay (it is in the history the model is sent); else what is left."""
    budget = frozen_spec(session).get("budget")
    total = budget.get("wallSeconds") if isinstance(budget, dict) else None
    left = session.wall_seconds()
    if isinstance(total, (int, float)) and not isinstance(total, bool):
        return max(float(total), left)
    return left


def waiting_to_the_end(routed: Mapping[str, object], seconds: float) -> dict[str, object]:
    """A shell call routed into its jail, told to wait for its command as long as the jail may
    run it (`seconds`: the run's wall budget, when the attempt and its jails end). Copilot
    returns a sync call still running after `initial_wait` (never under 30 s), its command going
    on with no call of the record under way: so it never does before the attempt ends."""
    asked = routed.get("initial_wait")
    wait = math.ceil(max(seconds, 1.0))
    if isinstance(asked, (int, float)) and not isinstance(asked, bool) and asked > wait:
        wait = math.ceil(asked)
    return {**routed, "initial_wait": wait}


def _key(arguments: Mapping[str, object]) -> str:
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)


class CopilotAgent(NativeAgent):
    name = "copilot"
    arming = "session-start"  # its sessionStart hook proves agentctl's hooks loaded

    def __init__(self, spec: AgentSpec) -> None:
        super().__init__(spec)
        # a rewritten call's arguments (as its postToolUse gives them) -> what the model asked
        self._rewritten: dict[str, dict[str, object]] = {}
        self._home: Path | None = None
        self._max_turns = 0

    def launch(self, session: AgentSession, settings: NativeAgentSettings, home: Path,
               prompt: str, hook: str, mcp: list[str]) -> Launch:
        config = home / ".copilot"
        (config / "hooks").mkdir(mode=0o700, parents=True, exist_ok=True)
        (config / "hooks" / "agentctl.json").write_text(hook_file(hook), encoding="utf-8")
        self._home, self._max_turns = home, settings.max_turns
        cache = package_cache(session.env)
        env = {name: value for name, value in session.env.items()
               if not name.startswith(CALLERS_VARIABLES)}
        env.update({name: session.env[name] for name in PROVIDER_VARIABLES
                    if name in session.env})
        env.update(HOME=str(home), COPILOT_HOME=str(config), COPILOT_CACHE_HOME=str(cache),
                   COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false")
        prepare_cache(settings.command, env, cache)
        argv = [settings.command, "-p", prompt, "--allow-all-tools", "--output-format", "json",
                "--no-auto-update", "--disable-builtin-mcps", "--no-sandbox", "--no-ask-user",
                "--usage-output-file", str(home / "usage.json")]
        if settings.model:
            argv += ["--model", settings.model]
        argv += list(settings.extra_args)
        return Launch(argv, env, read_only=(cache,))

    def endpoints(self, session: AgentSession, settings: NativeAgentSettings) -> tuple[str, ...]:
        """Its model gateway (the provider base URL it is given) and the trace collector."""

        url = session.env.get("COPILOT_PROVIDER_BASE_URL")
        return model_endpoints({"OPENAI_BASE_URL": url} if url else session.env) \
            + collector_endpoints(session.env)

    def _handle(self, message: dict[str, object], source: Source, native: NativeTools,
                reader: StreamReader, state: StreamState,
                session: AgentSession) -> dict[str, object]:
        """Copilot's hook input in the canonical shape, then the shared answer; a shell call
        rewritten into its jail is remembered, to pair its postToolUse with it."""
        event, payload = message.get("event"), message.get("input")
        if not isinstance(payload, dict) or "toolName" not in payload:
            return super()._handle(message, source, native, reader, state, session)
        asked = tool_input(payload.get("toolArgs"))
        self._follow(reader, state, native, session)  # the turn this call belongs to is read
        if event == "PreToolUse" and self._max_turns and state.turns > self._max_turns:
            state.error = "it hit its turn limit (max_turns)"
            return {"decision": wire.DENY, "reason": (
                f"agentctl: this run's turn limit ({self._max_turns}) is reached: stop here")}
        canonical: dict[str, object] = {"hook_event_name": event,
                                        "tool_name": str(payload.get("toolName")),
                                        "tool_input": self._rewritten.pop(_key(asked), asked)}
        if event == "PostToolUse":
            canonical["tool_response"], failed = tool_response(payload.get("toolResult"))
            if failed:
                event = "PostToolUseFailure"
        elif event == "PostToolUseFailure":
            canonical["tool_response"] = {"error": str(payload.get("error") or "failed")}
        answer = super()._handle({**message, "event": event, "input": canonical}, source,
                                 native, reader, state, session)
        routed = answer.get("updatedInput")
        if event == "PreToolUse" and isinstance(routed, str):
            waiting = waiting_to_the_end(json.loads(routed), wall_budget(session))
            answer["updatedInput"] = json.dumps(waiting, separators=(",", ":"))
            self._rewritten[_key(waiting)] = asked
        return answer

    def read(self, event: Mapping[str, object], state: StreamState) -> None:
        kind = event.get("type")
        data = event.get("data")
        data = data if isinstance(data, dict) else {}
        if kind == "assistant.turn_start":
            state.turns += 1
        elif kind == "session.error":
            state.extra.setdefault("errors", [])
            errors = state.extra["errors"]
            if isinstance(errors, list):
                errors.append(str(data.get("message"))[:300])
        elif kind == "result":
            state.finished = True
            state.extra["sessionId"] = event.get("sessionId")
            code = event.get("exitCode")
            if code not in (0, None) and state.error is None:
                errors = state.extra.get("errors")
                said = errors[-1] if isinstance(errors, list) and errors else ""
                state.error = f"it ended with exit code {code}{': ' if said else ''}{said}"

    def report(self, state: StreamState) -> dict[str, object]:
        """Its usage claim from the file `--usage-output-file` wrote (the stream has none)."""
        claimed = self._usage()
        if claimed is not None:
            state.input_tokens = state.token_count(claimed[0], "inputTokens")
            state.output_tokens = state.token_count(claimed[1], "outputTokens")
        return super().report(state)

    def _usage(self) -> tuple[object, object] | None:
        if self._home is None:
            return None
        try:
            usage = json.loads((self._home / "usage.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        models = usage.get("modelMetrics") if isinstance(usage, dict) else None
        if not isinstance(models, dict):
            return None
        totals = [metrics.get("usage") for metrics in models.values()
                  if isinstance(metrics, dict)]
        figures = [figure for figure in totals if isinstance(figure, dict)]
        if any(not isinstance(figure.get(key), int) for figure in figures
               for key in ("inputTokens", "outputTokens")):
            return None
        return (sum(int(figure["inputTokens"]) for figure in figures),
                sum(int(figure["outputTokens"]) for figure in figures))
