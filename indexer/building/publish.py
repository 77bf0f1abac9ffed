"""Starting, publishing and pruning builds: one place for `index build` and users' examples.

A build starts as a folder named in `PENDING` (`start_or_resume`: an interrupted build with the
same plan is resumed, one with another plan discarded); it ends either published (`publish`:
its manifest written, then the served pointer switched atomically, `PENDING` cleared and old
builds pruned) or discarded (`discard`).
"""

from __future__ import annotations

import logging
import shutil
from datetime import UTC, datetime

from indexer.building.journal import Journal
from store.location import StoreLocation, open_client
from store.manifest import Manifest

log = logging.getLogger("indexer.building")  # the name log configurations know

JOURNAL = "journal.sqlite"


def settle_pending(location: StoreLocation) -> None:
    """A build stopped between publishing and clearing PENDING is whole and served: PENDING
    must not name it (the next build would resume or delete it)."""
    current = location.current()
    if current is not None and location.pending() == current:
        location.set_pending(None)


def start_or_resume(location: StoreLocation, plan_id: str) -> str:
    """The build id to work in: the pending build when its journal holds the same plan
    (resumed), else a new build (any other pending build is discarded). It is left PENDING."""
    pending = location.pending()
    if pending and (location.build_dir(pending) / JOURNAL).exists():
        journal = Journal(location.build_dir(pending) / JOURNAL)
        try:
            same = journal.get_meta("plan") == plan_id
        finally:
            journal.close()
        if same:
            log.info("resuming interrupted build %s", pending)
            return pending
        log.info("discarding interrupted build %s: the catalog changed since", pending)
        shutil.rmtree(location.build_dir(pending), ignore_errors=True)
    build_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ") + "-" + plan_id
    location.build_dir(build_id).mkdir(parents=True, exist_ok=True)
    location.set_pending(build_id)
    return build_id


def open_journal(location: StoreLocation, build_id: str) -> Journal:
    return Journal(location.build_dir(build_id) / JOURNAL)


def discard(location: StoreLocation, build_id: str) -> None:
    """Delete the unpublished build `build_id` and clear PENDING."""
    shutil.rmtree(location.build_dir(build_id), ignore_errors=True)
    location.set_pending(None)


def publish(location: StoreLocation, manifest: Manifest, keep_builds: int) -> list[str]:
    """Write the manifest of the loaded build `manifest.build_id`, make it the served build,
    clear PENDING and prune all but the newest `keep_builds` builds; returns those pruned."""
    build_id = manifest.build_id
    manifest.write(location.build_dir(build_id))
    if location.embedded:
        location.publish(build_id, None)
        location.set_pending(None)
        return location.prune(keep_builds)
    with open_client(location, build_id) as client:
        location.publish(build_id, client)
        location.set_pending(None)
        return location.prune(keep_builds, client)
