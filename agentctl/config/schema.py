"""Every config key, once: its section, type, check and default, as frozen dataclasses.

A section is a dataclass; a sub-section (`[tools.commands]`) is a dataclass field of its section.
The field's type says how a TOML value is checked (see `checks`); its default is what an absent
key means. `.agentctl.example.toml` documents the same keys and a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentctl.config.checks import (
    Aliases,
    Commands,
    Count,
    DatabaseUrl,
    Flag,
    Fraction,
    Globs,
    NetworkRules,
    Number,
    PositiveCount,
    Prices,
    Regexes,
    Seconds,
    Strings,
    Text,
)
from agentctl.domain.agent import GUARD_HOLD_SECONDS, ModelApi
from agentctl.domain.enums import AutonomyLevel, BaselineMode, Forge
from agentctl.domain.sandbox import MAX_FILE_SIZE_MB, MAX_MEMORY_MB, MAX_PROCESSES, SandboxMode
from agentctl.domain.test_side import DEFAULT_TEST_PATHS

LOCKFILES = (
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Pipfile.lock", "uv.lock",
    "Cargo.lock", "Gemfile.lock", "composer.lock", "go.sum", "gradle.lockfile", "*.lock",
)
GENERATED = (
    "dist/**", "build/**", "target/**", "*.min.js", "*.min.css", "*_pb2.py", "*.pb.go",
    "**/generated/**", "*.generated.*",
)
# What tools leave behind while the agent works (bytecode, caches, installed packages, build
# output): new files matching these are left out of the patch and listed as excluded.
IGNORE_GENERATED = (
    "__pycache__", "*.pyc", "*.pyo", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox",
    "node_modules", "/target", "*/target", "/build", "/dist", "*.egg-info", ".gradle",
    ".coverage", ".coverage.*",
)
PRODUCTION_CONFIG = (
    "**/config/**", "*Config.java", "*Configuration.java", "config.py", "settings.py",
    "*production*", "*.properties", "application*.yml", "application*.yaml",
)
# Where an agent CLI reads its settings, hooks, skills and MCP servers, and agentctl its own:
# a patch that adds one configures the next run on its branch (only agentctl may).
AGENT_CONFIG = (".claude/**", ".codex/**", ".gemini/**", ".github/hooks/**", ".opencode/**",
                ".mcp.json", ".agentctl.toml")
SECRET_FILES = (".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "*.p12", "*.pfx",
                ".npmrc", ".pypirc", ".netrc", "credentials*.json")


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicySettings:
    max_autonomy: AutonomyLevel = AutonomyLevel.SUPERVISED_PR
    default_autonomy: AutonomyLevel = AutonomyLevel.DRY_RUN
    repository_allowlist: Strings = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundarySettings:
    forbidden: Globs = (".github/**", "infra/**", "deployment/**", *SECRET_FILES[:4],
                        *AGENT_CONFIG)
    allowed: Globs = ()
    lockfiles: Globs = LOCKFILES
    generated: Globs = GENERATED
    allow_lockfile_changes: Flag = False
    allow_generated_changes: Flag = False
    ignore_generated: Globs = IGNORE_GENERATED
    allow_binary: Globs = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckSettings:
    """One verification command: a command line in the file, or a table with these keys."""

    command: Text
    name: Text | None = None
    required: Flag = True
    timeout_seconds: Seconds | None = None
    junit_xml: Text | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationSettings:
    commands: tuple[CheckSettings, ...] = ()
    timeout_seconds: Seconds = 600.0
    infra_patterns: Regexes = ()
    redact_logs_up_to_bytes: Count = 64 * 1024 * 1024
    baseline: BaselineMode = BaselineMode.ALWAYS
    reruns: Count = 2
    allow_preexisting_failures: Flag = True
    baseline_concurrent: Flag = True  # the base's checks beside the candidate's (2+ cores)
    test_paths: Globs = DEFAULT_TEST_PATHS  # the patch's test side (DESIGN.md section 9)
    flaky_blame_runs: PositiveCount = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandSettings:
    deny: Commands = ("git push *", "git remote *", "git config *", "curl *", "wget *", "ssh *",
                      "scp *", "sudo *", "rm -rf /*")
    ask: Commands = ("pip install *", "npm install *", "rm -rf *")
    allow: Commands = ("python *", "python3 *", "pytest *", "ls *", "cat *", "grep *",
                       "git status *", "git diff *", "git log *", "mvn *", "gradle *",
                       "npm test *", "make *", "go test *", "cargo test *", "sleep *", "true",
                       "echo *")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSettings:
    allow_shell: Flag = False
    secret_files: Globs = SECRET_FILES
    max_result_bytes: PositiveCount = 16_384
    commands: CommandSettings = field(default_factory=CommandSettings)


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvSettings:
    allowlist: Strings = ("PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR", "VIRTUAL_ENV")
    passthrough: Strings = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetSettings:
    max_attempts: PositiveCount = 2
    wall_seconds: Seconds = 1800.0
    max_tool_calls: PositiveCount = 500
    max_output_bytes: PositiveCount = 100 * 1024 * 1024
    backoff_initial_seconds: Number = 1.0
    backoff_max_seconds: Number = 60.0
    max_cost_usd: Number = 0.0  # native agents' reported spend in USD; 0: no bound
    max_tokens: Count = 0  # native agents' reported input + output tokens; 0: no bound


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeSettings:
    strict: Flag = True
    min_confidence: Fraction = 0.7
    command: Text = ""
    timeout_seconds: Seconds = 120.0
    max_diff_lines: PositiveCount = 1000
    production_config: Globs = PRODUCTION_CONFIG


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSettings:
    default: Text = "noop"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaudeSettings:
    command: Text = "claude"  # a name on PATH or a path
    model: Text = ""  # --model when set (`--agent claude:MODEL` overrides it)
    max_turns: PositiveCount = 50
    extra_args: Strings = ()
    mcp: Flag = False
    prices: Prices = ()  # "MODEL=IN/OUT" in USD per million tokens, before the built-in table


@dataclass(frozen=True, slots=True, kw_only=True)
class CodexSettings:
    command: Text = "codex"
    model: Text = ""
    base_url: Text = ""  # an OpenAI-compatible Responses endpoint, written into CODEX_HOME
    env_key: Text = "OPENAI_API_KEY"
    extra_args: Strings = ()
    mcp: Flag = False
    prices: Prices = ()  # "MODEL=IN/OUT" in USD per million tokens, before the built-in table


@dataclass(frozen=True, slots=True, kw_only=True)
class CopilotSettings:
    command: Text = "copilot"
    model: Text = "gpt-5"  # its own-provider (BYOK) mode needs one; `--agent copilot:MODEL` wins
    max_turns: PositiveCount = 50
    extra_args: Strings = ()
    prices: Prices = ()  # "MODEL=IN/OUT" in USD per million tokens, before the built-in table


@dataclass(frozen=True, slots=True, kw_only=True)
class GeminiSettings:
    command: Text = "gemini"
    model: Text = ""  # -m when set (`--agent gemini:MODEL` overrides it)
    max_turns: PositiveCount = 50
    extra_args: Strings = ()
    prices: Prices = ()  # "MODEL=IN/OUT" in USD per million tokens, before the built-in table


@dataclass(frozen=True, slots=True, kw_only=True)
class OpencodeSettings:
    command: Text = "opencode"
    model: Text = ""  # PROVIDER/MODEL, anthropic or openai (empty: anthropic/claude-sonnet-4-5)
    max_turns: PositiveCount = 50
    extra_args: Strings = ()
    prices: Prices = ()  # "MODEL=IN/OUT" in USD per million tokens, before the built-in table


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandAgentSettings:
    """`[agents.command]`: a `command:` agent's model requests through the gateway."""

    gateway: ModelApi = ModelApi.NONE
    prices: Prices = ()  # "MODEL=IN/OUT" in USD per million tokens, before the built-in table


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentsSettings:
    """`[agents.claude]`, `[agents.codex]`, `[agents.copilot]`, `[agents.gemini]`,
    `[agents.opencode]`: how the native agent CLIs are launched; `[agents.command]`: whether a
    `command:` agent reaches its model through the gateway."""

    claude: ClaudeSettings = field(default_factory=ClaudeSettings)
    codex: CodexSettings = field(default_factory=CodexSettings)
    copilot: CopilotSettings = field(default_factory=CopilotSettings)
    gemini: GeminiSettings = field(default_factory=GeminiSettings)
    opencode: OpencodeSettings = field(default_factory=OpencodeSettings)
    command: CommandAgentSettings = field(default_factory=CommandAgentSettings)


