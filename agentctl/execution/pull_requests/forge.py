"""GitHub's pulls API and GitLab's merge requests API over the standard library's HTTP client.

Each forge answers the same four questions (find the open PR of a branch, open one, update one,
read one back) and a comment; any failure is one `ForgeError` naming the forge's own message.
The token is sent in a header and never appears in a message, a record or a log. No redirect is
followed (it would carry the token to wherever the forge points), and an answer larger than
`MAX_ANSWER_BYTES` or nested deeper than `MAX_JSON_DEPTH` is refused before it costs memory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Protocol

from agentctl.domain.enums import Forge, PrState
from agentctl.domain.errors import BadInput, InfrastructureFailure
from agentctl.domain.redaction import Redactor

TIMEOUT_SECONDS = 30.0
GITHUB_API = "https://api.github.com"
MAX_ANSWER_BYTES = 1 << 20  # a page of PRs is tens of KiB; more is not an answer we asked for
MAX_JSON_DEPTH = 32  # a PR is a few levels deep
TOKEN_VARIABLES = {Forge.GITHUB: ("GITHUB_TOKEN", "GH_TOKEN"), Forge.GITLAB: ("GITLAB_TOKEN",)}

Json = dict[str, object]


class ForgeError(InfrastructureFailure):
    """The forge refused or did not answer; nothing was recorded as created, a retry is safe."""


@dataclass(frozen=True, slots=True)
class RemotePr:
    """A pull (merge) request as the forge reports it."""

    number: int
    url: str
    state: PrState
    draft: bool


@dataclass(frozen=True, slots=True)
class PrFields:
    title: str
    head: str
    base: str
    body: str
    draft: bool
    labels: tuple[str, ...]
    reviewers: tuple[str, ...]


class ForgeClient(Protocol):
    kind: Forge

    def find_open(self, head: str) -> RemotePr | None: ...
    def create(self, fields: PrFields) -> RemotePr: ...
    def update(self, number: int, fields: PrFields) -> RemotePr: ...
    def get(self, number: int) -> RemotePr: ...
    def comment(self, number: int, body: str) -> None: ...


@dataclass(frozen=True, slots=True)
class ForgeTarget:
    """Which forge, which API root and which repository a PR goes to."""

    kind: Forge
    api_url: str
    repository: str


def detect(remote_url: str | None, *, forge: Forge, api_url: str, repository: str) -> ForgeTarget:
    """The target from `[pr]` settings, filling what is unset from the remote's URL."""
    host, path = _host_and_path(remote_url or "")
    kind = forge
    if kind is Forge.AUTO:
        kind = Forge.GITHUB if host == "github.com" else \
            Forge.GITLAB if host.startswith("gitlab.") or host == "gitlab.com" else Forge.NONE
    if kind is Forge.NONE:
        return ForgeTarget(Forge.NONE, "", "")
    repository = repository or path
    if not repository or "/" not in repository:
        raise BadInput(f"cannot tell the {kind.value} repository from the remote "
                       f"{remote_url or '(none)'}; set [pr] repository = \"owner/name\"")
    if not api_url:
        if kind is Forge.GITHUB:
            api_url = GITHUB_API if host in ("", "github.com") else f"https://{host}/api/v3"
        elif host:
            api_url = f"https://{host}/api/v4"
        else:
            raise BadInput("cannot tell the GitLab API from the remote; set [pr] api_url")
    return ForgeTarget(kind, api_url.rstrip("/"), repository)


def _host_and_path(url: str) -> tuple[str, str]:
    """(host, "owner/name") of an https, ssh or scp-like git URL; ("", "") for a local path."""
    if "://" in url:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme == "file":
            return "", ""
        host, path = (parts.hostname or "").lower(), parts.path
    elif ":" in url and not url.startswith(("/", ".")) and "@" in url.split(":", 1)[0]:
        user_host, path = url.split(":", 1)
        host = user_host.rsplit("@", 1)[-1].lower()
    else:
        return "", ""
    return host, path.strip("/").removesuffix(".git")


