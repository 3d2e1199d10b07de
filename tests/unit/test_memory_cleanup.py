"""The in-memory fake store leaves no temporary folder behind once it is dropped."""

from __future__ import annotations

import gc

from agentctl.testing import InMemoryStorage


def test_a_dropped_memory_store_removes_its_staging_folder() -> None:
    queue = InMemoryStorage()
    staging = queue.blobs.staging_file().parent
    assert staging.is_dir() and staging.name.startswith("agentctl-memory-blobs-")
    del queue
    gc.collect()
    assert not staging.exists()
