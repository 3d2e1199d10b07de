""".agentctl.toml: defaults, the documented example, errors naming file and key, discovery."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

import pytest

from agentctl import config
from agentctl.config import ConfigError, defaults, discover, load
from agentctl.config.schema import CheckSettings
from agentctl.domain.enums import AutonomyLevel

PROJECT = Path(__file__).resolve().parents[2]
PACKAGED_EXAMPLE = files("agentctl.resources").joinpath("agentctl.example.toml").read_text("utf-8")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user config dir and no AGENTCTL_CONFIG, so only the files a test writes count."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("AGENTCTL_CONFIG", raising=False)
    return tmp_path / "xdg" / "agentctl" / "config.toml"


# --- defaults and the example ---------------------------------------------------------------

def test_every_key_has_a_check_and_its_default_passes_it() -> None:
    """A schema type without a check, or a default its own check refuses, is a schema bug."""
    from agentctl.config import _checker, _fields, _is_section

    def walk(cls: type) -> None:
        for item, hint in _fields(cls):
            if _is_section(hint):
                walk(hint)  # type: ignore[arg-type]
                continue
            default = getattr(cls(), item.name)
            check = _checker(hint)
            if item.name not in ("commands", "repositories"):
                assert check(list(default) if isinstance(default, tuple) else
                             getattr(default, "value", default)) == default, item.name

    walk(config.Config)
    assert defaults().source is None


def test_some_defaults_the_design_relies_on() -> None:
    settings = defaults()
    assert settings.policy.max_autonomy is AutonomyLevel.SUPERVISED_PR
    assert settings.policy.default_autonomy is AutonomyLevel.DRY_RUN
    assert settings.judge.strict is True
    assert ".github/**" in settings.boundary.forbidden
    assert "git push *" in settings.tools.commands.deny
    assert settings.env.allowlist == ("PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR",
                                      "VIRTUAL_ENV")
    assert settings.repositories == {}


def test_the_packaged_example_is_the_one_in_the_repository() -> None:
    assert (PROJECT / ".agentctl.example.toml").read_text("utf-8") == PACKAGED_EXAMPLE


def test_the_example_documents_every_key_uncommented() -> None:
    data = tomllib.loads(PACKAGED_EXAMPLE)
    documented: dict[str, set[str]] = {}

    def walk(body: dict[str, object], prefix: str) -> None:
        for key, value in body.items():
            if isinstance(value, dict) and f"{prefix}{key}" in config.sections():
                documented.setdefault(f"{prefix}{key}", set())
                walk(value, f"{prefix}{key}.")
            else:
                documented.setdefault(prefix.rstrip("."), set()).add(key)

    walk({k: v for k, v in data.items() if k != "repositories"}, "")
    assert documented == {section: set(keys) for section, keys in config.sections().items()}
    assert "repositories" in data


def test_the_example_states_every_default_value(tmp_path: Path) -> None:
    example = load(write(tmp_path / ".agentctl.toml", PACKAGED_EXAMPLE))
    assert replace(example, source=None) == defaults()
    assert example.source == tmp_path / ".agentctl.toml"


def test_an_empty_file_means_the_defaults(tmp_path: Path) -> None:
    assert replace(load(write(tmp_path / "c.toml", "")), source=None) == defaults()


# --- values ---------------------------------------------------------------------------------

def test_file_values_override_defaults_and_are_normalised(tmp_path: Path) -> None:
    settings = load(write(tmp_path / "c.toml", """
[policy]
max_autonomy = "auto_pr"
repository_allowlist = ["/srv"]

[repositories]
payments-service = "~/src/payments-service"

[boundary]
forbidden = ["./secrets/**"]

[verification]
timeout_seconds = 30
commands = ["pytest -q", { command = "mvn verify", name = "maven", required = false }]

