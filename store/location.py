"""Where a knowledge base lives, and the atomic switch that makes a new build visible.

Two layouts share one Qdrant API (DESIGN.md: no vector-store abstraction of our own):

- embedded (`--store PATH`, the default): every build is a folder `PATH/builds/<build_id>/`
  holding its own Qdrant folder (`qdrant/`), its journal and its manifest. `PATH/CURRENT` names
  the served build and is replaced atomically (`os.replace`) when a build is whole. A reader opens
  the build CURRENT names; a build in another process writes a different folder, so it never
  contends for the reader's folder lock and a reader never sees half a build.
- server (`--store http://host:6333`): collections `<name>_questions__<build_id>` and
  `<name>_tables__<build_id>`, served through the aliases `<name>_questions` and `<name>_tables`,
  switched in one `update_collection_aliases` call. Journals and manifests stay in a local state
  folder.

`PATH/PENDING` (or the state folder's) names a build that started and did not finish: the next
build resumes it.

One builder at a time: a build holds an exclusive OS lock (`flock`) on `PATH/build.lock` (the
state folder's, for a server store) from start to end. The kernel drops it when the process
ends, however it ends, so a killed build never leaves a stale lock; a second build fails at once
and names the holder. The lock belongs to the open file, which every copy of its descriptor
shares, so a process forked while it is held (a build's synthesis processes) would hold it too,
after the build is gone: a forked child closes its copy at once (that leaves the parent's lock
alone; unlocking would not).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from store.errors import StoreBusyError, StoreError

QUESTIONS = "questions"
TABLES = "tables"
LOCK_FILE = "build.lock"


@dataclass(frozen=True)
class StoreLocation:
    """`root`: local folder for builds, journals and pointers; `url`: a Qdrant server or None."""

    root: Path
    url: str | None = None
    api_key: str | None = None
    collection: str = "schemarag"

    def __post_init__(self) -> None:
        if not self.collection.replace("_", "").replace("-", "").isalnum():
            raise StoreError(
                f"collection name {self.collection!r} may hold only letters, digits, - and _"
            )

    @staticmethod
    def parse(
        store: str | Path,
        *,
        collection: str = "schemarag",
        api_key: str | None = None,
        state_dir: str | Path = ".schemarag/state",
    ) -> StoreLocation:
        text = str(store)
        url = text if text.startswith(("http://", "https://")) else None
        root = Path(state_dir) / collection if url else Path(text)
        existing = next(p for p in (root, *root.parents) if p.exists() or p == Path(p.anchor))
        if existing.exists() and not existing.is_dir():
            what = "the server store's state folder" if url else "the store"
            where = "is a file" if existing == root else f"cannot be made: {existing} is a file"
            raise StoreError(f"{root}: {what} must be a folder and {where}; pass another path")
        return StoreLocation(root, url, api_key if url else None, collection)

    @property
    def embedded(self) -> bool:
        return self.url is None

    @property
    def where(self) -> str:
        """The store for messages and reports: the folder, or the server URL with any password
        and key-like query values masked."""
        return str(self.root) if self.url is None else masked_url(self.url)

    def build_dir(self, build_id: str) -> Path:
        return self.root / "builds" / build_id

    def collection_name(self, kind: str, build_id: str) -> str:
        """The physical collection of one build (server) or the plain name (embedded)."""
        if self.embedded:
            return f"{self.collection}_{kind}"
        return f"{self.collection}_{kind}__{build_id}"

    def alias(self, kind: str) -> str:
        return f"{self.collection}_{kind}"

    # -- pointers -------------------------------------------------------------------------

    def current(self) -> str | None:
        return _read(self.root / "CURRENT")

    def pending(self) -> str | None:
        return _read(self.root / "PENDING")

    def set_pending(self, build_id: str | None) -> None:
        if build_id is None:
            (self.root / "PENDING").unlink(missing_ok=True)
        else:
            _write_atomic(self.root / "PENDING", build_id)

    def manifest(self, build_id: str) -> dict[str, Any]:
        path = self.build_dir(build_id) / "manifest.json"
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise StoreError(
                f"{path}: build {build_id} has no manifest; rebuild with --full"
            ) from None
        except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
            raise StoreError(
                f"{path}: the manifest of build {build_id} is damaged ({exc}); "
                "rebuild with `schemarag index build --full`"
            ) from None
        if not isinstance(data, dict):
            raise StoreError(
                f"{path}: the manifest of build {build_id} is not a JSON object; "
                "rebuild with `schemarag index build --full`"
            )
        return data

    def publish(self, build_id: str, client: Any) -> None:
        """Make `build_id` the served build, atomically for readers."""
        if not self.embedded:
            from qdrant_client import models

            actions: list[Any] = []
            existing = {a.alias_name for a in client.get_aliases().aliases}
            for kind in (QUESTIONS, TABLES):
                alias = self.alias(kind)
                if alias in existing:
                    actions.append(
                        models.DeleteAliasOperation(
                            delete_alias=models.DeleteAlias(alias_name=alias)
                        )
                    )
                actions.append(
                    models.CreateAliasOperation(
                        create_alias=models.CreateAlias(
                            collection_name=self.collection_name(kind, build_id), alias_name=alias
                        )
                    )
                )
            client.update_collection_aliases(change_aliases_operations=actions)
        _write_atomic(self.root / "CURRENT", build_id)

    def builds(self) -> list[str]:
        folder = self.root / "builds"
        return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.exists() else []

    def prune(self, keep: int, client: Any = None) -> list[str]:
        """Delete all but the newest `keep` complete builds (never the current or pending).
        On a server at least two stay: servers read the collections of the build they loaded
        (not the aliases) until they reload, a second or so after the switch."""
        if not self.embedded:
            keep = max(keep, 2)
        protected = {self.current(), self.pending()}
        complete = [b for b in self.builds() if (self.build_dir(b) / "manifest.json").exists()]
        doomed = [b for b in complete[: max(0, len(complete) - keep)] if b not in protected]
        for build_id in doomed:
            if client is not None and not self.embedded:
                for kind in (QUESTIONS, TABLES):
                    name = self.collection_name(kind, build_id)
                    if client.collection_exists(name):
                        client.delete_collection(name)
            shutil.rmtree(self.build_dir(build_id), ignore_errors=True)
        return doomed


_held_locks: set[int] = set()
"""Descriptors of the build locks this process holds."""


def _close_held_locks_after_fork() -> None:
    for fd in _held_locks:
        with suppress(OSError):
            os.close(fd)
    _held_locks.clear()


os.register_at_fork(after_in_child=_close_held_locks_after_fork)


@contextmanager
def build_lock(location: StoreLocation) -> Iterator[None]:
    """Hold the store's build lock (see the module docstring) for the body of the block."""
    location.root.mkdir(parents=True, exist_ok=True)
    fd = os.open(location.root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    if (holder := _holder_unless_locked(fd)) is not None:
        os.close(fd)
        where = location.where
        raise StoreBusyError(
            f"{where}: another build is running on this store ({holder}); "
            "wait for it to finish, or stop it"
        )
    _held_locks.add(fd)
    try:
        started = datetime.now(UTC).isoformat(timespec="seconds")
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}, since {started}".encode())
        yield
    finally:
        _held_locks.discard(fd)
        os.ftruncate(fd, 0)
        os.close(fd)


