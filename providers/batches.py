"""Batches of requests a provider runs offline (Anthropic's Message Batches): where one
stands, a request that produced no message, and waiting for one to end."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from providers.errors import ConfigurationError, ProviderCallError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchStatus:
    """Where a Message Batch stands. Request counts are final only once ``ended``."""

    batch_id: str
    processing_status: str
    processing: int
    succeeded: int
    errored: int
    canceled: int
    expired: int

    @property
    def ended(self) -> bool:
        return self.processing_status == "ended"


@dataclass(frozen=True)
class BatchFailure:
    """A batch request that produced no message: ``kind`` is errored, canceled or expired."""

    custom_id: str
    kind: Literal["errored", "canceled", "expired"]
    message: str


def wait_for_batch(
    batch_id: str,
    status_of: Callable[[str], BatchStatus],
    provider: str,
    *,
    poll_interval: float = 60.0,
    timeout: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> BatchStatus:
    """Poll `status_of(batch_id)` until the batch has ended; `ProviderCallError` (of
    `provider`) if ``timeout`` seconds pass.

    Batches end within 24 hours. The batch keeps running after a timeout: call again with
    the same id to resume waiting.
    """
    if poll_interval <= 0:
        raise ConfigurationError(f"poll_interval must be > 0 seconds, got {poll_interval}")
    started = clock()
    while True:
        status = status_of(batch_id)
        if status.ended:
            log.info(
                "Message Batch %s ended: %d succeeded, %d errored, %d expired, %d canceled",
                batch_id,
                status.succeeded,
                status.errored,
                status.expired,
                status.canceled,
            )
            return status
        if timeout is not None and clock() - started + poll_interval > timeout:
            raise ProviderCallError(
                f"Message Batch {batch_id} still {status.processing_status} after "
                f"{clock() - started:.0f}s ({status.processing} requests processing); "
                "wait again with the same batch id to collect it",
                provider=provider,
            )
        log.debug(
            "Message Batch %s: %s, %d processing",
            batch_id,
            status.processing_status,
            status.processing,
        )
        sleep(poll_interval)
