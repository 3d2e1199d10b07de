"""The speed-ups that lean on a private or patched API, in one package with one off switch.

Each one is measured and tested, and each one could break on a CPython or Typer upgrade in a way
that looks like an unrelated bug. They live here, so that a reader can see which they are and a
user can turn every one of them off at once: `AGENTCTL_PLAIN=1` (read once, at the first import
of this package) makes each of them do the plain thing instead, at some start-up cost.

- `dataclass_code`: `dataclasses`' module-global `exec` pointed at a table of compiled methods
  kept between processes (~40 ms of each command's start-up).
- `dataclass_doc`: `dataclasses._process_class` wrapped so that a class without a docstring
  gets its signature's text when the docstring is read, not when the class is made (~10 ms).
- `fast_init`: an `exec`-built `__init__` for the hot frozen records, setting each slot through
  its descriptor.
- `json_text`: a JSON encoder built once with the private `json.encoder.c_make_encoder`.
- `enum_values`: `Enum.value` replaced by a plain property over the member's `_value_`.
- `process`: the installed command's garbage-collector pace (a high youngest-generation
  threshold while it starts, `gc.freeze` once a run starts) and its exit through `os._exit`
  after the private `atexit._run_exitfuncs`.
- `typer_click`: the one place that names Typer's private copy of click (`typer._click`), which
  the lazy command group needs (not switchable: no public name exists; its test names it).

Not here, on purpose: the per-tool-call hook (`hooks/hook.py`, the C halves `_json` and
`_socket`) and the sandbox's network bridge (`execution/sandboxing/netbridge.py`, source text run inside
the sandbox): both run where nothing of agentctl may be imported, and their private names are
tested by name beside these (`tests/unit/test_private_apis.py`).

Nothing here imports the rest of agentctl (an import contract says so), and only the records'
modules and the command line import it.
"""

from __future__ import annotations

import os

SWITCH = "AGENTCTL_PLAIN"
PLAIN: bool = os.environ.get(SWITCH, "").strip() not in ("", "0")
"""True when `AGENTCTL_PLAIN` is set (to anything but empty or 0): every speed-up is off."""
