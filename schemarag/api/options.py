"""The HTTP app's own settings: limits, logging and reload cadence, as one frozen value.

The keys and the store come from `schemarag.settings.Settings`; these are the knobs that only
the server has. Environment variables (read by `ApiOptions.from_env`, empty counts as unset):

============================ ======================== ===========
variable                     field                    default
============================ ======================== ===========
SCHEMARAG_LOG_QUESTIONS      log_questions            ``0``
SCHEMARAG_MAX_BODY_BYTES     max_body_bytes           ``32768``
SCHEMARAG_MAX_EXAMPLES_BYTES max_examples_body_bytes  ``4194304``
SCHEMARAG_BODY_TIMEOUT       body_timeout_s           ``10.0``
SCHEMARAG_RELOAD_INTERVAL    reload_interval_s        ``1.0``
============================ ======================== ===========
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from providers import ConfigurationError

__all__ = ["ApiOptions"]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class ApiOptions:
    """`max_body_bytes`: largest request body accepted (a 2,000-character question fits even
    when every character is JSON-escaped); `log_questions`: put the question text in the
    request log (off: logs carry route, status and latency only); `body_timeout_s`: how long a
    request body may take to arrive in full (then 408: a Content-Length larger than the body
    sent would otherwise hold the request open for good); `reload_interval_s`: how often the
    served build pointer (or alias) is checked for a new build; `max_examples_body_bytes`: the
    body limit of `POST /v1/examples` instead of `max_body_bytes`."""

    max_body_bytes: int = 32_768
    #: the body limit of POST /v1/examples, which carries up to 1,000 pairs
    max_examples_body_bytes: int = 4 * 1024 * 1024
    log_questions: bool = False
    body_timeout_s: float = 10.0
    reload_interval_s: float = 1.0

    def __post_init__(self) -> None:
        if not 1024 <= self.max_body_bytes <= 16 * 1024 * 1024:
            raise ConfigurationError(
                f"max_body_bytes must be in 1024..16777216, got {self.max_body_bytes}"
            )
        if not 1024 <= self.max_examples_body_bytes <= 64 * 1024 * 1024:
            raise ConfigurationError(
                "max_examples_body_bytes must be in 1024..67108864, got "
                f"{self.max_examples_body_bytes}"
            )
        if not 0.01 <= self.body_timeout_s <= 3600:
            raise ConfigurationError(
                f"body_timeout_s must be in 0.01..3600, got {self.body_timeout_s}"
            )
        if not 0.01 <= self.reload_interval_s <= 3600:
            raise ConfigurationError(
                f"reload_interval_s must be in 0.01..3600, got {self.reload_interval_s}"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> ApiOptions:
        values: dict[str, object] = {}
        flag = environ.get("SCHEMARAG_LOG_QUESTIONS", "").strip().lower()
        if flag:
            if flag not in _TRUE | _FALSE:
                raise ConfigurationError(
                    f"SCHEMARAG_LOG_QUESTIONS must be one of 1/0, true/false, yes/no, on/off; "
                    f"got {flag!r}"
                )
            values["log_questions"] = flag in _TRUE
        for variable, name, kind in (
            ("SCHEMARAG_MAX_BODY_BYTES", "max_body_bytes", int),
            ("SCHEMARAG_MAX_EXAMPLES_BYTES", "max_examples_body_bytes", int),
            ("SCHEMARAG_BODY_TIMEOUT", "body_timeout_s", float),
            ("SCHEMARAG_RELOAD_INTERVAL", "reload_interval_s", float),
        ):
            text = environ.get(variable, "").strip()
            if not text:
                continue
            try:
                values[name] = kind(text)
            except ValueError:
                raise ConfigurationError(
                    f"{variable} must be a {kind.__name__}, got {text!r}"
                ) from None
        return cls(**values)  # type: ignore[arg-type]
