"""`pr create` opens the PR on a (fake) GitHub or GitLab, updates or adopts it, survives forge
errors; `pr status` follows it; `run attest` signs what the run proved.

The forges are fakes on 127.0.0.1 (tests/forge_fake.py): a boundary we do not own, so the tests
assert the exact requests. Pushes go to real local bare repositories; the attestation is checked
with securesystemslib, not with agentctl's own code.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git
from tests.e2e.people_support import cli_result, submit_and_run
from tests.e2e.runs_support import CALC_FILES, UNITTEST, Bench
from tests.forge_fake import FakeForge

TOKEN = "ghp_" + "b" * 36  # what the forge sees; never in a record, a body or an output
LAB_TOKEN = "glpat-" + "c" * 20
GH_ENV = {"GITHUB_TOKEN": TOKEN}
LAB_ENV = {"GITLAB_TOKEN": LAB_TOKEN}
# The base is broken (add subtracts); the plan fixes it: one FAIL_TO_PASS, one PASS_TO_PASS.
FILES = {**CALC_FILES, "calc/__init__.py": "def add(a, b):\n    return a - b\n"}
PLAN = [{"tool": "fs.replace", "path": "calc/__init__.py", "old": "return a - b",
         "new": "return a + b"}]


class Forges:
    """The forges and the runs whose PRs they get. `bench` is the state home of the latest
    `approved_run`: a test or fixture reads its run there, or keeps it for later."""

    def __init__(self, root: Path, run_agentctl: Callable[..., Any],
                 repo_maker: Callable[..., Path], github: FakeForge, gitlab: FakeForge) -> None:
        self.root, self.repo_maker, self.run_agentctl = root, repo_maker, run_agentctl
        self.bench = Bench(root, run_agentctl)
        self.plan = self.bench.plan("fix.toml", *PLAN)
        self.github, self.gitlab = github, gitlab
        self.template: tuple[Bench, Path, dict[str, Any]] | None = None
        # the sandbox is not what these tests are about: its runs are the PRs' material
        self.gh_config = self.bench.config(
            '[sandbox]\nmode = "off"\n[verification]\nbaseline = "always"\n'
            '[pr]\nforge = "github"\n'
            f'api_url = "{github.url}"\nrepository = "octo/calc"\nlabels = ["agentctl"]\n'
            'reviewers = ["alice"]\ntimeout_seconds = 1\n', name="github.toml")
        self.lab_config = self.bench.config(
            '[sandbox]\nmode = "off"\n[verification]\nbaseline = "always"\n'
            '[pr]\nforge = "gitlab"\n'
            f'api_url = "{gitlab.url}/api/v4"\nrepository = "octo/calc"\nlabels = ["agentctl"]\n',
            name="gitlab.toml")

    def approved_run(self, name: str, autonomy: str = "supervised_pr",
                     config: Path | None = None) -> tuple[Path, Path, dict[str, Any]]:
        """A run ready for `pr create`, in a state home of its own (now `bench`), with a new
        bare remote and forges holding no PR. The usual one (supervised, GitHub) runs once:
        each caller gets a copy of its home, and its repository without the branches an
        earlier `pr create` left there (the run, and so the branch name, is the same)."""
        remote = self.root / "remotes" / f"{name}.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        self.github.reset()
        self.gitlab.reset()
        if autonomy != "supervised_pr" or config is not None:
            self.bench = Bench(self.root / "homes" / name, self.run_agentctl)
            repo, run = self._run(name, autonomy, config)
            return repo, remote, run
        if self.template is None:
            self.bench = Bench(self.root / "homes" / "template", self.run_agentctl)
            self.template = (self.bench, *self._run("template", autonomy, None))
        template, repo, run = self.template
        for ref in git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/").split():
            if ref != "refs/heads/main":
                git(repo, "update-ref", "-d", ref)
        self.bench = Bench(self.root / "homes" / name, self.run_agentctl)
        shutil.copytree(template.home, self.bench.home, symlinks=True)
        return repo, remote, run

    def _run(self, name: str, autonomy: str,
             config: Path | None) -> tuple[Path, dict[str, Any]]:
        repo = self.repo_maker(self.root / "repos" / name, FILES)
        run = submit_and_run(self.bench, repo, "--autonomy", autonomy, "--verify", UNITTEST,
                             agent=f"script:{self.plan}", instruction="make add add",
                             config=config or self.gh_config)
        if autonomy == "supervised_pr":
            self.bench.cli("verdict", "approve", run["runId"], "--by", "alice", "--reason",
                           "read the diff")
        return repo, run

    def pr(self, run_id: str, remote: Path, *flags: str, lab: bool = False) -> dict[str, Any]:
        config = self.lab_config if lab else self.gh_config
        result = cli_result(self.bench, "--config", str(config), "pr", "create", run_id,
                            "--remote", str(remote), *flags, "--json",
                            env=LAB_ENV if lab else GH_ENV)
        if result["exitCode"] == 0:
            result["json"] = json.loads(result["stdout"])
        return result

    def status(self, run_id: str, lab: bool = False) -> dict[str, Any]:
        config = self.lab_config if lab else self.gh_config
        return cli_result(self.bench, "--config", str(config), "pr", "status", run_id, "--json",
                          env=LAB_ENV if lab else GH_ENV)

    def events(self, run_id: str) -> list[str]:
        return [e["type"] for e in self.bench.events(run_id)]


def branch_of(run_id: str) -> str:
    return f"agentctl/refactor-{run_id[-8:].lower()}"


@pytest.fixture(scope="module")
def forges(tmp_path_factory: pytest.TempPathFactory, repo_maker, run_agentctl
           ) -> Iterator[Forges]:
    github, gitlab = FakeForge("github").start(), FakeForge("gitlab").start()
    try:
        yield Forges(tmp_path_factory.mktemp("forges"), run_agentctl, repo_maker, github, gitlab)
    finally:
        github.stop()
        gitlab.stop()


@pytest.fixture(scope="module")
def opened(forges: Forges) -> dict[str, Any]:
    """A PR opened on GitHub, then `pr create` again, then merged and read back."""
    repo, remote, run = forges.approved_run("opened")
    run_id = run["runId"]
    start = len(forges.github.requests)
    first = forges.pr(run_id, remote)
    first_requests = forges.github.requests[start:]
    second = forges.pr(run_id, remote)
    second_requests = forges.github.requests[start + len(first_requests):]
    forges.github.set_state(first["json"]["number"], "merged")
    status = forges.status(run_id)
    kept = forges.root / "repos" / "opened"  # with its branch, whatever runs after
    shutil.copytree(repo, kept, symlinks=True)
    return {"repo": kept, "remote": remote, "run": run, "first": first, "second": second,
            "bench": forges.bench,
            "firstRequests": first_requests, "secondRequests": second_requests,
            "status": status, "events": forges.events(run_id),
            "show": forges.bench.json("run", "show", run_id),
            "body": forges.bench.artifact_text(second["json"]["bodyArtifact"]),
            "eventsRaw": json.dumps(forges.bench.events(run_id))}


def test_pr_create_opens_the_pr_on_github_with_title_head_base_body_and_draft(
        opened: dict[str, Any]) -> None:
    assert opened["first"]["exitCode"] == 0, opened["first"]["stderr"]
    posts = [r for r in opened["firstRequests"]
             if r.method == "POST" and r.path == "/repos/octo/calc/pulls"]
    assert len(posts) == 1
    sent = posts[0].json
    assert set(sent) == {"title", "head", "base", "body", "draft"}
    assert sent["head"] == branch_of(opened["run"]["runId"])
    assert sent["base"] == "main"
    assert sent["title"] == "make add add"
    assert sent["draft"] is False
    assert sent["body"] == opened["body"] or "### AI disclosure" in sent["body"]


def test_every_forge_request_carries_the_token_as_a_bearer_header(opened: dict[str, Any]) -> None:
    for request in opened["firstRequests"] + opened["secondRequests"]:
        assert request.headers["Authorization"] == f"Bearer {TOKEN}"
        assert request.headers["Accept"] == "application/vnd.github+json"


def test_pr_create_asks_for_the_configured_labels_and_reviewers(opened: dict[str, Any]) -> None:
    number = opened["first"]["json"]["number"]
    labels = [r for r in opened["firstRequests"]
              if r.path == f"/repos/octo/calc/issues/{number}/labels"]
    reviewers = [r for r in opened["firstRequests"]
                 if r.path == f"/repos/octo/calc/pulls/{number}/requested_reviewers"]
    assert [r.json for r in labels] == [{"labels": ["agentctl"]}]
    assert [r.json for r in reviewers] == [{"reviewers": ["alice"]}]


def test_the_pr_record_holds_forge_number_url_head_base_and_state(opened: dict[str, Any]) -> None:
    record = opened["first"]["json"]
    assert record["forge"] == "github"
    assert record["number"] == 1
    assert record["url"] == "https://github.example/octo/calc/pull/1"
    assert record["branch"] == branch_of(opened["run"]["runId"])
    assert record["base"] == "main"
    assert record["state"] == "OPEN"


def test_the_branch_is_pushed_before_the_pr_is_opened(opened: dict[str, Any], run_git) -> None:
    branch = opened["first"]["json"]["branch"]
    assert run_git(opened["remote"], "rev-parse", f"refs/heads/{branch}") == \
        opened["first"]["json"]["commitSha"]


def test_a_second_pr_create_updates_the_pr_instead_of_opening_another(
        opened: dict[str, Any]) -> None:
    assert opened["second"]["exitCode"] == 0, opened["second"]["stderr"]
    methods = [(r.method, r.path) for r in opened["secondRequests"]]
    assert ("POST", "/repos/octo/calc/pulls") not in methods
    assert ("PATCH", "/repos/octo/calc/pulls/1") in methods
    assert opened["second"]["json"]["prId"] == opened["first"]["json"]["prId"]
    assert opened["second"]["json"]["commitSha"] == opened["first"]["json"]["commitSha"]
    assert len(opened["show"]["pullRequests"]) == 1


def test_pr_create_records_requested_created_then_updated(opened: dict[str, Any]) -> None:
    pr_events = [t for t in opened["events"] if t.startswith("Pr")]
    assert pr_events == ["PrRequested", "PrCreated", "PrRequested", "PrUpdated",
                         "PrStateChanged"]


def test_pr_status_reads_a_merge_back_and_records_it(opened: dict[str, Any]) -> None:
    assert opened["status"]["exitCode"] == 0, opened["status"]["stderr"]
    assert json.loads(opened["status"]["stdout"])["state"] == "MERGED"
    assert opened["show"]["pullRequests"][0]["state"] == "MERGED"


def test_the_body_holds_the_tests_by_class_and_the_ai_disclosure(opened: dict[str, Any]) -> None:
    body = opened["body"]
    assert "### Tests against the base" in body
    fixed = next(line for line in body.splitlines() if "1 FAIL_TO_PASS" in line)
    assert fixed.startswith("- **1 FAIL_TO_PASS**: `") and "test_adds_two_numbers" in fixed
    assert "### AI disclosure" in body
    assert "- model: unavailable" in body
    assert "- agent CLI version: unavailable" in body
    assert f"agentctl-run: {opened['run']['runId']}" in body
    assert "Generated-by: script:" in body
    assert "by step " in body and "`fs.replace`" in body


def test_the_body_counts_each_checks_tests_and_names_no_local_path(
        forges: Forges, opened: dict[str, Any]) -> None:
    posts = [r for r in opened["firstRequests"]
             if r.method == "POST" and r.path == "/repos/octo/calc/pulls"]
    for body in (opened["body"], posts[0].json["body"]):
        assert f"- `{UNITTEST}`: PASSED, 2 passed, 0 failed, 0 skipped" in body
        assert str(forges.root) not in body and "/tmp/" not in body
        assert "Generated-by: script:fix.toml (sha256:" in body


def test_the_token_is_never_recorded_or_shown(opened: dict[str, Any]) -> None:
    for text in (opened["body"], opened["eventsRaw"], opened["first"]["stdout"],
                 opened["first"]["stderr"], opened["second"]["stdout"],
                 json.dumps(opened["show"])):
        assert TOKEN not in text


# --- adoption, failures, retries ------------------------------------------------------------

@pytest.fixture(scope="module")
def adopted(forges: Forges) -> dict[str, Any]:
    _, remote, run = forges.approved_run("adopt")
    number = forges.github.add_open(branch_of(run["runId"]))
    start = len(forges.github.requests)
    result = forges.pr(run["runId"], remote)
    return {"number": number, "result": result, "requests": forges.github.requests[start:]}


def test_an_open_pr_of_the_branch_is_adopted_not_duplicated(adopted: dict[str, Any]) -> None:
    assert adopted["result"]["exitCode"] == 0, adopted["result"]["stderr"]
    methods = [(r.method, r.path) for r in adopted["requests"]]
    assert ("POST", "/repos/octo/calc/pulls") not in methods
    lookup = [r for r in adopted["requests"] if r.method == "GET"]
    assert lookup[0].query["state"] == "open"
    assert lookup[0].query["head"].endswith(":" + adopted["result"]["json"]["branch"])
    assert ("PATCH", f"/repos/octo/calc/pulls/{adopted['number']}") in methods
    assert adopted["result"]["json"]["number"] == adopted["number"]


@pytest.fixture(scope="module")
def refused(forges: Forges) -> dict[str, Any]:
    """A 422 from the forge, then a retry."""
    _, remote, run = forges.approved_run("refused")
    forges.github.fail_next("POST", "/repos/octo/calc/pulls", 422, {
        "message": "Validation Failed", "errors": [{"message": "No commits between main and x"}]})
    failed = forges.pr(run["runId"], remote)
    after_failure = forges.bench.json("run", "show", run["runId"])
    events_after_failure = forges.events(run["runId"])
    retry = forges.pr(run["runId"], remote)
    return {"failed": failed, "afterFailure": after_failure, "eventsAfterFailure":
            events_after_failure, "retry": retry, "events": forges.events(run["runId"])}


def test_a_forge_422_is_one_line_naming_the_forges_message(refused: dict[str, Any]) -> None:
    failed = refused["failed"]
    assert failed["exitCode"] == 1
    lines = failed["stderr"].strip().splitlines()
    assert len(lines) == 1
    assert "422" in lines[0] and "No commits between main and x" in lines[0]
    assert "github" in lines[0]


def test_a_forge_error_records_pr_requested_and_failed_without_created(
        refused: dict[str, Any]) -> None:
    pr_events = [t for t in refused["eventsAfterFailure"] if t.startswith("Pr")]
    assert pr_events == ["PrRequested", "PrFailed"]
    assert refused["afterFailure"]["pullRequests"] == []


def test_retrying_after_a_forge_error_opens_the_pr(refused: dict[str, Any]) -> None:
    assert refused["retry"]["exitCode"] == 0, refused["retry"]["stderr"]
    assert refused["retry"]["json"]["state"] == "OPEN"
    assert [t for t in refused["events"] if t.startswith("Pr")][-1] == "PrCreated"


@pytest.fixture(scope="module")
def timed_out(forges: Forges) -> dict[str, Any]:
    _, remote, run = forges.approved_run("slow")
    forges.github.delay_next("GET", "/repos/octo/calc/pulls", 3.0)
    failed = forges.pr(run["runId"], remote)
    retry = forges.pr(run["runId"], remote)
    return {"failed": failed, "retry": retry, "events": forges.events(run["runId"])}


def test_a_forge_timeout_is_recorded_and_retrying_is_safe(timed_out: dict[str, Any]) -> None:
    failed = timed_out["failed"]
    assert failed["exitCode"] == 1
    assert "timed out" in failed["stderr"] and len(failed["stderr"].strip().splitlines()) == 1
    assert timed_out["retry"]["exitCode"] == 0, timed_out["retry"]["stderr"]
    assert [t for t in timed_out["events"] if t.startswith("Pr")] == [
        "PrRequested", "PrFailed", "PrRequested", "PrCreated"]


def test_no_token_is_one_clear_line_and_changes_nothing(forges: Forges) -> None:
    _, remote, run = forges.approved_run("notoken")
    result = cli_result(forges.bench, "--config", str(forges.gh_config), "pr", "create",
                        run["runId"], "--remote", str(remote), env={"GITHUB_TOKEN": "",
                                                                    "GH_TOKEN": "", "PATH": "/usr/bin:/bin"})
    assert result["exitCode"] == 2
    assert "GITHUB_TOKEN" in result["stderr"]
    assert not [t for t in forges.events(run["runId"]) if t.startswith("Pr")]


# --- GitLab -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def merge_request(forges: Forges) -> dict[str, Any]:
    _, remote, run = forges.approved_run("lab", autonomy="draft_pr", config=forges.lab_config)
    start = len(forges.gitlab.requests)
    first = forges.pr(run["runId"], remote, lab=True)
    second = forges.pr(run["runId"], remote, lab=True)
    forges.gitlab.set_state(1, "closed")
    status = forges.status(run["runId"], lab=True)
    return {"run": run, "first": first, "second": second, "status": status,
            "requests": forges.gitlab.requests[start:]}


def test_pr_create_opens_a_draft_merge_request_on_gitlab(merge_request: dict[str, Any]) -> None:
    assert merge_request["first"]["exitCode"] == 0, merge_request["first"]["stderr"]
    posts = [r for r in merge_request["requests"] if r.method == "POST"]
    assert posts[0].path == "/api/v4/projects/octo%2Fcalc/merge_requests"
    sent = posts[0].json
    assert sent["source_branch"] == branch_of(merge_request["run"]["runId"])
    assert sent["target_branch"] == "main"
    assert sent["title"] == "Draft: make add add"
    assert sent["labels"] == "agentctl"
    assert "### AI disclosure" in sent["description"]
    assert all(r.headers.get("Private-Token") == LAB_TOKEN for r in merge_request["requests"])
    assert merge_request["first"]["json"]["draft"] is True
    assert merge_request["first"]["json"]["forge"] == "gitlab"


def test_a_second_gitlab_pr_create_updates_the_merge_request(
        merge_request: dict[str, Any]) -> None:
    puts = [r for r in merge_request["requests"] if r.method == "PUT"]
    assert [r.path for r in puts] == ["/api/v4/projects/octo%2Fcalc/merge_requests/1"]
    assert len([r for r in merge_request["requests"] if r.method == "POST"]) == 1


def test_pr_status_reads_a_closed_merge_request_back(merge_request: dict[str, Any]) -> None:
    assert json.loads(merge_request["status"]["stdout"])["state"] == "CLOSED"


@pytest.fixture(scope="module")
def redirected(forges: Forges) -> dict[str, Any]:
    """The forge answers the first call with a 302 to another host, which would take the token."""
    elsewhere = FakeForge("github").start()
    try:
        _, remote, run = forges.approved_run("redirected")
        target = elsewhere.url.replace("127.0.0.1", "localhost") + "/repos/octo/calc/pulls"
        forges.github.redirect_next("GET", "/repos/octo/calc/pulls", target)
        failed = forges.pr(run["runId"], remote)
        return {"failed": failed, "elsewhere": list(elsewhere.requests),
                "events": forges.events(run["runId"])}
    finally:
        elsewhere.stop()


def test_a_redirect_to_another_host_never_receives_the_token(redirected: dict[str, Any]) -> None:
    assert not [r for r in redirected["elsewhere"] if "Authorization" in r.headers]
    assert redirected["elsewhere"] == []  # not followed at all
    failed = redirected["failed"]
    assert failed["exitCode"] == 1
    lines = failed["stderr"].strip().splitlines()
    assert len(lines) == 1 and "302" in lines[0] and "not followed" in lines[0], lines
    assert TOKEN not in failed["stderr"]
    assert [t for t in redirected["events"] if t.startswith("Pr")] == ["PrRequested", "PrFailed"]


HUGE = b"[" + b",".join([b'{"number": 1, "state": "open"}'] * 40_000) + b"]"  # 1.2 MB
DEEP = b"[" * 50_000 + b"]" * 50_000  # 100 kB, fifty thousand levels


@pytest.mark.parametrize(("name", "answer", "words"), [
    ("huge", HUGE, "more than 1048576 bytes"),
    ("deep", DEEP, "nested deeper than"),
])
def test_a_huge_or_deep_answer_is_refused_in_one_line_and_recorded(
        forges: Forges, name: str, answer: bytes, words: str) -> None:
    _, remote, run = forges.approved_run(name)
    forges.github.answer_next("GET", "/repos/octo/calc/pulls", answer)
    failed = forges.pr(run["runId"], remote)
    assert failed["exitCode"] == 1, failed
    lines = failed["stderr"].strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in failed["stderr"], lines
    assert [t for t in forges.events(run["runId"]) if t.startswith("Pr")] == [
        "PrRequested", "PrFailed"]
    failure = [e for e in forges.bench.events(run["runId"]) if e["type"] == "PrFailed"][0]
    assert words in failure["payload"]["error"]


def test_a_forge_answer_that_cannot_be_recorded_leaves_pr_failed(forges: Forges) -> None:
    """The PR record is written after the forge answered; a failure there is a failure after
    PrRequested like any other (here a URL holding a lone surrogate, which SQLite cannot
    store)."""
    _, remote, run = forges.approved_run("unrecordable")
    number = forges.github.add_open("someone-else")  # labels and reviewers find this one
    forges.github.answer_next("POST", "/repos/octo/calc/pulls", json.dumps(
        {"number": number, "state": "open", "html_url": "https://github.example/\ud800"},
        ensure_ascii=True).encode(), status=201)
    failed = forges.pr(run["runId"], remote)
    assert failed["exitCode"] != 0, failed
    assert len(failed["stderr"].strip().splitlines()) == 1, failed["stderr"]
    assert [t for t in forges.events(run["runId"]) if t.startswith("Pr")] == [
        "PrRequested", "PrFailed"]
    failure = [e for e in forges.bench.events(run["runId"]) if e["type"] == "PrFailed"][0]
    assert "surrogates not allowed" in failure["payload"]["error"]
    assert forges.bench.json("run", "show", run["runId"])["pullRequests"] == []


# --- attestation --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def attested(forges: Forges, opened: dict[str, Any]) -> dict[str, Any]:
    run_id, bench = opened["run"]["runId"], opened["bench"]
    bundle = forges.root / "bundle.jsonl"
    bench.cli("run", "attest", run_id, "--output", str(bundle))
    key = bench.json("attest", "pubkey")
    pem = forges.root / "attest.pub"
    pem.write_text(bench.cli("attest", "pubkey").stdout)
    patch = forges.root / "run.diff"
    artifacts = bench.artifacts(run_id)
    uri = next(a["uri"] for a in artifacts if a["name"] == "patch.diff")
    patch.write_bytes((bench.home / uri).read_bytes())
    return {"bundle": bundle, "key": key, "pem": pem, "patch": patch, "run": opened["run"],
            "branch": opened["first"]["json"]["branch"], "repo": opened["repo"],
            "bench": bench}


def _securesystemslib_verify(line: str, key: dict[str, Any]) -> dict[str, Any]:
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import SSlibKey

    public = SSlibKey(key["keyid"], "ed25519", "ed25519", {"public": key["public"]})
    envelope = Envelope.from_dict(json.loads(line))
    envelope.verify([public], 1)
    return dict(json.loads(envelope.payload))


def test_every_envelope_verifies_with_securesystemslib(attested: dict[str, Any]) -> None:
    lines = attested["bundle"].read_text().splitlines()
    statements = [_securesystemslib_verify(line, attested["key"]) for line in lines]
    types = [s["predicateType"] for s in statements]
    assert types[0] == "https://slsa.dev/provenance/v1"
    assert "https://in-toto.io/attestation/test-result/v0.1" in types
    assert types[-1] == "https://agentctl.dev/attestation/run/v1"
    for line in lines:
        assert json.loads(line)["payloadType"] == "application/vnd.in-toto+json"
    for statement in statements:
        assert statement["_type"] == "https://in-toto.io/Statement/v1"


def test_every_payload_is_the_rfc_8785_form_of_its_statement(attested: dict[str, Any]) -> None:
    """What a verifier that re-serializes a Statement gets back, with the reference library."""
    import base64

    import rfc8785

    for line in attested["bundle"].read_text().splitlines():
        payload = base64.b64decode(json.loads(line)["payload"])
        assert rfc8785.dumps(json.loads(payload)) == payload


def test_the_subjects_are_the_patch_and_its_tree(attested: dict[str, Any], run_git) -> None:
    import hashlib

    line = attested["bundle"].read_text().splitlines()[0]
    statement = _securesystemslib_verify(line, attested["key"])
    digests = {k: v for s in statement["subject"] for k, v in s["digest"].items()}
    assert digests["sha256"] == hashlib.sha256(attested["patch"].read_bytes()).hexdigest()
    assert digests["gitTree"] == run_git(attested["repo"], "rev-parse",
                                         f"{attested['branch']}^{{tree}}")


def test_the_test_result_lists_passed_and_failed_tests(attested: dict[str, Any]) -> None:
    lines = attested["bundle"].read_text().splitlines()
    results = [s["predicate"] for s in (_securesystemslib_verify(x, attested["key"])
                                        for x in lines)
               if s["predicateType"].endswith("test-result/v0.1")]
    assert results[0]["result"] == "PASSED"
    assert results[0]["passedTests"] == ["test_calc.AddTest.test_adding_zero_changes_nothing",
                                         "test_calc.AddTest.test_adds_two_numbers"]
    assert results[0]["warnedTests"] == results[0]["failedTests"] == []


def test_every_test_result_statement_meets_the_published_in_toto_schema(
        attested: dict[str, Any]) -> None:
    """The Statement and the test-result v0.1 predicate as in-toto's own bindings define them
    (no field they do not name, each of its type), with `result` one of the spec's three."""
    from google.protobuf import json_format
    from in_toto_attestation.predicates.test_result.v0 import test_result_pb2
    from in_toto_attestation.v1 import statement_pb2
    from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor
    from in_toto_attestation.v1.statement import Statement

    statements = [_securesystemslib_verify(line, attested["key"])
                  for line in attested["bundle"].read_text().splitlines()]
    results = [s for s in statements if s["predicateType"] ==
               "https://in-toto.io/attestation/test-result/v0.1"]
    assert results
    for statement in results:
        Statement.copy_from_pb(json_format.ParseDict(
            statement, statement_pb2.Statement())).validate()  # type: ignore[attr-defined]
        predicate = json_format.ParseDict(statement["predicate"],
                                          test_result_pb2.TestResult())  # type: ignore[attr-defined]
        assert predicate.result in ("PASSED", "WARNED", "FAILED")
        assert predicate.configuration
        for descriptor in predicate.configuration:
            ResourceDescriptor.copy_from_pb(descriptor).validate()


