"""A real headless browser for the run page: Debian's `chromium`, installed with apt-get on first
use under a lock (xdist workers share it), as the agent CLIs are installed by their conftest.

What the page did is read from the browser itself: the DOM after rendering (`--dump-dom`), a
screenshot, the console (`--enable-logging=stderr`), and every request it made (a NetLog,
Chromium's own record of its network activity).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.machine import unavailable

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--mute-audio")
LOCK = Path(tempfile.gettempdir()) / "agentctl-test-chromium.lock"


def chromium() -> str:
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = shutil.which("chromium")
        if found:
            return found
        if os.geteuid() != 0:
            unavailable("chromium is not installed and apt-get needs root")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for argv in (["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"],
                     ["apt-get", "update", "-q"],
                     ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]):
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
            if done.returncode == 0 and argv[1] == "install":
                break
        found = shutil.which("chromium")
        if not found:
            unavailable(f"cannot install chromium: {done.stderr[-500:]}")
        return found


@dataclass(frozen=True)
class Rendered:
    dom: str
    console: list[str]  # the page's console messages, as Chromium logs them
    urls: list[str]  # every URL the page requested over the network
    screenshot: Path


def render(page: Path, scratch: Path) -> Rendered:
    """Load `page` from disk in a fresh profile: its DOM, console, requests and a screenshot."""
    binary = chromium()
    scratch.mkdir(parents=True, exist_ok=True)
    netlog, shot = scratch / "netlog.json", scratch / "page.png"
    common = [binary, *FLAGS, "--enable-logging=stderr", "--log-level=0",
              f"--log-net-log={netlog}", "--net-log-capture-mode=Default"]
    dumped = subprocess.run([*common, f"--user-data-dir={scratch / 'profile-dom'}",
                             "--dump-dom", page.as_uri()],
                            capture_output=True, text=True, timeout=120)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    urls = _requested(netlog)
    shot_run = subprocess.run([*common[:-2], f"--user-data-dir={scratch / 'profile-shot'}",
                               "--window-size=1100,2000", f"--screenshot={shot}",
                               page.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot_run.returncode == 0 and shot.stat().st_size > 0, shot_run.stderr[-2000:]
    console = [line for line in dumped.stderr.splitlines() if "CONSOLE" in line]
    return Rendered(dumped.stdout, console, urls, shot)


def _requested(netlog: Path) -> list[str]:
    """The URLs the page asked the network for: the NetLog's URL requests whose isolation key
    is the page's own file:// origin (the browser's own housekeeping requests have another;
    file:// loads do not go through the network stack, so a page that fetches nothing leaves
    none)."""
    log = json.loads(netlog.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [str(e["params"]["url"]) for e in log["events"]
            if e["type"] == start and str(e["params"].get("network_isolation_key", ""))
            .startswith("file://")]


MEASURE = """<script>addEventListener('load', () => {
  const view = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('body *')].filter(
    e => e.getBoundingClientRect().right > view + 0.5 && !e.closest('details:not([open])'));
  document.body.setAttribute('data-measured', JSON.stringify({
    view, scroll: document.documentElement.scrollWidth,
    wide: wide.slice(0, 5).map(e => e.tagName + '.' + e.className)}));
});</script>"""


def widths(page: Path, scratch: Path, width: int) -> dict[str, object]:
    """The page laid out in a window `width` pixels wide: its viewport, its scroll width and the
    first elements that reach past the viewport's right edge. The page itself runs no script
    (its CSP forbids it), so a copy without that policy carries the measuring one."""
    import re

    scratch.mkdir(parents=True, exist_ok=True)
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text())
    copy = scratch / "measured.html"
    copy.write_text(text.replace("</body>", MEASURE + "</body>"))
    done = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={scratch / 'profile-measure'}",
                           f"--window-size={width},900", "--dump-dom", copy.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'data-measured="([^"]*)"', done.stdout)
    assert found, done.stdout[-2000:]
    import html

    measured: dict[str, object] = json.loads(html.unescape(found.group(1)))
    return measured
