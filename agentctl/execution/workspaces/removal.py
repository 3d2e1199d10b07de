"""Deleting a folder whatever an agent (or git, or overlay) left in it: read-only files and
folders, unlistable folders, links."""

from __future__ import annotations

import os
import shutil
import stat
import sys


def force_rmtree(path: str) -> None:
    """Remove `path` (a file, link or folder tree); permissions are loosened where they are
    what stops the removal. Raises OSError for anything else."""
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
    elif sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_force)
    else:
        shutil.rmtree(path, onerror=_force)


def _force(_func: object, path: str, error: object) -> None:
    """rmtree failed on `path`: make it and its directory writable (and listable), then retry."""
    exc = error[1] if isinstance(error, tuple) else error
    if isinstance(exc, FileNotFoundError):
        return
    loosened = False
    for target in (os.path.dirname(path), path):
        if os.path.isdir(target) and not os.path.islink(target):
            mode = stat.S_IMODE(os.lstat(target).st_mode)
            if mode & stat.S_IRWXU != stat.S_IRWXU:
                os.chmod(target, mode | stat.S_IRWXU)
                loosened = True
    if not loosened:  # permissions were not the problem: retrying would loop forever
        raise exc if isinstance(exc, BaseException) else OSError(f"cannot remove {path}")
    if os.path.lexists(path):
        force_rmtree(path)