def test_the_run_predicate_holds_verdict_approvals_and_audit_head(
        attested: dict[str, Any]) -> None:
    last = attested["bundle"].read_text().splitlines()[-1]
    predicate = _securesystemslib_verify(last, attested["key"])["predicate"]
    assert predicate["runId"] == attested["run"]["runId"]
    assert predicate["verdict"]["reasons"]
    assert predicate["approvals"][0]["by"] == "alice"
    assert predicate["audit"]["head"]["seq"] > 0
    assert predicate["audit"]["checkpoint"]["hash"]


def test_a_changed_payload_byte_fails_verification(attested: dict[str, Any], forges: Forges
                                                   ) -> None:
    from securesystemslib.dsse import Envelope
    from securesystemslib.exceptions import VerificationError
    from securesystemslib.signer import SSlibKey

    line = json.loads(attested["bundle"].read_text().splitlines()[0])
    payload = bytearray(base64.b64decode(line["payload"]))
    payload[10] ^= 0x01
    line["payload"] = base64.b64encode(bytes(payload)).decode()
    key = attested["key"]
    public = SSlibKey(key["keyid"], "ed25519", "ed25519", {"public": key["public"]})
    with pytest.raises(VerificationError):
        Envelope.from_dict(json.loads(json.dumps(line))).verify([public], 1)  # it pops keys
    tampered = forges.root / "tampered.jsonl"
    tampered.write_text(json.dumps(line) + "\n")
    result = cli_result(attested["bench"], "attest", "verify", str(tampered), "--key",
                        str(attested["pem"]))
    assert result["exitCode"] == 3
    assert "envelope 1: no valid signature" in result["stderr"]


