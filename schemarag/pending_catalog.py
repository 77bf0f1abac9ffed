"""A catalog read in the background while a server's index loads: `PendingCatalog`.

A server whose store remembers its sources (`serve`, `mcp`) answers from its index first, and
reads the catalog next for what needs it (describing tables, checking SQL, adding examples).
The catalog waits for `after` (the index has loaded), then for a first answer or `GRACE_S`
(loading, it holds the interpreter lock a question's ranking needs), and holds
`BACKGROUND_LOAD` meanwhile, so that the embedder's torch, which takes the same lock, loads
after it: the two together share the interpreter lock and both finish late.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from providers.threads import BACKGROUND_LOAD
from schemagraph import Catalog

__all__ = ["CatalogNotReadyError", "PendingCatalog", "catalog_of"]

log = logging.getLogger(__name__)

#: seconds the catalog waits, once `after` holds, for a first answer to be given
GRACE_S = 1.0


class CatalogNotReadyError(Exception):
    """The catalog is still loading, or could not be loaded; the message says which."""


class PendingCatalog:
    """A catalog loaded by `load` in a background thread, started by `start` once `after`
    returns true (polled) and then `answered` is set (by whoever gave a first answer) or
    `grace_s` have passed."""

    def __init__(
        self,
        load: Callable[[], Catalog],
        *,
        after: Callable[[], bool] = lambda: True,
        grace_s: float = GRACE_S,
    ) -> None:
        self._load = load
        self._after = after
        self.answered = threading.Event()
        self._grace_s = grace_s
        self._catalog: Catalog | None = None
        self._error: Exception | None = None
        self._done = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._run, name="schemarag-catalog", daemon=True).start()

    def _run(self) -> None:
        try:
            with BACKGROUND_LOAD:  # taken at once: the embedder's torch waits for it
                while not self._after():
                    time.sleep(0.05)
                self.answered.wait(self._grace_s)
                self._catalog = self._load()
        except Exception as exc:  # said by every call that needs the catalog
            self._error = exc
            log.error("the catalog could not be loaded: %s", exc)
        finally:
            self._done.set()

    def now(self) -> Catalog | None:
        """The catalog if it has loaded, else None (without waiting)."""
        return self._catalog

    def wait(self, timeout_s: float) -> Catalog:
        """The catalog, waiting up to `timeout_s` while it loads; `CatalogNotReadyError`
        otherwise."""
        if not self._done.wait(timeout_s):
            raise CatalogNotReadyError("the catalog is still loading; try again shortly")
        if self._catalog is None:
            raise CatalogNotReadyError(f"the catalog could not be loaded: {self._error}")
        return self._catalog


def catalog_of(catalog: Catalog | PendingCatalog | None, timeout_s: float) -> Catalog | None:
    """`catalog`, waited for up to `timeout_s` when it is still loading."""
    if isinstance(catalog, PendingCatalog):
        return catalog.wait(timeout_s)
    return catalog