def running_build(location: StoreLocation) -> str | None:
    """Who holds the store's build lock ("pid ... on HOST, since ..."), or None if nobody."""
    try:
        fd = os.open(location.root / LOCK_FILE, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        return _holder_unless_locked(fd, shared=True)
    finally:
        os.close(fd)


def _holder_unless_locked(fd: int, *, shared: bool = False) -> str | None:
    """Take the lock on `fd` (released on close) and return None, or return its holder."""
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.read(fd, 1000).decode("utf-8", "replace").strip() or "a build starting up"
    return None


@contextmanager
def open_client(location: StoreLocation, build_id: str) -> Iterator[Any]:
    """A Qdrant client for writing `build_id`: its own folder (embedded) or the server."""
    from qdrant_client import QdrantClient

    if location.embedded:
        folder = location.build_dir(build_id) / "qdrant"
        folder.mkdir(parents=True, exist_ok=True)
        client = QdrantClient(path=str(folder))
    else:
        client = QdrantClient(url=location.url, api_key=location.api_key, timeout=60)
    try:
        yield client
    finally:
        client.close()


def copy_build(location: StoreLocation, source: str, target: str) -> None:
    """Start `target` from a copy of the complete build `source` (embedded: the folder)."""
    if location.embedded:
        src = location.build_dir(source) / "qdrant"
        dst = location.build_dir(target) / "qdrant"
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


_SECRET_PARAM = re.compile(r"(?i)((?:api[-_]?)?key|token|password|secret)=[^&]*")


def masked_url(url: str) -> str:
    """`url` with the password of its user part and key-like query values replaced by ***."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = _SECRET_PARAM.sub(lambda m: f"{m.group(1)}=***", parts.query)
    return urlunsplit(parts._replace(netloc=netloc, query=query))