def test_attest_verify_checks_subjects_against_a_patch_and_a_commit(
        attested: dict[str, Any], forges: Forges) -> None:
    ok = cli_result(attested["bench"], "attest", "verify", str(attested["bundle"]), "--key",
                    str(attested["pem"]), "--patch", str(attested["patch"]), "--commit",
                    attested["branch"], "--repo", str(attested["repo"]))
    assert ok["exitCode"] == 0, ok["stderr"]
    other = forges.root / "other.diff"
    other.write_text("not the patch\n")
    wrong = cli_result(attested["bench"], "attest", "verify", str(attested["bundle"]), "--patch",
                       str(other))
    assert wrong["exitCode"] == 3 and "not about this patch" in wrong["stderr"]


def test_pr_create_attest_attaches_the_bundle(forges: Forges) -> None:
    _, remote, run = forges.approved_run("attach")
    result = forges.pr(run["runId"], remote, "--attest")
    assert result["exitCode"] == 0, result["stderr"]
    number = result["json"]["number"]
    pr = forges.github.prs[number]
    assert "application/vnd.in-toto+json" in pr["body"] or forges.github.comments.get(number)


def test_a_task_whose_pr_merged_reads_so(opened: dict[str, Any], forges: Forges) -> None:
    task = opened["bench"].json("task", "show", opened["run"]["taskId"])
    assert task["pullRequest"]["state"] == "MERGED"
    assert task["runs"][-1]["prState"] == "MERGED"
    assert "PR MERGED" in opened["bench"].cli("task", "show", opened["run"]["taskId"]).stdout


