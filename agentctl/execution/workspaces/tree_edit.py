"""The tree a base commit gives with a few paths changed, reckoned from those paths alone.

git's own way to such a tree (an index of every file, read and written whole by each command)
costs the repository's size: a tenth of a second per command on 200,000 files, whatever the
patch. Here git reads only the folders that hold the changed paths (one `cat-file` per folder
depth), and decides the changed paths' entries in an index holding just those paths (whether
the diff applies, the blobs after filters, the modes); the ids of the folders above them are
then reckoned here, as git would write them. Nothing is written but the blobs git writes:
callers compare the id with a tree git wrote, and never commit one unchecked.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agentctl.domain.errors import InfrastructureFailure
from agentctl.execution.git import WorkspaceGit, copy_index, one_line, unquote_path

_K = TypeVar("_K")
_V = TypeVar("_V")
_FOLDER_MODE = b"40000"
_GITLINK = b"160000"
# diff header lines that carry a mode (a base85 line of a binary patch never starts so)
_MODE_LINES = (b"index ", b"new file mode ", b"deleted file mode ", b"old mode ", b"new mode ")
_SOURCE_LINES = (b"rename from ", b"copy from ")


@dataclass(frozen=True, slots=True)
class Entry:
    """A tree entry: its mode as a tree object spells it (b"100644", b"40000") and its id."""

    mode: bytes
    oid: bytes  # raw

    @property
    def is_folder(self) -> bool:
        return int(self.mode, 8) & 0o170000 == 0o040000


Folder = dict[bytes, Entry]  # name -> entry


@dataclass(frozen=True, slots=True)
class _Base:
    """The base's folders that hold the paths looked at, and the width of its ids."""

    folders: dict[bytes, Folder]
    width: int  # 20 bytes for SHA-1 ids, 32 for SHA-256


def patched_tree(git: WorkspaceGit, base_commit: str, diff: Path, index: Path, *,
                 named: Collection[bytes] | None = None,
                 whole: Path | None = None) -> tuple[str | None, str | None]:
    """(The id of the tree `base_commit` plus `diff` gives, None), or (None, git's first error
    line) when the diff does not apply: `git apply --cached` in an index (`index`, a scratch
    file) that holds the base's entries of the paths the diff names and of the files and links
    on their way, so git judges them as it would in an index of every file. `named`: the paths
    the diff names, where the caller has them from git (the listing `git diff-tree` wrote with
    it), kept for `diff_paths`; else git's parser reads them. (A path the diff names beyond
    them cannot go unseen: one it changes or removes is missing from the index, which git
    refuses, and a new one's folder was not read, which `_edited` refuses.)
    `whole`: an index of every file of the base, small enough (`small_and_whole`) that git
    applies the diff to a copy of it and writes the tree itself, in two processes, not four."""
    if named is not None:
        _remember(diff, frozenset(named))
    if whole is not None:
        copy_index(whole, index)
        try:
            refused = _apply_cached(git, diff, index)
            if refused is not None:
                return None, refused
            return git.run("write-tree", index=index,
                           what="cannot write the patched tree").stdout.strip(), None
        finally:
            index.unlink(missing_ok=True)
    if named is None:
        try:
            named = diff_paths(git, diff)
        except InfrastructureFailure as unreadable:  # not a patch git can read
            return None, str(unreadable)
    base = _read_folders(git, base_commit, named)
    paths = _with_leading(base, named)
    _seed(git, index, base, paths)
    try:
        refused = _apply_cached(git, diff, index)
        if refused is not None:
            return None, refused
        entries = _listed(git, index)
    finally:
        index.unlink(missing_ok=True)
    return _edited(base, {**{path: None for path in paths}, **entries}), None


def small_and_whole(index: Path, git_dir: Path) -> bool:
    """Whether git had better read and write `index` (of the repository at `git_dir`) whole
    than have a tree reckoned from the changed paths here: it is not split, and it holds at
    most ~500 files. (Measured, a one-file patch on a packed base: `apply --cached` and
    `write-tree` in a copy of an index of 550 files, 9.9 ms; the four processes of the
    reckoning, 14.1 ms; about even at 1,400 files.)"""
    try:
        size = index.stat().st_size
    except OSError:
        return False
    return size <= WHOLE_INDEX_BYTES and not any(git_dir.glob("sharedindex.*"))


WHOLE_INDEX_BYTES = 64 * 1024


def _apply_cached(git: WorkspaceGit, diff: Path, index: Path) -> str | None:
    """`git apply --cached` of `diff` in `index`; git's first error line when it refuses."""
    applied = git.run_bytes("apply", "--cached", "--allow-empty", "--whitespace=nowarn",
                            str(diff.resolve()), index=index, check=False, what="git apply")
    if applied.returncode == 0:
        return None
    errors = applied.stderr.splitlines()
    first = next((line.strip() for line in errors if line.strip()), "")
    return one_line(first) or f"git apply exited {applied.returncode}"