@dataclass(frozen=True, slots=True, kw_only=True)
class GatewaySettings:
    """`[gateway]`: agentctl's model gateway, between an agent and its vendor's API."""

    # a model request its vendor leaves unanswered this long is given up on: TIMED_OUT on
    # record, not sent again (the vendor has the prompt), and the attempt an infrastructure one
    timeout_seconds: Seconds = 600.0
    # how long a model request waits for the agent's session-start hook (the canary) before it
    # is refused and the run ends FAILED_INFRASTRUCTURE "the agent's guard did not load"
    guard_hold_seconds: Seconds = GUARD_HOLD_SECONDS


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerSettings:
    lease_ttl_seconds: Seconds = 30.0
    poll_seconds: Seconds = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkSettings:
    allow: NetworkRules = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxSettings:
    mode: SandboxMode = SandboxMode.ON
    read_only: Strings = ()
    writable: Strings = ()
    max_processes: PositiveCount = MAX_PROCESSES
    max_memory_mb: PositiveCount = MAX_MEMORY_MB
    max_file_size_mb: PositiveCount = MAX_FILE_SIZE_MB
    network: NetworkSettings = field(default_factory=NetworkSettings)


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreSettings:
    url: DatabaseUrl = ""  # empty: the SQLite file in the home; AGENTCTL_DATABASE_URL wins
    artifacts: Text = ""  # empty: `artifacts/` in the home
    tree_cache_mb: Count = 10240  # checked-out bases kept in `trees/` of the home; 0: none
    artifact_outage_seconds: Seconds = 60.0  # an unwritable artifact store holds an attempt