def test_verdict_explain_shows_the_pr_record(opened: dict[str, Any], forges: Forges) -> None:
    explained = opened["bench"].explain(opened["run"]["runId"])
    assert explained["pullRequests"][0]["number"] == 1
    assert explained["pullRequests"][0]["forge"] == "github"


def test_pr_status_of_a_run_without_a_pr_is_one_line_exit_2(forges: Forges) -> None:
    _, _, run = forges.approved_run("nopr")
    result = forges.status(run["runId"])
    assert result["exitCode"] == 2
    assert result["stderr"].strip().splitlines() == [
        f"agentctl: error: run {run['runId']} has no pull request; open one with "
        f"`agentctl pr create {run['runId']}`"]


def test_attest_verify_of_a_missing_bundle_is_exit_2(forges: Forges) -> None:
    result = cli_result(forges.bench, "attest", "verify", str(forges.root / "nope.jsonl"))
    assert result["exitCode"] == 2
    assert "cannot read bundle" in result["stderr"] and "Traceback" not in result["stderr"]


def test_attest_verify_with_another_key_fails(attested: dict[str, Any], forges: Forges,
                                              tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    other = tmp_path / "other.pub"
    other.write_bytes(Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    result = cli_result(attested["bench"], "attest", "verify", str(attested["bundle"]), "--key",
                        str(other))
    assert result["exitCode"] == 3
    assert "envelope 1: no valid signature by key" in result["stderr"]



def _cut(attested: dict[str, Any], keep: Callable[[int, int], bool], path: Path) -> Path:
    """The bundle with only the lines `keep(index, count)` allows."""
    lines = attested["bundle"].read_text().splitlines()
    path.write_text("".join(line + "\n" for at, line in enumerate(lines)
                            if keep(at, len(lines))))
    return path


@pytest.mark.parametrize(("keep", "named"), [
    (lambda at, count: at != 0, "the provenance (https://slsa.dev/provenance/v1) is missing"),
    (lambda at, count: at != 1, "the test result of check 'python3-unittest' is missing"),
    (lambda at, count: at != count - 1, "the run predicate (https://agentctl.dev/attestation/"
                                        "run/v1) is missing"),
    (lambda at, count: at == 0, "the run predicate (https://agentctl.dev/attestation/run/v1) is "
                                "missing"),  # cut down to its provenance envelope
], ids=["provenance", "test-result", "run-predicate", "provenance-only"])
def test_a_bundle_with_a_statement_removed_fails_naming_it(
        attested: dict[str, Any], forges: Forges, tmp_path: Path,
        keep: Callable[[int, int], bool], named: str) -> None:
    cut = _cut(attested, keep, tmp_path / "cut.jsonl")
    result = cli_result(attested["bench"], "attest", "verify", str(cut), "--key",
                        str(attested["pem"]))
    assert result["exitCode"] == 3, result
    lines = result["stderr"].strip().splitlines()
    assert len(lines) == 1 and f"incomplete bundle: {named}" in lines[0], lines


def test_a_statement_the_run_predicate_does_not_list_fails(
        attested: dict[str, Any], forges: Forges, tmp_path: Path) -> None:
    """A test result repeated from another bundle of the same patch is not part of this one."""
    lines = attested["bundle"].read_text().splitlines()
    padded = tmp_path / "padded.jsonl"
    padded.write_text("\n".join([lines[0], lines[1], lines[1], *lines[2:]]) + "\n")
    result = cli_result(attested["bench"], "attest", "verify", str(padded), "--key",
                        str(attested["pem"]))
    assert result["exitCode"] == 3, result
    assert "envelope 3 (https://in-toto.io/attestation/test-result/v0.1) is not one the run " \
        "predicate lists" in result["stderr"]


def test_a_bundle_signed_by_another_key_fails_with_the_pinned_key(
        attested: dict[str, Any], forges: Forges, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    other = tmp_path / "other.pem"
    other.write_bytes(Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    forged = tmp_path / "forged.jsonl"
    attested["bench"].cli("run", "attest", attested["run"]["runId"], "--key", str(other),
                     "--output", str(forged))
    pinned = cli_result(attested["bench"], "attest", "verify", str(forged), "--key",
                        str(attested["pem"]))
    assert pinned["exitCode"] == 3
    assert f"envelope 1: no valid signature by key {attested['key']['keyid']}" in \
        pinned["stderr"]
    by_its_own = cli_result(attested["bench"], "attest", "verify", str(forged), "--key", str(other))
    assert by_its_own["exitCode"] == 0, by_its_own["stderr"]


def test_a_good_bundle_passes_and_says_where_its_trust_comes_from(
        attested: dict[str, Any], forges: Forges, tmp_path: Path) -> None:
    keyid = attested["key"]["keyid"]
    bundle = str(attested["bundle"])
    pinned = cli_result(attested["bench"], "attest", "verify", bundle, "--key", str(attested["pem"]))
    assert pinned["exitCode"] == 0, pinned["stderr"]
    assert "complete: provenance, the test result of each check (python3-unittest), the run " \
        "predicate" in pinned["stdout"]
    assert f"trust: signed by the key you pinned, {keyid} ({attested['pem']})" in \
        pinned["stdout"]
    home = cli_result(attested["bench"], "attest", "verify", bundle)
    assert home["exitCode"] == 0, home["stderr"]
    assert f"trust: signed by this state home's own key {keyid}" in home["stdout"]
    assert "pin the signer's public key with --key" in home["stdout"]
    as_json = json.loads(cli_result(attested["bench"], "attest", "verify", bundle, "--key",
                                    str(attested["pem"]), "--json")["stdout"])
    assert as_json["trust"]["source"] == "pinned" and as_json["trust"]["keyid"] == keyid
    assert as_json["checks"] == ["python3-unittest"]
    # a home with no key checks no signature only when asked to, and says so
    keyless = ("--home", str(tmp_path / "keyless"), "attest", "verify", bundle)
    refused = cli_result(attested["bench"], *keyless)
    assert refused["exitCode"] == 2 and refused["stdout"] == "", refused
    assert refused["stderr"].strip().splitlines() == [
        "agentctl: error: no key to check the bundle's signatures against (this state home has "
        "none): pin the signer's public key with --key PUB, or pass "
        "--insecure-ignore-signatures to check only that its statements agree"], refused["stderr"]
    elsewhere = cli_result(attested["bench"], *keyless, "--insecure-ignore-signatures", "--json")
    assert elsewhere["exitCode"] == 0, elsewhere["stderr"]
    trust = json.loads(elsewhere["stdout"])["trust"]
    assert trust["source"] == "not checked" and trust["keyid"] is None
    assert trust["says"].startswith("signatures not checked (--insecure-ignore-signatures)")
    text = cli_result(attested["bench"], *keyless, "--insecure-ignore-signatures")["stdout"]
    assert "trust: signatures not checked" in " ".join(text.split())
    contradict = cli_result(attested["bench"], "attest", "verify", bundle, "--key",
                            str(attested["pem"]), "--insecure-ignore-signatures")
    assert contradict["exitCode"] == 2 and "contradict" in contradict["stderr"]
    assert not (tmp_path / "keyless" / "attest-ed25519.pem").exists()


def test_run_show_and_verdict_explain_print_the_pr_for_people(opened: dict[str, Any],
                                                               forges: Forges) -> None:
    run_id = opened["run"]["runId"]
    for args in (("run", "show", run_id), ("verdict", "explain", run_id)):
        text = " ".join(opened["bench"].cli(*args).stdout.split())
        assert "github #1 MERGED https://github.example/octo/calc/pull/1" in text, args


def test_the_token_can_come_from_gh_auth_token_and_draft_forces_a_draft(
        forges: Forges, tmp_path: Path) -> None:
    # `gh` is a CLI we do not own: a stand-in that answers `gh auth token` like the real one.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text('#!/bin/sh\n[ "$1 $2" = "auth token" ] && echo gho_fromgh && exit 0\nexit 1\n')
    gh.chmod(0o755)
    _, remote, run = forges.approved_run("gh")
    start = len(forges.github.requests)
    result = cli_result(forges.bench, "--config", str(forges.gh_config), "pr", "create",
                        run["runId"], "--remote", str(remote), "--draft", "--json",
                        env={"GITHUB_TOKEN": "", "GH_TOKEN": "",
                             "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"})
    assert result["exitCode"] == 0, result["stderr"]
    requests = forges.github.requests[start:]
    assert {r.headers["Authorization"] for r in requests} == {"Bearer gho_fromgh"}
    post = next(r for r in requests if r.method == "POST" and r.path.endswith("/pulls"))
    assert post.json["draft"] is True
    assert json.loads(result["stdout"])["draft"] is True


def test_the_signing_key_is_made_once_in_the_state_home_readable_only_by_its_owner(
        attested: dict[str, Any], forges: Forges) -> None:
    key = attested["bench"].home / "attest-ed25519.pem"
    assert key.stat().st_mode & 0o777 == 0o600
    assert attested["bench"].json("attest", "pubkey")["keyid"] == attested["key"]["keyid"]
