"""Workspaces: the shared base-tree cache, copy-on-write views of it, clones, checkouts and
their removal, and the patch read back out."""