[tools.commands]
allow = ["true"]
"""))
    assert settings.policy.max_autonomy is AutonomyLevel.AUTO_PR
    assert settings.policy.repository_allowlist == ("/srv",)
    assert settings.repositories == {"payments-service": "~/src/payments-service"}
    assert settings.boundary.forbidden == ("secrets/**",)
    assert settings.verification.timeout_seconds == 30.0
    assert isinstance(settings.verification.timeout_seconds, float)
    assert settings.verification.commands == (
        CheckSettings(command="pytest -q"),
        CheckSettings(command="mvn verify", name="maven", required=False))
    assert settings.tools.commands.allow == ("true",)
    assert settings.tools.commands.deny == defaults().tools.commands.deny


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "names"), [
    ("[polcy]\nmax_autonomy = 'dry_run'\n", ["unknown section [polcy]", "policy"]),
    ("[policy]\nmax_autonomyy = 'dry_run'\n", ["unknown key 'policy.max_autonomyy'",
                                                "max_autonomy"]),
    ("[tools.commands]\nrefuse = []\n", ["unknown key 'tools.commands.refuse'", "deny"]),
    ("[tools.extra]\nx = 1\n", ["unknown key 'tools.extra'"]),
    ("max_autonomy = 'dry_run'\n", ["top-level key 'max_autonomy' must be a [section]"]),
])
def test_unknown_section_or_key_is_an_error_naming_file_and_key(
    tmp_path: Path, text: str, names: list[str],
) -> None:
    path = write(tmp_path / "proj" / ".agentctl.toml", text)
    with pytest.raises(ConfigError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    for name in names:
        assert name in message


@pytest.mark.parametrize(("section", "line", "key", "expected"), [
    ("policy", "max_autonomy = 'ultra'", "policy.max_autonomy",
     "one of dry_run, draft_pr, supervised_pr, auto_pr"),
    ("policy", "max_autonomy = 3", "policy.max_autonomy", "a string"),
    ("policy", "repository_allowlist = '/srv'", "policy.repository_allowlist", "a list of strings"),
    ("policy", "repository_allowlist = [1]", "policy.repository_allowlist", "a list of strings"),
    ("boundary", "forbidden = ['src/[abc']", "boundary.forbidden", "a list of valid globs"),
    ("boundary", "forbidden = ['!src']", "boundary.forbidden", "negation"),
    ("boundary", "allow_lockfile_changes = 'yes'", "boundary.allow_lockfile_changes",
     "true or false"),
    ("budget", "max_attempts = 0", "budget.max_attempts", "a positive integer"),
    ("budget", "max_attempts = -1", "budget.max_attempts", "a non-negative integer"),
    ("budget", "max_attempts = true", "budget.max_attempts", "a non-negative integer"),
    ("budget", "max_attempts = 1.5", "budget.max_attempts", "a non-negative integer"),
    ("budget", "wall_seconds = -5", "budget.wall_seconds", "a positive, finite number"),
    ("budget", "wall_seconds = '10'", "budget.wall_seconds", "a positive, finite number"),
    ("budget", "wall_seconds = inf", "budget.wall_seconds", "a positive, finite number"),
    ("budget", "wall_seconds = nan", "budget.wall_seconds", "a positive, finite number"),
    ("budget", "backoff_initial_seconds = -1", "budget.backoff_initial_seconds",
     "a non-negative number"),
    ("judge", "min_confidence = 1.5", "judge.min_confidence", "a number between 0 and 1"),
    ("judge", "command = ['x']", "judge.command", "a string"),
    ("verification", "commands = [42]", "verification.commands", "command strings or tables"),
    ("verification", "commands = ['  ']", "verification.commands", "command strings or tables"),
    ("verification", "commands = [{ command = 'x', retries = 2 }]", "verification.commands",
     "unknown: retries"),
    ("verification", "commands = 'pytest'", "verification.commands", "a list"),
    ("tools.commands", "deny = [\"git 'push\"]", "tools.commands.deny", "does not split"),
    ("tools.commands", "allow = ['']", "tools.commands.allow", "does not split"),
    ("tools", "max_result_bytes = 0", "tools.max_result_bytes", "a positive integer"),
    ("repositories", "payments = 1", "repositories", "a table of name"),
    ("env", "allowlist = 'PATH'", "env.allowlist", "a list of strings"),
    ("worker", "lease_ttl_seconds = 'soon'", "worker.lease_ttl_seconds", "a positive, finite"),
    ("worker", "lease_ttl_seconds = 0", "worker.lease_ttl_seconds", "a positive, finite"),
    ("verification", "commands = [{ command = 'x', required = 'no' }]", "verification.commands",
     "'required' is true or false"),
    ("verification", "commands = [{ command = 'x', timeout_seconds = 'x' }]",
     "verification.commands", "'timeout_seconds' is a positive, finite number"),
    ("verification", "commands = [{ command = 'x', timeout_seconds = 0 }]",
     "verification.commands", "'timeout_seconds' is a positive, finite number"),
    ("verification", "timeout_seconds = nan", "verification.timeout_seconds", "finite"),
    ("agents.claude", "prices = ['claude-sonnet-4=3']", "agents.claude.prices", "MODEL=IN/OUT"),
    ("agents.codex", "prices = ['gpt-5=cheap/10']", "agents.codex.prices", "MODEL=IN/OUT"),
    ("gateway", "timeout_seconds = 0", "gateway.timeout_seconds", "a positive, finite number"),
    ("gateway", "timeout_seconds = -1", "gateway.timeout_seconds", "a positive, finite number"),
    ("gateway", "timeout_seconds = '1m'", "gateway.timeout_seconds", "a positive, finite"),
    ("gateway", "guard_hold_seconds = 0", "gateway.guard_hold_seconds", "a positive, finite"),
    ("gateway", "guard_hold_seconds = inf", "gateway.guard_hold_seconds", "finite"),
])
def test_wrongly_typed_value_is_an_error_naming_file_key_and_expectation(
    tmp_path: Path, section: str, line: str, key: str, expected: str,
) -> None:
    path = write(tmp_path / ".agentctl.toml", f"[{section}]\n{line}\n")
    with pytest.raises(ConfigError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: '{key}' must be ")
    assert expected in message
    assert "\n" not in message


def test_section_given_as_a_value_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / ".agentctl.toml", "policy = 'strict'\n")
    with pytest.raises(ConfigError, match=r"top-level key 'policy' must be a \[section\]"):
        load(path)


@pytest.mark.parametrize(("text", "line"), [
    ("[policy]\nmax_autonomy = \n", 2),
    ("[policy]\n\n\nmax_autonomy = 'dry_run'\nmax_autonomy = 'auto_pr'\n", 5),
    ("[policy\n", 1),
    ("[budget]\nmax_attempts = 2\n[budget]\n", 3),
])
def test_malformed_toml_is_an_error_naming_file_and_line(tmp_path: Path, text: str,
                                                          line: int) -> None:
    path = write(tmp_path / ".agentctl.toml", text)
    with pytest.raises(ConfigError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: invalid TOML: ")
    assert f"line {line}" in message


def test_unreadable_config_is_an_error_naming_file(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder.toml"
    folder.mkdir()
    with pytest.raises(ConfigError, match=f"^{folder}: cannot read config"):
        load(folder)


def test_config_that_is_not_utf8_is_an_error_naming_file(tmp_path: Path) -> None:
    path = tmp_path / ".agentctl.toml"
    path.write_bytes(b"[policy]\nmax_autonomy = '\xff\xfe'\n")
    with pytest.raises(ConfigError, match=str(path)):
        load(path)


def test_config_error_is_bad_input_exit_code_2() -> None:
    assert ConfigError("x").exit_code == 2


# --- discovery ------------------------------------------------------------------------------

def test_explicit_file_wins(tmp_path: Path, no_user_config: Path) -> None:
    write(tmp_path / "proj" / ".agentctl.toml", "[policy]\nmax_autonomy = 'dry_run'\n")
    chosen = write(tmp_path / "chosen.toml", "[policy]\nmax_autonomy = 'auto_pr'\n")
    settings = discover(str(chosen), tmp_path / "proj")
    assert settings.source == chosen
    assert settings.policy.max_autonomy is AutonomyLevel.AUTO_PR


def test_agentctl_config_variable_chooses_the_file(tmp_path: Path, no_user_config: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = write(tmp_path / "env.toml", "[policy]\nmax_autonomy = 'draft_pr'\n")
    monkeypatch.setenv("AGENTCTL_CONFIG", str(chosen))
    assert discover(None, tmp_path).source == chosen


def test_explicit_file_that_does_not_exist_is_an_error(tmp_path: Path,
                                                       no_user_config: Path) -> None:
    with pytest.raises(ConfigError, match=f"{tmp_path / 'missing.toml'}: config file not found"):
        discover(str(tmp_path / "missing.toml"), tmp_path)


def test_nearest_config_upwards_from_the_working_directory(tmp_path: Path,
                                                            no_user_config: Path) -> None:
    outer = write(tmp_path / "ws" / ".agentctl.toml", "[policy]\nmax_autonomy = 'auto_pr'\n")
    inner = write(tmp_path / "ws" / "proj" / ".agentctl.toml",
                  "[policy]\nmax_autonomy = 'dry_run'\n")
    deep = tmp_path / "ws" / "proj" / "src" / "pkg"
    deep.mkdir(parents=True)
    assert discover(None, deep).source == inner
    assert discover(None, tmp_path / "ws").source == outer


def test_user_config_when_no_project_config(tmp_path: Path, no_user_config: Path) -> None:
    (tmp_path / "proj").mkdir()
    assert discover(None, tmp_path / "proj").source is None
    write(no_user_config, "[agent]\ndefault = 'noop'\n")
    assert config.user_config_path() == no_user_config
    assert discover(None, tmp_path / "proj").source == no_user_config


def test_malformed_config_found_upwards_is_an_error_naming_it(tmp_path: Path,
                                                              no_user_config: Path) -> None:
    bad = write(tmp_path / "ws" / ".agentctl.toml", "[policy]\nmax_autonomy = 'ultra'\n")
    (tmp_path / "ws" / "proj").mkdir()
    with pytest.raises(ConfigError, match=f"^{bad}: 'policy.max_autonomy'"):
        discover(None, tmp_path / "ws" / "proj")
