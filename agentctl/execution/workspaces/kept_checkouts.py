"""The base checkouts kept beside the cached baselines (`base_checkouts`), named, listed and
discarded without importing what makes them (git, workspaces): `agentctl cache` starts fast.

A kept checkout sits at `<root>/<key>`; an attempt claims one by renaming it to a name of its
own, so a checkout under any other name is in use (or a crashed attempt's, only taking room).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from agentctl.execution.workspaces.removal import force_rmtree
from agentctl.execution.workspaces.tree_cache import KEY

FOLDER = "checkouts"  # under the baseline cache's folder; each named by `tree_cache.cache_key`


def kept(root: Path) -> list[Path]:
    """The checkouts kept under `root` for the next run (none when it does not exist)."""
    if not root.is_dir():
        return []
    return [path for path in root.iterdir() if KEY.fullmatch(path.name) and path.is_dir()]


def discard(checkout: Path) -> bool:
    """Delete a kept checkout, claimed first as an attempt claims one (renamed onto an empty
    folder of its own: atomic), so no attempt is handed part of it. False when an attempt
    claimed it first."""
    claimed = Path(tempfile.mkdtemp(prefix=f"{checkout.name}.discarded.", dir=checkout.parent))
    try:
        os.rename(checkout, claimed)
    except OSError:
        claimed.rmdir()
        return False
    force_rmtree(str(claimed))
    return True