def work_tree_tree(git: WorkspaceGit, base_commit: str, paths: Iterable[bytes],
                   index: Path) -> str:
    """The id of the tree in `git.work_tree`, a checkout of `base_commit` in which nothing but
    `paths` (relative, `/`-separated) may differ: each file or link there is staged as `git add`
    stages it (in `index`, a scratch file seeded with its base entry), a missing one or a
    folder counts as removed. The seed and the staging are one `update-index` where the seed
    fits on its command line (`--cacheinfo`, read before the paths `--stdin` names)."""
    base = _read_folders(git, base_commit, paths)
    changed = _with_leading(base, paths)
    present = [path for path in changed if _is_file_or_link(git.work_tree / os.fsdecode(path))]
    seed = _seed_records(base, present)
    index.unlink(missing_ok=True)
    inline = sum(len(mode) + len(oid) + len(path) + 16 for mode, oid, path in seed) \
        <= _INLINE_SEED_BYTES
    if not inline:
        _seed(git, index, base, present)
    try:
        if present:
            cacheinfo = [part for mode, oid, path in seed for part in (
                "--cacheinfo", f"{mode.decode()},{oid},{os.fsdecode(path)}")] if inline else []
            git.run_bytes("update-index", "--add", "-z", *cacheinfo, "--stdin", index=index,
                          stdin=b"".join(path + b"\0" for path in present),
                          what=f"cannot stage the changed files of {git.work_tree}")
        entries = _listed(git, index)
    finally:
        index.unlink(missing_ok=True)
    return _edited(base, {**{path: None for path in changed}, **entries})


def diff_paths(git: WorkspaceGit, diff: Path) -> set[bytes]:
    """Every path `diff` names, as git's parser reads them (`--numstat` names a file once: the
    source of a rename or copy is read from its header line). Kept by the diff's digest: a run
    asks for the same patch's paths twice (its tree on the base, then the verified tree's)."""
    if not diff.stat().st_size:
        return set()
    key = hashlib.sha256(diff.read_bytes()).digest()
    with _named_lock:
        known = _named.get(key)
    if known is not None:
        return set(known)
    listing = git.run_bytes("apply", "--numstat", "-z", str(diff.resolve()),
                            what="cannot read the patch").stdout
    named = {field.split(b"\t", 2)[-1] for field in listing.split(b"\0") if field}
    with diff.open("rb") as lines:
        named.update(unquote_path(line.split(b" from ", 1)[1].rstrip(b"\r\n"))
                     for line in lines if line.startswith(_SOURCE_LINES))
    named.discard(b"")
    _keep(key, frozenset(named))
    return named


def _remember(diff: Path, named: frozenset[bytes]) -> None:
    """`named` as the paths `diff` names, for `diff_paths` to answer with."""
    if diff.stat().st_size:
        _keep(hashlib.sha256(diff.read_bytes()).digest(), named - {b""})


def _keep(key: bytes, named: frozenset[bytes]) -> None:
    with _named_lock:
        _newest(_named, key, named, _NAMED_KEPT)


def _newest(kept: dict[_K, _V], key: _K, value: _V, most: int) -> None:
    """`kept[key] = value`, as the newest; past `most` the oldest go (a worker runs many
    attempts). The caller holds the lock that guards `kept`."""
    kept.pop(key, None)
    kept[key] = value
    while len(kept) > most:
        del kept[next(iter(kept))]


_NAMED_KEPT = 8
# the most a seed given on update-index's command line may take (far below the kernel's limit
# of 128 KiB an argument, 2 MiB in all; a larger one is written by a process of its own)
_INLINE_SEED_BYTES = 64 * 1024
_named: dict[bytes, frozenset[bytes]] = {}  # a diff's digest -> the paths it names
_named_lock = threading.Lock()


def names_gitlink(diff: Path) -> bool:
    """Whether `diff` changes, adds or removes a submodule (mode 160000): a work tree holds no
    commit id to stage, so such a tree is reckoned the whole way (from an index of every file)."""
    with diff.open("rb") as lines:
        return any(line.startswith(_MODE_LINES) and _GITLINK in line for line in lines)


def _is_file_or_link(path: Path) -> bool:
    try:
        return not stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _ancestors(path: bytes) -> Iterable[bytes]:
    """The folders holding `path`, the root (b"") first."""
    yield b""
    parts = path.split(b"/")
    for end in range(1, len(parts)):
        yield b"/".join(parts[:end])


