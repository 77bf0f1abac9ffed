"""Ask an LLM for JSON, parse the reply tolerantly, validate it, retry once with the error."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from providers.errors import ConfigurationError, StructuredOutputError
from providers.llm import LLM, Message

__all__ = ["JSON_INSTRUCTION", "complete_json", "extract_json"]

log = logging.getLogger(__name__)

T = TypeVar("T")

JSON_INSTRUCTION = "Reply with one JSON value only, no prose and no code fences."

_FENCE = re.compile(r"```[ \t]*(?:json[c5]?|JSON)?[ \t]*\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


def extract_json(text: str) -> Any:
    """The JSON value in a model reply.

    Tries, in order: the whole reply; the contents of each fenced code block; the first
    ``{...}`` or ``[...]`` that parses, wherever it starts (prose before and after is ignored).
    Raises `ValueError` saying what was tried when nothing parses.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("the reply is empty")
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except ValueError:
            continue
    first_error: str | None = None
    for index, char in enumerate(text):
        if char not in "{[":
            continue
        try:
            value, _ = _DECODER.raw_decode(text, index)
        except json.JSONDecodeError as exc:
            if first_error is None:
                first_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            continue
        return value
    if first_error is None:
        raise ValueError("the reply contains no JSON object or array")
    raise ValueError(
        f"the reply contains no valid JSON object or array (first error: {first_error})"
    )


@overload
def complete_json(
    llm: LLM,
    system: str,
    messages: Sequence[Message],
    *,
    validate: Callable[[Any], T],
    temperature: float = ...,
    max_tokens: int = ...,
    instruction: str | None = ...,
    retries: int = ...,
) -> T: ...


@overload
def complete_json(
    llm: LLM,
    system: str,
    messages: Sequence[Message],
    *,
    validate: None = ...,
    temperature: float = ...,
    max_tokens: int = ...,
    instruction: str | None = ...,
    retries: int = ...,
) -> Any: ...


def complete_json(
    llm: LLM,
    system: str,
    messages: Sequence[Message],
    *,
    validate: Callable[[Any], Any] | None = None,
    temperature: float = 0.0,
    max_tokens: int = 1024,
    instruction: str | None = JSON_INSTRUCTION,
    retries: int = 1,
) -> Any:
    """Call ``llm`` and return the JSON value of its reply, checked by ``validate``.

    ``validate`` receives the parsed value and returns what `complete_json` returns (the value
    itself, or something built from it); it rejects a value by raising `ValueError`,
    `TypeError` or `KeyError` with a message the model can act on. ``instruction`` is appended
    to the last user message (the system prompt is left untouched so that its prompt cache
    still applies). On a parse or validation failure the conversation is extended with the
    bad reply and the error, and the call repeated up to ``retries`` times; then
    `StructuredOutputError` is raised, showing the last reply.
    """
    if retries < 0:
        raise ConfigurationError(f"retries must be >= 0, got {retries}")
    if not messages or messages[-1].role != "user":
        raise ConfigurationError("messages must end with a user message")
    conversation = list(messages)
    if instruction:
        last = conversation[-1]
        conversation[-1] = Message.user(f"{last.content}\n\n{instruction}")
    attempts = 0
    while True:
        attempts += 1
        completion = llm.complete(
            system,
            conversation,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        reply = completion.text
        try:
            value = extract_json(reply)
            return validate(value) if validate is not None else value
        except (ValueError, TypeError, KeyError) as exc:
            reason = str(exc) or type(exc).__name__
        if attempts > retries:
            raise StructuredOutputError(reason, reply=reply, attempts=attempts)
        log.info("%s: unusable JSON reply (%s), asking again", llm.name, reason)
        conversation += [
            Message.assistant(reply if reply.strip() else "(empty reply)"),
            Message.user(
                f"Your reply could not be used: {reason}\n{instruction or JSON_INSTRUCTION}"
            ),
        ]
