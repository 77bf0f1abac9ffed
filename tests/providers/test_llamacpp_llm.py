"""`llamacpp:PATH` specs: parsing and bad input everywhere; with a real GGUF model (set
SCHEMARAG_TEST_GGUF, or fetch one with benchmarks/fetch_local_model.py) repeatable replies,
token counts and timings, and `schemarag ask` end to end offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from providers import (
    ConfigurationError,
    LlamaCppLLM,
    Message,
    MissingDependencyError,
    make_llm,
    parse_llm_spec,
)
from providers.llamacpp_llm import MAX_DEFAULT_THREADS, default_threads
from schemarag.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
FETCHED = ROOT / ".schemarag/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def _model_path() -> Path | None:
    given = os.environ.get("SCHEMARAG_TEST_GGUF", "").strip()
    if given:
        return Path(given)
    return FETCHED if FETCHED.is_file() else None


def _xllamacpp_installed() -> bool:
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        return False
    return True


needs_xllamacpp = pytest.mark.skipif(
    not _xllamacpp_installed(), reason="xllamacpp is not installed: pip install 'schemarag[local]'"
)


def test_spec_keeps_the_path_whole():
    spec = parse_llm_spec("llamacpp:/models/a:b/qwen.gguf")

    assert spec.provider == "llamacpp"
    assert spec.model == "/models/a:b/qwen.gguf"


def test_spec_without_a_path_lists_the_valid_forms():
    with pytest.raises(ConfigurationError, match=r"llamacpp:PATH"):
        parse_llm_spec("llamacpp:")


def test_missing_file_names_the_path_and_the_fetch_script(tmp_path: Path):
    missing = tmp_path / "nope.gguf"

    with pytest.raises(ConfigurationError, match="not found") as raised:
        make_llm(f"llamacpp:{missing}")
    assert str(missing) in str(raised.value)
    assert "fetch_local_model.py" in str(raised.value)


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"PK\x03\x04 a zip, not a model")

    with pytest.raises(ConfigurationError, match="not a GGUF model"):
        make_llm(f"llamacpp:{fake}")


def test_without_xllamacpp_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(64))
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # import now raises ImportError

    with pytest.raises(MissingDependencyError, match=r"schemarag\[local\]"):
        LlamaCppLLM(model)


@needs_xllamacpp
def test_a_truncated_gguf_is_a_configuration_error(tmp_path: Path):
    model = tmp_path / "truncated.gguf"
    model.write_bytes(b"GGUF" + bytes(64))

    with pytest.raises(ConfigurationError, match="could not load"):
        LlamaCppLLM(model)


def test_bad_arguments_are_refused_before_loading(tmp_path: Path):
    with pytest.raises(ConfigurationError, match="threads"):
        LlamaCppLLM(tmp_path / "m.gguf", threads=0)
    with pytest.raises(ConfigurationError, match="n_ctx"):
        LlamaCppLLM(tmp_path / "m.gguf", n_ctx=16)


def test_default_threads_is_one_per_core_capped():
    assert default_threads() == min(len(os.sched_getaffinity(0)), MAX_DEFAULT_THREADS)


@pytest.mark.parametrize("value", ["0", "many", "-2"])
def test_thread_setting_must_be_a_positive_number(value: str):
    with pytest.raises(ConfigurationError, match="SCHEMARAG_LLAMACPP_THREADS"):
        Settings.from_env({"SCHEMARAG_LLAMACPP_THREADS": value})


def test_thread_setting_is_read_from_the_environment():
    assert Settings.from_env({"SCHEMARAG_LLAMACPP_THREADS": "3"}).llamacpp_threads == 3
    assert Settings.from_env({}).llamacpp_threads is None


def test_cli_ask_with_a_missing_model_exits_2_with_one_line(tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SCHEMARAG_LLM": f"llamacpp:{tmp_path}/x.gguf"}
    done = subprocess.run(
        [sys.executable, "-m", "schemarag", "ask", "How many singers?", "--db", "concert_singer"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "not found" in done.stderr and "Traceback" not in done.stderr


# -- with a real model ------------------------------------------------------------------------

MODEL = _model_path()
needs_model = pytest.mark.skipif(
    MODEL is None or not _xllamacpp_installed(),
    reason="no GGUF model: set SCHEMARAG_TEST_GGUF=PATH.gguf or run "
    "benchmarks/fetch_local_model.py, and pip install 'schemarag[local]'",
)
SYSTEM = "You write SQLite queries. Reply with one SQL query in a ```sql block."
QUESTION = [Message.user("Table singer(id, name, age). How many singers are older than 30?")]


@pytest.fixture(scope="module")
def llm() -> LlamaCppLLM:
    assert MODEL is not None
    return LlamaCppLLM(MODEL, threads=2, n_ctx=2048)


@needs_model
def test_greedy_replies_repeat_exactly_and_count_tokens(llm: LlamaCppLLM):
    first = llm.complete(SYSTEM, QUESTION, max_tokens=48)
    second = llm.complete(SYSTEM, QUESTION, max_tokens=48)

    assert first.text == second.text
    assert "select" in first.text.lower()
    assert first.usage.input_tokens > 20
    assert 0 < first.usage.output_tokens <= 48
    assert first.timings is not None and first.timings.generation_tokens_per_second > 0
    assert first.model == f"llamacpp:{MODEL.name}"  # type: ignore[union-attr]


@needs_model
def test_the_same_model_is_loaded_once(llm: LlamaCppLLM):
    again = LlamaCppLLM(llm.path, threads=2, n_ctx=2048, seed=7)  # the seed is per request

    assert again._server is llm._server


@needs_model
def test_seeded_sampling_repeats_per_seed_and_varies_across_seeds(llm: LlamaCppLLM):
    ask = [Message.user("Write one short made-up name for a singer.")]

    def draw(sample: int) -> str:
        return llm.complete("", ask, temperature=1.5, max_tokens=12, sample=sample).text

    assert draw(1) == draw(1)
    assert len({draw(sample) for sample in range(2, 6)}) > 1


@needs_model
def test_stop_sequences_end_the_reply(llm: LlamaCppLLM):
    reply = llm.complete(SYSTEM, QUESTION, max_tokens=64, stop=["FROM"])

    assert "FROM" not in reply.text.upper()
    assert reply.stop_reason == "stop"


@needs_model
def test_ask_runs_offline_with_the_local_model(tmp_path: Path):
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SCHEMARAG_LLM": f"llamacpp:{MODEL}",
        "SCHEMARAG_CACHE": str(tmp_path / "cache.sqlite"),
        "SCHEMARAG_LLAMACPP_THREADS": "2",
    }
    argv = ["ask", "How many singers are there?", "--db", "concert_singer", "--execute", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "schemarag", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert done.returncode == 0, done.stderr
    assert '"sql"' in done.stdout and "singer" in done.stdout.lower()