@dataclass(frozen=True, slots=True, kw_only=True)
class PrSettings:
    """`[pr]`: where `pr create` opens the pull request, and what it asks for."""

    forge: Forge = Forge.AUTO
    api_url: Text = ""  # empty: api.github.com, or https://<host>/api/v4 for GitLab
    repository: Text = ""  # "owner/name"; empty: read from the remote's URL
    labels: Strings = ()
    reviewers: Strings = ()
    base: Text = ""  # empty: the task's base ref
    timeout_seconds: Seconds = 30.0  # each forge API call


DEFAULT_PR = PrSettings()


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetrySettings:
    """`[telemetry]`: where a run's OpenTelemetry trace goes, and how much of it."""

    otlp_endpoint: Text = ""  # empty: no trace; OTEL_EXPORTER_OTLP_ENDPOINT wins
    max_spans: PositiveCount = 20000  # a run's trace holds at most this many; the rest dropped
    timeout_seconds: Seconds = 5.0  # for the whole export; a collector that is down costs this


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Validated settings: every key present, the file's value or the default."""

    policy: PolicySettings = field(default_factory=PolicySettings)
    repositories: Aliases = field(default_factory=dict)
    boundary: BoundarySettings = field(default_factory=BoundarySettings)
    verification: VerificationSettings = field(default_factory=VerificationSettings)
    tools: ToolSettings = field(default_factory=ToolSettings)
    env: EnvSettings = field(default_factory=EnvSettings)
    budget: BudgetSettings = field(default_factory=BudgetSettings)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    agent: AgentSettings = field(default_factory=AgentSettings)
    agents: AgentsSettings = field(default_factory=AgentsSettings)
    gateway: GatewaySettings = field(default_factory=GatewaySettings)
    worker: WorkerSettings = field(default_factory=WorkerSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    pr: PrSettings = field(default_factory=PrSettings)
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)
    source: Path | None = field(default=None, metadata={"section": False})