def _read_folders(git: WorkspaceGit, commit: str, paths: Iterable[bytes]) -> _Base:
    """The base's folders holding `paths`, each read from the objects (a folder the base lacks,
    or holds a file or a link at, is empty), or kept from an earlier read of the same commit's
    (a commit's trees never change: a run reads the same folders for the patch's tree on the
    base, then for the verified tree's)."""
    wanted = {folder for path in paths for folder in _ancestors(path)} | {b""}
    with _folders_lock:
        kept = _folders.get(commit)
        if kept is not None and wanted <= kept.folders.keys():
            return _Base({folder: kept.folders[folder] for folder in wanted}, kept.width)
    read = _read_wanted(git, commit, wanted)
    with _folders_lock:
        kept = _folders.get(commit)
        folders = {**(kept.folders if kept else {}), **read.folders}
        _newest(_folders, commit, _Base(
            folders if len(folders) <= _FOLDERS_MAX else read.folders, read.width), _FOLDERS_KEPT)
    return _Base(dict(read.folders), read.width)


_FOLDERS_KEPT = 8  # commits
_FOLDERS_MAX = 4096  # folders of one commit (a worker runs many patches on one base)
_folders: dict[str, _Base] = {}  # a commit -> the folders of it read so far
_folders_lock = threading.Lock()


def _read_wanted(git: WorkspaceGit, commit: str, wanted: set[bytes]) -> _Base:
    """The folders `wanted` from the objects: one `cat-file --batch` naming each by its path
    (`commit:a/b`), or, where a name cannot be one line of its input, one per depth."""
    if not any(b"\n" in folder or b"\r" in folder for folder in wanted):
        return _read_by_path(git, commit, sorted(wanted))
    folders: dict[bytes, Folder] = {}
    known = {b"": f"{commit}^{{tree}}".encode()}
    width = 0
    for depth in range(max(_depth(folder) for folder in wanted) + 1):
        level = sorted(folder for folder in wanted if _depth(folder) == depth)
        readable = [folder for folder in level if folder in known]
        folders.update((folder, {}) for folder in level if folder not in known)
        if readable:
            trees, width = _cat_trees(git, [known[f] for f in readable])
            folders.update(zip(readable, trees, strict=True))
        for folder in wanted:
            if _depth(folder) == depth + 1:
                parent, name = _split(folder)
                entry = folders[parent].get(name)
                if entry is not None and entry.is_folder:
                    known[folder] = entry.oid.hex().encode()
    return _Base(folders, width)


def _read_by_path(git: WorkspaceGit, commit: str, folders: list[bytes]) -> _Base:
    """`_read_folders` in one `cat-file --batch`: git looks each path up in the commit's trees
    (a missing one, or one under a file, a link or a submodule, is reported missing; a file or
    a link there is a blob)."""
    names = [f"{commit}^{{tree}}".encode() if not folder else b"%s:%s" % (commit.encode(), folder)
             for folder in folders]
    out = git.run_bytes("cat-file", "--batch", stdin=b"".join(name + b"\n" for name in names),
                        what="cannot read the base's folders").stdout
    read: dict[bytes, Folder] = {}
    position = width = 0
    for name, folder in zip(names, folders, strict=True):
        header_end = out.index(b"\n", position)
        line = out[position:header_end]
        header = line.split(b" ")
        # "<name> missing": the name as given, spaces and all (a folder may be named "a 1 b")
        if line in (name + b" missing", name + b" ambiguous") and folder:
            read[folder] = {}
            position = header_end + 1
            continue
        if len(header) != 3 or not header[2].isdigit():
            raise InfrastructureFailure(f"cannot read the tree of {commit}: "
                                        f"{line.decode('utf-8', 'replace')}")
        size = int(header[2])
        body = out[header_end + 1:header_end + 1 + size]
        if header[1] == b"tree":
            width = len(header[0]) // 2
            read[folder] = _parse_tree(body, width)
        else:
            read[folder] = {}
        position = header_end + 1 + size + 1
    return _Base(read, width)


def _cat_trees(git: WorkspaceGit, names: list[bytes]) -> tuple[list[Folder], int]:
    """The trees `names` name, parsed, and the width of their ids."""
    out = git.run_bytes("cat-file", "--batch", stdin=b"".join(name + b"\n" for name in names),
                        what="cannot read the base's folders").stdout
    trees: list[Folder] = []
    position = width = 0
    for name in names:
        header_end = out.index(b"\n", position)
        header = out[position:header_end].split(b" ")
        if len(header) != 3 or header[1] != b"tree":
            raise InfrastructureFailure(f"cannot read folder {name.decode()} of the base: "
                                        f"{out[position:header_end].decode('utf-8', 'replace')}")
        size, width = int(header[2]), len(header[0]) // 2
        trees.append(_parse_tree(out[header_end + 1:header_end + 1 + size], width))
        position = header_end + 1 + size + 1
    return trees, width


