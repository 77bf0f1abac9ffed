"""`CollectionLayout`: how a Qdrant server holds a build's collections (light: the manifest and
every reader of it import it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.errors import LayoutError


@dataclass(frozen=True)
class CollectionLayout:
    """How a Qdrant server holds a build's collections (docs/OPERATIONS.md, "Sharding and
    replication"): `shards` and `replicas` of the question collection (None: the server's
    defaults, one shard per node and no replica; the small table collection is one shard with
    the same replicas), `on_disk`: vectors and payloads on disk, `quantize`: int8 scalar
    quantization kept in RAM (searches rescore with the originals). Server stores only."""

    shards: int | None = None
    replicas: int | None = None
    on_disk: bool = False
    quantize: bool = False

    def __post_init__(self) -> None:
        for name in ("shards", "replicas"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise LayoutError(f"{name} must be >= 1, got {value}")

    @property
    def is_default(self) -> bool:
        return self == CollectionLayout()

    def create_options(self, dim: int, distance: Any, *, questions: bool) -> dict[str, Any]:
        """`create_collection` keyword arguments of the question (or table) collection."""
        from qdrant_client import models

        options: dict[str, Any] = {
            "vectors_config": models.VectorParams(
                size=dim, distance=distance, on_disk=self.on_disk or None
            )
        }
        if questions and self.shards is not None:
            options["shard_number"] = self.shards
        if self.replicas is not None:
            options["replication_factor"] = self.replicas
        if self.on_disk:
            options["on_disk_payload"] = True
        if self.quantize:
            options["quantization_config"] = models.ScalarQuantization(
                scalar=models.ScalarQuantizationConfig(type=models.ScalarType.INT8, always_ram=True)
            )
        return options