def token_for(kind: Forge) -> str:
    """The token from the environment (or `gh auth token`); never stored, never printed."""
    for name in TOKEN_VARIABLES.get(kind, ()):
        if os.environ.get(name):
            return os.environ[name]
    if kind is Forge.GITHUB and shutil.which("gh"):
        try:
            found = subprocess.run(["gh", "auth", "token"], capture_output=True, text=True,
                                   timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            found = None
        if found is not None and found.returncode == 0 and found.stdout.strip():
            return found.stdout.strip()
    names = " or ".join(TOKEN_VARIABLES.get(kind, ()))
    raise BadInput(f"no {kind.value} token: set {names}" +
                   (" (or log in with `gh auth login`)" if kind is Forge.GITHUB else ""))


def client(target: ForgeTarget, token: str, *, timeout: float = TIMEOUT_SECONDS) -> ForgeClient:
    if target.kind is Forge.GITHUB:
        return GitHub(_Http(target, {"Authorization": f"Bearer {token}",
                                     "Accept": "application/vnd.github+json",
                                     "X-GitHub-Api-Version": "2022-11-28"}, token, timeout),
                      target.repository)
    if target.kind is Forge.GITLAB:
        return GitLab(_Http(target, {"PRIVATE-TOKEN": token}, token, timeout), target.repository)
    raise BadInput(f"no forge client for {target.kind.value}")


class _Http:
    def __init__(self, target: ForgeTarget, headers: dict[str, str], token: str,
                 timeout: float) -> None:
        self.kind, self.root, self.timeout = target.kind, target.api_url, timeout
        self.headers = {"User-Agent": "agentctl", **headers}
        self.redactor = Redactor().knowing([token])

    def call(self, method: str, path: str, payload: Json | None = None,
             query: dict[str, str] | None = None) -> object:
        url = self.root + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = None if payload is None else json.dumps(payload).encode()
        headers = dict(self.headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with _OPENER.open(request, timeout=self.timeout) as response:
                text = _capped(response)
        except urllib.error.HTTPError as error:
            if 300 <= error.code < 400:
                where = urllib.parse.urlsplit(error.headers.get("Location") or "").netloc
                raise ForgeError(self._say(
                    f"{method} {path} answered {error.code}, a redirect to "
                    f"{where or 'elsewhere'}: not followed (it would carry the token); set "
                    "[pr] api_url to the API's own address")) from None
            raise ForgeError(self._say(f"{method} {path} answered {error.code}: "
                                       f"{_message(_capped(error, quiet=True))}")) from None
        except _TooLarge:
            raise ForgeError(self._say(f"{method} {path} answered more than "
                                       f"{MAX_ANSWER_BYTES} bytes: refused")) from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ForgeError(self._say(f"{method} {path} failed: {reason}")) from None
        if not text.strip():
            return None
        try:
            return _parsed(text)
        except ValueError as error:
            raise ForgeError(self._say(f"{method} {path} answered {error}")) from None

    def _say(self, text: str) -> str:
        return self.redactor.clean(f"{self.kind.value}: {text}")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: the request carries the token, and a redirect may point anywhere.
    The 3xx then surfaces as an HTTPError."""

    def redirect_request(self, *_: object, **__: object) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


class _TooLarge(Exception):
    pass


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _capped(response: _Readable, *, quiet: bool = False) -> bytes:
    """The body, at most `MAX_ANSWER_BYTES`; more raises `_TooLarge` (an error's body is cut)."""
    try:
        body = response.read(MAX_ANSWER_BYTES + 1)
    except OSError:
        if quiet:
            return b""
        raise
    if len(body) > MAX_ANSWER_BYTES:
        if quiet:
            return body[:MAX_ANSWER_BYTES]
        raise _TooLarge
    return body


def _parsed(text: bytes) -> object:
    """JSON no deeper than `MAX_JSON_DEPTH`; ValueError saying why not."""
    try:
        document: object = json.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels: refused") from None
    except ValueError as error:
        raise ValueError(f"what is not JSON ({str(error)[:80]})") from None
    level: list[object] = [document]
    for _ in range(MAX_JSON_DEPTH):  # level by level: no recursion on what the forge sent
        level = [child for value in level for child in
                 (value.values() if isinstance(value, dict) else
                  value if isinstance(value, list) else ())]
        if not level:
            return document
    raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels: refused")


def _message(body: bytes) -> str:
    """The forge's own words: GitHub's `message` and `errors[].message`, GitLab's `message`."""
    try:
        document = _parsed(body)
    except ValueError:
        return body.decode(errors="replace").strip().splitlines()[0][:200] if body.strip() \
            else "no message"
    if not isinstance(document, dict):
        return str(document)[:200]
    parts: list[str] = []
    message = document.get("message") or document.get("error")
    if isinstance(message, list):
        parts += [str(m) for m in message]
    elif isinstance(message, dict):
        parts += [f"{k} {', '.join(map(str, v)) if isinstance(v, list) else v}"
                  for k, v in message.items()]
    elif message:
        parts.append(str(message))
    for item in document.get("errors") or []:
        detail = item.get("message") or item.get("code") if isinstance(item, dict) else item
        if detail:
            parts.append(str(detail))
    return "; ".join(parts) or "no message"


def _as_dict(value: object) -> Json:
    if not isinstance(value, dict):
        raise ForgeError(f"the forge answered {type(value).__name__}, not an object")
    return value


def _number(document: Json, name: str) -> int:
    value = document.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ForgeError(f"the forge's answer has no numeric {name!r}")
    return value


class GitHub:
    kind = Forge.GITHUB

    def __init__(self, http: _Http, repository: str) -> None:
        self.http, self.base = http, f"/repos/{repository}"
        self.owner = repository.split("/", 1)[0]

    def find_open(self, head: str) -> RemotePr | None:
        found = self.http.call("GET", f"{self.base}/pulls",
                               query={"head": f"{self.owner}:{head}", "state": "open"})
        return self._read(found[0]) if isinstance(found, list) and found else None

    def create(self, fields: PrFields) -> RemotePr:
        pr = self._read(self.http.call("POST", f"{self.base}/pulls", {
            "title": fields.title, "head": fields.head, "base": fields.base,
            "body": fields.body, "draft": fields.draft}))
        self._labels_and_reviewers(pr.number, fields)
        return pr

    def update(self, number: int, fields: PrFields) -> RemotePr:
        pr = self._read(self.http.call("PATCH", f"{self.base}/pulls/{number}", {
            "title": fields.title, "body": fields.body}))
        self._labels_and_reviewers(number, fields)
        return pr

    def get(self, number: int) -> RemotePr:
        return self._read(self.http.call("GET", f"{self.base}/pulls/{number}"))

    def comment(self, number: int, body: str) -> None:
        self.http.call("POST", f"{self.base}/issues/{number}/comments", {"body": body})

    def _labels_and_reviewers(self, number: int, fields: PrFields) -> None:
        if fields.labels:
            self.http.call("POST", f"{self.base}/issues/{number}/labels",
                           {"labels": list(fields.labels)})
        if fields.reviewers:
            self.http.call("POST", f"{self.base}/pulls/{number}/requested_reviewers",
                           {"reviewers": list(fields.reviewers)})

    @staticmethod
    def _read(value: object) -> RemotePr:
        pr = _as_dict(value)
        state = PrState.MERGED if pr.get("merged") or pr.get("merged_at") else \
            PrState.OPEN if pr.get("state") == "open" else PrState.CLOSED
        return RemotePr(number=_number(pr, "number"), url=str(pr.get("html_url") or ""),
                        state=state, draft=bool(pr.get("draft")))


class GitLab:
    kind = Forge.GITLAB

    def __init__(self, http: _Http, repository: str) -> None:
        self.http = http
        self.base = f"/projects/{urllib.parse.quote(repository, safe='')}/merge_requests"

    def find_open(self, head: str) -> RemotePr | None:
        found = self.http.call("GET", self.base, query={"source_branch": head,
                                                        "state": "opened"})
        return self._read(found[0]) if isinstance(found, list) and found else None

    def create(self, fields: PrFields) -> RemotePr:
        payload: Json = {"source_branch": fields.head, "target_branch": fields.base,
                         "title": _draft_title(fields), "description": fields.body,
                         "labels": ",".join(fields.labels)}
        if fields.reviewers:
            payload["reviewer_ids"] = self._user_ids(fields.reviewers)
        return self._read(self.http.call("POST", self.base, payload))

    def update(self, number: int, fields: PrFields) -> RemotePr:
        return self._read(self.http.call("PUT", f"{self.base}/{number}", {
            "title": _draft_title(fields), "description": fields.body,
            "labels": ",".join(fields.labels)}))

    def get(self, number: int) -> RemotePr:
        return self._read(self.http.call("GET", f"{self.base}/{number}"))

    def comment(self, number: int, body: str) -> None:
        self.http.call("POST", f"{self.base}/{number}/notes", {"body": body})

    def _user_ids(self, names: tuple[str, ...]) -> list[int]:
        ids = []
        for name in names:
            found = self.http.call("GET", "/users", query={"username": name})
            if not isinstance(found, list) or not found:
                raise ForgeError(f"gitlab: no user {name!r} to ask for a review")
            ids.append(_number(_as_dict(found[0]), "id"))
        return ids

    @staticmethod
    def _read(value: object) -> RemotePr:
        mr = _as_dict(value)
        state = {"opened": PrState.OPEN, "merged": PrState.MERGED}.get(str(mr.get("state")),
                                                                       PrState.CLOSED)
        return RemotePr(number=_number(mr, "iid"), url=str(mr.get("web_url") or ""),
                        state=state, draft=bool(mr.get("draft") or mr.get("work_in_progress")))


def _draft_title(fields: PrFields) -> str:
    """GitLab marks a draft by the title's `Draft:` prefix."""
    return f"Draft: {fields.title}" if fields.draft else fields.title
