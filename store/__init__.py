"""Where a knowledge base lives and what a build of it holds, read by the indexer that writes it
and by the retriever, the servers and the benchmarks that read it.

- `location`         `StoreLocation`: a folder or a Qdrant server, its pointers (CURRENT,
                     PENDING), its build lock and pruning;
- `manifest`         `Manifest`: what a build holds, read by the next build and by readers;
- `layout`           `CollectionLayout`: how a Qdrant server holds a build's collections;
- `snapshot`         a build's collections as flat files for readers;
- `table_documents`  one document per table (what the table signal searches);
- `records`          the payload fields that say where a record of the question collection
                     comes from (synthetic or a user's example);
- `errors`           `StoreError` and its kinds.
"""

from store.errors import LayoutError, StoreBusyError, StoreError
from store.layout import CollectionLayout
from store.location import StoreLocation
from store.manifest import Manifest, read_manifest

__all__ = [
    "CollectionLayout",
    "LayoutError",
    "Manifest",
    "StoreBusyError",
    "StoreError",
    "StoreLocation",
    "read_manifest",
]
