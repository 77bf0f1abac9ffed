"""Any GGUF model run in process by llama.cpp, through the ``xllamacpp`` package.

Nothing leaves the machine: the schema and the question are read by a model loaded from a local
``.gguf`` file (``pip install 'schemarag[local]'``). A model is loaded once per process and
shared by every `LlamaCppLLM` with the same path and options; its calls run one at a time.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from providers.errors import ConfigurationError, MissingDependencyError, ProviderCallError
from providers.llm import Completion, Message, Timings, Usage, check_request

__all__ = ["MAX_DEFAULT_THREADS", "LlamaCppLLM", "check_gguf", "default_threads"]

#: The default thread count is one per core available to this process, at most this many.
MAX_DEFAULT_THREADS = 8

log = logging.getLogger(__name__)

_GGUF_MAGIC = b"GGUF"
_LOADED: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
_LOADING = threading.Lock()


def default_threads() -> int:
    """One thread per core this process may run on, capped at `MAX_DEFAULT_THREADS`."""
    return max(1, min(len(os.sched_getaffinity(0)), MAX_DEFAULT_THREADS))


def check_gguf(path: Path) -> Path:
    """``path`` resolved, or a `ConfigurationError` if it is not a readable GGUF file."""
    if not path.is_file():
        raise ConfigurationError(
            f"llamacpp: model file {str(path)!r} not found: give the path of a .gguf file "
            "(fetch one with benchmarks/fetch_local_model.py)"
        )
    with path.open("rb") as stream:
        magic = stream.read(4)
    if magic != _GGUF_MAGIC:
        raise ConfigurationError(
            f"llamacpp: {str(path)!r} is not a GGUF model (it does not start with 'GGUF'): "
            "give the path of a .gguf file"
        )
    return path.resolve()


def _load(path: Path, threads: int, n_ctx: int) -> tuple[Any, threading.Lock]:
    key = (str(path), threads, n_ctx)
    with _LOADING:
        if key not in _LOADED:
            try:
                import xllamacpp
            except ImportError as exc:
                raise MissingDependencyError("xllamacpp", "local", "llamacpp:PATH") from exc
            params = xllamacpp.CommonParams()
            params.model.path = str(path)
            params.n_ctx = n_ctx
            params.n_parallel = 1
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
            params.warmup = False
            # llama.cpp writes its own log to stderr; only when this module logs at DEBUG.
            params.verbosity = 1 if log.isEnabledFor(logging.DEBUG) else -1
            try:
                server = xllamacpp.Server(params)
            except Exception as exc:  # the C++ loader reports failures as plain exceptions
                raise ConfigurationError(
                    f"llamacpp: could not load {str(path)!r}: {exc}; check that it is a "
                    "complete GGUF model"
                ) from exc
            _LOADED[key] = (server, threading.Lock())
        return _LOADED[key]


class LlamaCppLLM:
    """An `LLM` on a local GGUF model, chat template taken from the model.

    At temperature 0 decoding is greedy, so a request always gets the same reply. Above 0
    tokens are sampled with seed ``seed + sample``: the same draw repeats, different ``sample``
    values differ. The prompt cache is off (``cache_prompt``) because llama.cpp does not
    guarantee identical logits when a prefix comes from the cache; turn it on for speed when
    many calls share a long schema prefix and exact repeats do not matter.

    ``threads`` defaults to `default_threads`; ``n_ctx`` is the context window in tokens
    (prompt and reply together).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        threads: int | None = None,
        n_ctx: int = 8192,
        seed: int = 0,
        cache_prompt: bool = False,
    ) -> None:
        if threads is not None and threads < 1:
            raise ConfigurationError(f"llamacpp threads must be >= 1, got {threads}")
        if n_ctx < 256:
            raise ConfigurationError(f"llamacpp n_ctx must be >= 256 tokens, got {n_ctx}")
        if seed < 0:
            raise ConfigurationError(f"llamacpp seed must be >= 0, got {seed}")
        self._path = check_gguf(Path(path))
        self._threads = threads or default_threads()
        self._seed = seed
        self._cache_prompt = cache_prompt
        self._server, self._lock = _load(self._path, self._threads, n_ctx)

    @property
    def name(self) -> str:
        return f"llamacpp:{self._path.name}"

    @property
    def path(self) -> Path:
        return self._path

    @property
    def threads(self) -> int:
        return self._threads

    def request_body(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        stop: Sequence[str] | None = None,
        sample: int = 0,
    ) -> dict[str, Any]:
        chat: list[dict[str, str]] = []
        if system:
            chat.append({"role": "system", "content": system})
        chat.extend({"role": m.role, "content": m.content} for m in messages)
        body: dict[str, Any] = {
            "messages": chat,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": self._seed + sample,
            "cache_prompt": self._cache_prompt,
        }
        if temperature == 0:
            body["top_k"] = 1
        if stop:
            body["stop"] = list(stop)
        return body

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        stop: Sequence[str] | None = None,
        sample: int = 0,
    ) -> Completion:
        check_request(messages, temperature, max_tokens, sample)
        body = self.request_body(
            system,
            messages,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=stop,
            sample=sample,
        )
        with self._lock:
            reply = self._server.handle_chat_completions(body)
        if isinstance(reply, str):
            reply = json.loads(reply)
        return self._completion(reply)

    def _completion(self, reply: Any) -> Completion:
        if not isinstance(reply, dict) or "choices" not in reply:
            message = reply.get("error", reply) if isinstance(reply, dict) else reply
            raise ProviderCallError(
                f"llama.cpp failed ({self.name}): {str(message)[:300]}", provider="llamacpp"
            )
        choice = reply["choices"][0]
        usage = reply.get("usage") or {}
        timings = reply.get("timings") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            model=self.name,
            usage=Usage(
                input_tokens=usage.get("prompt_tokens", 0),
                output_tokens=usage.get("completion_tokens", 0),
            ),
            stop_reason=choice.get("finish_reason"),
            timings=Timings(
                prompt_seconds=timings.get("prompt_ms", 0.0) / 1000,
                generation_seconds=timings.get("predicted_ms", 0.0) / 1000,
                prompt_tokens_per_second=timings.get("prompt_per_second", 0.0),
                generation_tokens_per_second=timings.get("predicted_per_second", 0.0),
            ),
        )
