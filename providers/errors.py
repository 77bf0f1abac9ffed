"""The errors the providers package raises.

One root, so the application layer can turn every provider problem into a one-line message::

    ProviderError
    ├── ConfigurationError        bad spec string, missing API key, invalid argument (ValueError)
    ├── MissingDependencyError    an optional package is not installed; names the pip extra
    │                             (ImportError)
    ├── ProviderCallError         the model service failed: HTTP status, timeout, unreachable,
    │                             unparsable response, batch not finished in time
    └── StructuredOutputError     the model answered, but not with usable JSON (shows the reply)
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "MissingDependencyError",
    "ProviderCallError",
    "ProviderError",
    "StructuredOutputError",
]

#: How much of a bad reply an error message shows.
REPLY_EXCERPT_CHARS = 500


class ProviderError(Exception):
    """Root of every error raised by the providers package."""


class ConfigurationError(ProviderError, ValueError):
    """A provider cannot be built as asked: unknown spec, missing key, invalid argument."""


class MissingDependencyError(ProviderError, ImportError):
    """An optional dependency is not installed.

    The message names the pip extra that brings it, for example ``pip install 'schemarag[minilm]'``.
    """

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{purpose} needs the {package!r} package, which is not installed: "
            f"pip install 'schemarag[{extra}]'"
        )


class ProviderCallError(ProviderError):
    """A call to a model provider failed after the client's own retries.

    ``status_code`` is the HTTP status when there was one.
    """

    def __init__(self, message: str, *, provider: str, status_code: int | None = None) -> None:
        self.provider = provider
        self.status_code = status_code
        super().__init__(message)


def excerpt(text: str, limit: int = REPLY_EXCERPT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


class StructuredOutputError(ProviderError):
    """The model's reply could not be parsed or validated as the JSON asked for.

    ``reply`` is the full last reply; the message shows it truncated.
    """

    def __init__(self, reason: str, *, reply: str, attempts: int) -> None:
        self.reason = reason
        self.reply = reply
        self.attempts = attempts
        super().__init__(
            f"no usable JSON after {attempts} attempt(s): {reason}\n"
            f"last reply was:\n{excerpt(reply)}"
        )