def _parse_tree(body: bytes, width: int) -> Folder:
    entries: Folder = {}
    position = 0
    while position < len(body):
        space = body.index(b" ", position)
        nul = body.index(b"\0", space)
        entries[body[space + 1:nul]] = Entry(body[position:space], body[nul + 1:nul + 1 + width])
        position = nul + 1 + width
    return entries


def _with_leading(base: _Base, paths: Iterable[bytes]) -> list[bytes]:
    """`paths`, and the files and links of the base on their way (which a new path replaces,
    and which git apply checks a path for being beyond)."""
    found = set(paths)
    for path in list(found):
        for folder in _ancestors(path):
            if folder:
                parent, name = _split(folder)
                entry = base.folders[parent].get(name)
                if entry is not None and not entry.is_folder:
                    found.add(folder)
    return sorted(found)


def _seed_records(base: _Base, paths: Iterable[bytes]) -> list[tuple[bytes, str, bytes]]:
    """(mode, id, path) of the base's entries of `paths` (those it has, folders aside)."""
    records = []
    for path in paths:
        parent, name = _split(path)
        entry = base.folders[parent].get(name)
        if entry is not None and not entry.is_folder:
            records.append((entry.mode, entry.oid.hex(), path))
    return records


def _seed(git: WorkspaceGit, index: Path, base: _Base,
          paths: Iterable[bytes]) -> None:
    """A fresh index holding the base's entries of `paths` (those it has, folders aside)."""
    index.unlink(missing_ok=True)
    records = [b"%s %s\t%s\0" % (mode, oid.encode(), path)
               for mode, oid, path in _seed_records(base, paths)]
    git.run_bytes("update-index", "-z", "--index-info", index=index, stdin=b"".join(records),
                  what="cannot write an index of the changed paths")


def _listed(git: WorkspaceGit, index: Path) -> dict[bytes, Entry | None]:
    listing = git.run_bytes("ls-files", "--stage", "-z", index=index,
                            what="cannot list the changed paths").stdout
    entries: dict[bytes, Entry | None] = {}
    for record in filter(None, listing.split(b"\0")):
        fields, path = record.split(b"\t", 1)
        mode, oid, _stage = fields.split(b" ")
        entries[path] = Entry(mode, bytes.fromhex(oid.decode()))
    return entries


def _edited(base: _Base, changes: Mapping[bytes, Entry | None]) -> str:
    """The root's id once each path of `changes` is set to its entry (None: removed): the
    folders holding them rebuilt bottom up (a file in the way of a folder replaced by it, as
    git replaces it), an emptied folder dropped as git drops it."""
    folders = {name: dict(entries) for name, entries in base.folders.items()}
    for path, entry in changes.items():
        parent, name = _split(path)
        if parent not in folders:  # every path's folders were read with the base
            raise InfrastructureFailure(f"the folder of {os.fsdecode(path)} was not read")
        if entry is None:
            folders[parent].pop(name, None)
        else:
            folders[parent][name] = entry
    for folder in sorted(folders, key=_depth, reverse=True):
        if not folder:
            continue
        parent, name = _split(folder)
        current = folders[parent].get(name)
        if folders[folder]:
            folders[parent][name] = Entry(_FOLDER_MODE, _tree_id(folders[folder], base.width))
        elif current is not None and current.is_folder:
            del folders[parent][name]
    return _tree_id(folders[b""], base.width).hex()


def _tree_id(entries: Folder, width: int) -> bytes:
    """The id git gives a tree of `entries`: sorted as git sorts them (a folder's name as if it
    ended in `/`), hashed with the repository's algorithm (told by the ids' width)."""
    body = b"".join(b"%s %s\0%s" % (entry.mode, name, entry.oid) for name, entry in
                    sorted(entries.items(),
                           key=lambda item: item[0] + b"/" if item[1].is_folder else item[0]))
    digest = hashlib.sha256() if width == 32 else hashlib.sha1()  # noqa: S324 (git's own ids)
    digest.update(b"tree %d\0" % len(body) + body)
    return digest.digest()


def _depth(folder: bytes) -> int:
    return folder.count(b"/") + 1 if folder else 0


def _split(path: bytes) -> tuple[bytes, bytes]:
    parent, _, name = path.rpartition(b"/")
    return parent, name


__all__ = ["Entry", "diff_paths", "names_gitlink", "patched_tree", "small_and_whole",
           "work_tree_tree"]
