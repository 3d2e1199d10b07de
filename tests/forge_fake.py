"""A fake GitHub and a fake GitLab API on 127.0.0.1: the forges are a boundary we do not own.

Each server records every request exactly as it arrived (method, path, query, headers, JSON
body) and keeps just enough state to answer like the real API: PRs (MRs) by number, their
state, comments. A test can queue a failure (status and JSON body), a delay, a redirect or raw answer bytes for
the next request matching a method and path prefix.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any


@dataclass
class Fault:
    method: str
    prefix: str
    status: int = 0
    body: Any = None
    delay: float = 0.0
    location: str = ""  # a redirect's target
    raw: bytes | None = None  # answer bytes sent as they are


@dataclass
class FakeForge:
    kind: str  # "github" | "gitlab"
    repository: str = "octo/calc"
    requests: list[Seen] = field(default_factory=list)
    prs: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, list[str]] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    # --- control ------------------------------------------------------------------------------
    def start(self) -> FakeForge:
        forge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def _handle(self) -> None:
                forge._serve(self)

            do_GET = do_POST = do_PATCH = do_PUT = _handle  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.socket.setblocking(False)  # an aborted client never leaves accept blocking
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def reset(self) -> None:
        """No PR, comment or queued fault left from an earlier test (the requests are kept:
        tests read theirs from where they began)."""
        with self.lock:
            self.prs.clear()
            self.comments.clear()
            self.faults.clear()

    def fail_next(self, method: str, prefix: str, status: int, body: Any) -> None:
        self.faults.append(Fault(method, prefix, status=status, body=body))

    def redirect_next(self, method: str, prefix: str, location: str, status: int = 302) -> None:
        self.faults.append(Fault(method, prefix, status=status, location=location))

    def answer_next(self, method: str, prefix: str, raw: bytes, status: int = 200) -> None:
        self.faults.append(Fault(method, prefix, status=status, raw=raw))

    def delay_next(self, method: str, prefix: str, seconds: float) -> None:
        self.faults.append(Fault(method, prefix, delay=seconds))

    def add_open(self, head: str, base: str = "main") -> int:
        """A PR someone already opened for `head`."""
        if self.kind == "github":
            return int(self._new({"title": "opened by hand", "head": head, "base": base,
                                  "body": "", "draft": False})["number"])
        return int(self._new({"title": "opened by hand", "source_branch": head,
                              "target_branch": base, "description": ""})["iid"])

    def set_state(self, number: int, state: str) -> None:
        pr = self.prs[number]
        if self.kind == "github":
            pr["state"] = "closed" if state in ("merged", "closed") else "open"
            pr["merged"] = state == "merged"
        else:
            pr["state"] = state

    def seen(self, method: str | None = None, path: str | None = None) -> list[Seen]:
        return [r for r in self.requests
                if (method is None or r.method == method) and (path is None or r.path == path)]

    def pr_of(self, head: str) -> list[dict[str, Any]]:
        key = "head" if self.kind == "github" else "source_branch"
        return [pr for pr in self.prs.values() if pr.get(key) == head]

    # --- the API ------------------------------------------------------------------------------
    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urllib.parse.urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        query = dict(urllib.parse.parse_qsl(parts.query))
        seen = Seen(handler.command, parts.path, query, dict(handler.headers.items()), body)
        with self.lock:
            self.requests.append(seen)
            fault = next((f for f in self.faults if f.method == seen.method
                          and seen.path.startswith(f.prefix)), None)
            if fault is not None:
                self.faults.remove(fault)
        if fault is not None and fault.delay:
            time.sleep(fault.delay)
        if fault is not None and fault.status:
            return self._reply(handler, fault.status, fault.body, location=fault.location,
                               raw=fault.raw)
        with self.lock:
            status, answer = self._route(seen)
        self._reply(handler, status, answer)

    @staticmethod
    def _reply(handler: BaseHTTPRequestHandler, status: int, answer: Any, *,
               location: str = "", raw: bytes | None = None) -> None:
        data = json.dumps(answer).encode() if raw is None else raw
        try:
            handler.send_response(status)
            if location:
                handler.send_header("Location", location)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def _route(self, seen: Seen) -> tuple[int, Any]:
        if self.kind == "github":
            return self._github(seen)
        return self._gitlab(seen)

    def _new(self, fields: dict[str, Any]) -> dict[str, Any]:
        number = len(self.prs) + 1
        if self.kind == "github":
            pr = {**fields, "number": number, "state": "open", "merged": False,
                  "html_url": f"https://github.example/{self.repository}/pull/{number}",
                  "labels": [], "requested_reviewers": []}
        else:
            pr = {**fields, "iid": number, "state": "opened",
                  "web_url": f"https://gitlab.example/{self.repository}/-/merge_requests/{number}",
                  "draft": str(fields.get("title", "")).startswith("Draft:")}
        self.prs[number] = pr
        return pr

    def _github(self, seen: Seen) -> tuple[int, Any]:
        base = f"/repos/{self.repository}"
        if seen.headers.get("Authorization", "") == "":
            return 401, {"message": "Requires authentication"}
        if seen.path == f"{base}/pulls" and seen.method == "GET":
            owner, _, head = seen.query.get("head", "").partition(":")
            return 200, [pr for pr in self.prs.values()
                         if pr["head"] == head and pr["state"] == seen.query.get("state", "open")]
        if seen.path == f"{base}/pulls" and seen.method == "POST":
            if self.pr_of(seen.json["head"]):
                return 422, {"message": "Validation Failed", "errors": [
                    {"message": "A pull request already exists"}]}
            return 201, self._new(dict(seen.json))
        tail = seen.path.removeprefix(f"{base}/")
        kind, _, rest = tail.partition("/")
        number_text, _, action = rest.partition("/")
        if not number_text.isdigit() or int(number_text) not in self.prs:
            return 404, {"message": "Not Found"}
        pr = self.prs[int(number_text)]
        if kind == "pulls" and not action and seen.method == "PATCH":
            pr.update(seen.json)
            return 200, pr
        if kind == "pulls" and not action and seen.method == "GET":
            return 200, pr
        if kind == "issues" and action == "labels":
            pr["labels"] = sorted(set(pr["labels"]) | set(seen.json["labels"]))
            return 200, [{"name": name} for name in pr["labels"]]
        if kind == "pulls" and action == "requested_reviewers":
            pr["requested_reviewers"] = list(seen.json["reviewers"])
            return 201, pr
        if kind == "issues" and action == "comments":
            self.comments.setdefault(pr["number"], []).append(seen.json["body"])
            return 201, {"id": 1, "body": seen.json["body"]}
        return 404, {"message": "Not Found"}

    def _gitlab(self, seen: Seen) -> tuple[int, Any]:
        base = f"/api/v4/projects/{urllib.parse.quote(self.repository, safe='')}/merge_requests"
        if not seen.headers.get("PRIVATE-TOKEN") and not seen.headers.get("Private-Token"):
            return 401, {"message": "401 Unauthorized"}
        if seen.path == "/api/v4/users":
            return 200, [{"id": 7, "username": seen.query.get("username")}]
        if seen.path == base and seen.method == "GET":
            return 200, [pr for pr in self.prs.values()
                         if pr["source_branch"] == seen.query.get("source_branch")
                         and pr["state"] == seen.query.get("state", "opened")]
        if seen.path == base and seen.method == "POST":
            if [p for p in self.pr_of(seen.json["source_branch"]) if p["state"] == "opened"]:
                return 409, {"message": ["Another open merge request already exists for this "
                                         "source branch"]}
            return 201, self._new(dict(seen.json))
        number_text, _, action = seen.path.removeprefix(base + "/").partition("/")
        if not number_text.isdigit() or int(number_text) not in self.prs:
            return 404, {"message": "404 Not found"}
        pr = self.prs[int(number_text)]
        if not action and seen.method == "PUT":
            pr.update(seen.json)
            pr["draft"] = str(pr.get("title", "")).startswith("Draft:")
            return 200, pr
        if not action and seen.method == "GET":
            return 200, pr
        if action == "notes":
            self.comments.setdefault(pr["iid"], []).append(seen.json["body"])
            return 201, {"id": 1, "body": seen.json["body"]}
        return 404, {"message": "404 Not found"}
