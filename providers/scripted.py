"""An offline LLM whose replies are scripted: for tests, demos and runs without an API key."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator, Sequence

from providers.errors import ConfigurationError, ProviderCallError
from providers.llm import Completion, LLMRequest, Message, Usage, check_request

__all__ = ["ScriptedLLM", "echo_last_user_message"]


def _count_tokens(text: str) -> int:
    """A plausible token count: whitespace-separated words."""
    return len(text.split())


def echo_last_user_message(request: LLMRequest) -> str:
    """Reply with the last user message (the ``scripted`` spec's behaviour)."""
    for message in reversed(request.messages):
        if message.role == "user":
            return message.content
    return ""


class ScriptedLLM:
    """An `LLM` that answers from a script instead of a model.

    ``replies`` is one of:

    - a string: every call returns it;
    - a sequence of strings: calls return them in turn, starting over at the end
      (``cycle=False`` makes a call after the last one fail instead);
    - a function of the `LLMRequest`: its result is the reply.

    ``model`` labels the script: the LLM's name and the completions' model are
    ``scripted:{model}``. Every call is recorded in ``calls`` (a list of `LLMRequest`, in call
    order, thread-safe).
    Usage counts whitespace-separated words: input = system + messages, output = reply.
    A reply is cut at the first ``stop`` sequence, as real models do.
    """

    def __init__(
        self,
        replies: str | Sequence[str] | Callable[[LLMRequest], str],
        *,
        model: str = "default",
        cycle: bool = True,
    ) -> None:
        if not model:
            raise ConfigurationError("model must be a non-empty string")
        self._model = model
        self._lock = threading.Lock()
        self.calls: list[LLMRequest] = []
        self._function: Callable[[LLMRequest], str] | None = None
        self._replies: Iterator[str] | None = None
        if isinstance(replies, str):
            self._replies = itertools.repeat(replies)
        elif callable(replies):
            self._function = replies
        else:
            script = list(replies)
            if not script:
                raise ConfigurationError("replies must not be an empty sequence")
            for reply in script:
                if not isinstance(reply, str):
                    raise ConfigurationError(f"replies must be strings, got {type(reply).__name__}")
            self._replies = itertools.cycle(script) if cycle else iter(script)

    @property
    def name(self) -> str:
        return f"scripted:{self._model}"

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
        request = LLMRequest(
            system,
            tuple(messages),
            temperature=temperature,
            max_tokens=max_tokens,
            stop=tuple(stop) if stop is not None else None,
            sample=sample,
        )
        with self._lock:
            self.calls.append(request)
            scripted = next(self._replies, None) if self._replies is not None else None
            calls = len(self.calls)
        if self._function is not None:
            reply = self._function(request)
        elif scripted is not None:
            reply = scripted
        else:
            raise ProviderCallError(
                f"ScriptedLLM ran out of replies after {calls - 1} call(s)", provider="scripted"
            )
        stop_reason = "end_turn"
        for sequence in stop or ():
            cut = reply.find(sequence)
            if cut >= 0:
                reply = reply[:cut]
                stop_reason = "stop_sequence"
        input_tokens = _count_tokens(system) + sum(_count_tokens(m.content) for m in messages)
        return Completion(
            text=reply,
            model=self.name,
            usage=Usage(input_tokens=input_tokens, output_tokens=_count_tokens(reply)),
            stop_reason=stop_reason,
        )

    @property
    def call_count(self) -> int:
        with self._lock:
            return len(self.calls)
