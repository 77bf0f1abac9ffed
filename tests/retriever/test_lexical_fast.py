"""The indexed lexical signals and the memoized few-shot selection give exactly what the plain
definitions give: rank-bm25's `get_scores`, every table name and n-gram checked, every candidate
skeleton recomputed and compared with difflib."""

from __future__ import annotations

import math
import re
from difflib import SequenceMatcher
from itertools import pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from retriever.examples import select_examples
from retriever.knowledge import QuestionHit
from retriever.lexical import MAX_VALUE_WORDS, SchemaLinker, TableBM25
from retriever.lexical import _indexable as indexable
from retriever.result import Example
from retriever.tables import TableEntry
from retriever.text import STOPWORDS, normalize_value, skeleton, stem, terms, words

# words `terms` keeps as they are, so corpora and queries share them ("alpha beta" in a query
# is also the corpus word "alphabeta")
VOCABULARY = ("alpha", "beta", "gamma", "delta", "zeta", "omega", "alphabeta")


def reference_joined(question: str, vocabulary: set[str]) -> list[str]:
    """Every pair of adjacent question words of 3 letters or more, not stopwords, joined."""
    tokens = words(question)
    pairs = [(a, b) for a, b in pairwise(tokens) if len(a) > 2 and len(b) > 2]
    joined = [stem(a + b) for a, b in pairs if a not in STOPWORDS and b not in STOPWORDS]
    return [t for t in joined if t in vocabulary]


def reference_bm25(entries: list[TableEntry], question: str) -> np.ndarray:
    corpus = [terms(e.text) or ["_"] for e in entries]
    bm25 = BM25Okapi(corpus)
    query = terms(question) + reference_joined(question, {t for doc in corpus for t in doc})
    return np.asarray(bm25.get_scores(query)) if query else np.zeros(len(entries))


def test_bm25_equals_rank_bm25_with_repeats_unknown_terms_and_the_idf_floor() -> None:
    entries = [
        TableEntry("d", "t1", "alpha beta beta"),
        TableEntry("d", "t2", "alpha gamma"),
        TableEntry("d", "t3", "alpha delta delta delta"),
        TableEntry("d", "t4", ""),
    ]
    bm25 = TableBM25(entries)
    # "alpha" is in 3 of 4 documents: a negative idf that rank-bm25 floors at eps * mean idf
    for question in ["alpha", "beta beta gamma", "kappa", "alpha kappa delta alpha", "", "the"]:
        np.testing.assert_allclose(
            bm25.scores(question), reference_bm25(entries, question), rtol=0, atol=1e-9
        )
    once, twice = bm25.scores("gamma"), bm25.scores("gamma gamma")
    assert twice[1] == 2 * once[1] > 0  # a repeated query term counts once per occurrence
    assert not bm25.scores("kappa").any()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(VOCABULARY), max_size=8), min_size=1, max_size=8),
    st.lists(st.sampled_from((*VOCABULARY, "kappa", "sigma", "the")), max_size=8),
)
def test_bm25_equals_rank_bm25_on_random_corpora(
    documents: list[list[str]], query: list[str]
) -> None:
    entries = [TableEntry("d", f"t{i}", " ".join(doc)) for i, doc in enumerate(documents)]
    question = " ".join(query)
    np.testing.assert_allclose(
        TableBM25(entries).scores(question), reference_bm25(entries, question), rtol=0, atol=1e-9
    )


LINK_ENTRIES = [
    TableEntry(
        "music",
        "singer_in_concert",
        "",
        columns=("singer_id",),
        values={"role": ("Lead singer", "Lead singer")},
    ),
    TableEntry(
        "music",
        "concert",
        "",
        columns=("venue", "city"),
        values={"venue": ("New York", "New York City Hall"), "city": ("New York", "York")},
    ),
    TableEntry("music", "singer", "", columns=("name",), values={"name": ("Ann Lee",)}),
    TableEntry(
        "travel",
        "flight",
        "",
        columns=("destination",),
        values={"destination": ("New York", "York City", "a b c d e", "a b c d e f", "no", "12")},
    ),
    TableEntry("travel", "", "", columns=("x",)),
]


def reference_names(linker: SchemaLinker, entries: list[TableEntry], question: str) -> np.ndarray:
    """Every table name checked against the question's terms and joined word pairs."""
    vocabulary = {t for e in entries for name in (e.table, *e.columns) for t in terms(name)}
    qterms = set(terms(question) + reference_joined(question, vocabulary))
    names = np.zeros(len(entries))
    for i, entry in enumerate(entries):
        name = tuple(dict.fromkeys(terms(entry.table)))
        if name and all(t in qterms for t in name):
            names[i] = sum(linker.idf(t) for t in name)
    return names


def reference_value_matches(entries: list[TableEntry], question: str) -> list[tuple[str, int, str]]:
    """Every n-gram of the question tried, the longest first, then the leftmost; a value
    counted once per entry, with the first column holding it; a span starts and ends with a
    written word (`camelCase` splits a word into tokens, not into words)."""
    tokens = words(question)
    edges, at = {0}, 0
    for written in re.findall(r"[^\W_]+", question):
        at += len(words(written))
        edges.add(at)
    used = [False] * len(tokens)
    spans = [
        (start, end)
        for start in range(len(tokens))
        for end in range(start + 1, min(len(tokens), start + MAX_VALUE_WORDS) + 1)
        if start in edges and end in edges
    ]
    out: list[tuple[str, int, str]] = []
    for start, end in sorted(spans, key=lambda s: (s[0] - s[1], s[0])):
        gram = " ".join(tokens[start:end])
        holders = [
            (i, column)
            for i, entry in enumerate(entries)
            for column, values in entry.values.items()
            if gram in {normalize_value(v) for v in values}
        ]
        if any(used[start:end]) or not holders or not indexable(gram):
            continue
        used[start:end] = [True] * (end - start)
        first = {i: column for i, column in reversed(holders)}
        out += [(gram, i, first[i]) for i in dict.fromkeys(i for i, _ in holders)]
    return out


def test_names_link_tables_whose_every_name_term_is_in_the_question() -> None:
    linker = SchemaLinker(LINK_ENTRIES)
    links = linker.link("Which singers sang in a concert?")
    assert links.names[0] == linker.idf("singer") + linker.idf("concert")
    assert links.names[1] == linker.idf("concert") and links.names[2] == linker.idf("singer")
    assert not links.names[3:].any()
    assert not linker.link("Which singers?").names[[0, 1]].any()


def test_words_a_schema_writes_as_one_match_the_question_written_apart() -> None:
    entries = [
        TableEntry("school", "Highschooler", "highschooler name grade", columns=("name",)),
        TableEntry("market", "prices", "prices high low", columns=("high", "low")),
        TableEntry("market", "trades", "trades volume", columns=("volume",)),
    ]
    question = "How many high schoolers are there?"
    bm25 = TableBM25(entries).scores(question)
    assert bm25[0] > 0 and bm25[1] > 0  # and "high" alone still matches the prices
    assert SchemaLinker(entries).link(question).names[0] > 0
    assert not TableBM25(entries).scores("How many schoolers are high?")[0]  # not adjacent


def test_values_take_the_longest_then_leftmost_match_once_per_entry() -> None:
    linker = SchemaLinker(LINK_ENTRIES)
    links = linker.link("From New York City Hall to York, then New York: A B C D E F no 12")
    found = [(m.text, m.entry, m.column) for m in links.value_matches]
    assert found == [
        ("a b c d e", 3, "destination"),  # five words at most: "a b c d e f" is not indexed
        ("new york city hall", 1, "venue"),
        ("new york", 1, "venue"),
        ("new york", 3, "destination"),
        ("york", 1, "city"),
    ]
    weight = {m.text: m.weight for m in links.value_matches}
    assert weight["new york"] == math.log(1 + 2 / 2) * math.sqrt(2)
    assert weight["york"] == math.log(1 + 2 / 1)
    assert links.values[1] == weight["new york city hall"] + weight["new york"] + weight["york"]
    assert links.values[3] == weight["a b c d e"] + weight["new york"]
    overlapping = linker.link("new york city").value_matches  # "york city": same length, later
    assert [(m.text, m.entry) for m in overlapping] == [("new york", 1), ("new york", 3)]
    rare_pair = math.log(1 + 2 / 1) * math.sqrt(2)
    assert linker.link("The lead singer: Ann Lee").values.tolist() == [
        rare_pair,
        0,
        rare_pair,
        0,
        0,
    ]


def test_a_value_matches_whole_written_words_only() -> None:
    entries = [
        TableEntry("code", "repositories", "", columns=("scm",), values={"scm": ("git",)}),
        TableEntry("code", "hosts", "", columns=("host",), values={"host": ("GitHub",)}),
    ]
    linker = SchemaLinker(entries)
    found = linker.link("Which GitHub repositories use git?").value_matches
    assert [(m.text, m.entry) for m in found] == [("git hub", 1), ("git", 0)]
    assert [m.entry for m in linker.link("Which GitHub repositories?").value_matches] == [1]
    assert not linker.link("Which GitHubRepos?").value_matches  # "GitHub" inside a word


QUESTION_WORDS = (
    "new", "york", "city", "hall", "lead", "singer", "singers", "concert", "in", "ann", "lee",
    "a", "b", "c", "d", "e", "f", "to", "no", "12", "NewYork", "LeadSinger", "CityHall",
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(QUESTION_WORDS), max_size=14))
def test_linking_equals_checking_every_name_and_ngram(question_words: list[str]) -> None:
    linker = SchemaLinker(LINK_ENTRIES)
    question = " ".join(question_words)
    links = linker.link(question)
    np.testing.assert_array_equal(links.names, reference_names(linker, LINK_ENTRIES, question))
    matches = [(m.text, m.entry, m.column) for m in links.value_matches]
    assert matches == reference_value_matches(LINK_ENTRIES, question)
    values = np.zeros(len(LINK_ENTRIES))
    for m in links.value_matches:
        values[m.entry] += m.weight
    np.testing.assert_array_equal(links.values, values)


def reference_skeleton(question: str, schema_words: set[str], values: set[str]) -> str:
    """Every 1..4-gram looked up in `values`."""
    tokens = words(re.sub(r"\"[^\"]*\"|'[^']*'|“[^”]*”", " _ ", question))
    masked = [False] * len(tokens)
    for n in range(1, 5):
        for start in range(len(tokens) - n + 1):
            if " ".join(tokens[start : start + n]) in values:
                masked[start : start + n] = [True] * n
    out: list[str] = []
    for token, hidden in zip(tokens, masked, strict=True):
        number = re.fullmatch(r"\d+", token)
        if hidden or number or token in schema_words or stem(token) in schema_words:
            if not out or out[-1] != "_":
                out.append("_")
        else:
            out.append(token)
    return " ".join(out)


def reference_examples(
    question: str, candidates: list[QuestionHit], schema: set[str], values: set[str], count: int
) -> list[Example]:
    """Every candidate's skeleton computed and compared with difflib's full ratio."""
    if count <= 0 or not candidates:
        return []
    target = skeleton(question, schema, values).split()
    scored: list[Example] = []
    seen: set[str] = set()
    for hit in candidates:
        if hit.question in seen:
            continue
        seen.add(hit.question)
        shape = skeleton(hit.question, schema, values)
        ratio = SequenceMatcher(None, target, shape.split(), autojunk=False).ratio()
        similarity = round(0.6 * ratio + 0.4 * hit.score, 4)
        scored.append(Example(hit.question, hit.sql, hit.db_id, hit.tables, similarity, shape))
    scored.sort(key=lambda e: -e.similarity)
    return scored[:count]


SHAPE_WORDS = (
    "how", "many", "pets", "pet", "are", "older", "than", "3", "7.5", "new", "york", "name",
    "the", "'Blue Note'", "of", "show", "city", "a", "b", "c", "d", "e",
)  # fmt: skip
SCHEMA = {"pet", "pets", "name"}
VALUES = {"new york", "york", "blue", "a b c d", "a b c d e"}


def test_skeleton_masks_values_of_up_to_four_words() -> None:
    assert skeleton("a b c d e f", set(), VALUES) == "_ e f"
    assert skeleton("pets of new york city", SCHEMA, VALUES) == "_ of _ city"
    assert skeleton("pets of new york city", SCHEMA) == "_ of new york city"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SHAPE_WORDS), max_size=12))
def test_skeleton_equals_looking_up_every_ngram(question_words: list[str]) -> None:
    question = " ".join(question_words)
    assert skeleton(question, SCHEMA, VALUES) == reference_skeleton(question, SCHEMA, VALUES)
    assert skeleton(question, SCHEMA) == reference_skeleton(question, SCHEMA, set())


def test_candidate_skeletons_are_remembered_per_database() -> None:
    """The memo must tell databases apart: the same question masks differently in each."""
    hits = [QuestionHit(0.5, "d", (), "How many pets are older than 3?", "")]
    pets = select_examples("How many pets?", hits, frozenset({"pet"}), frozenset(), 1)
    ages = select_examples("How many pets?", hits, frozenset({"older"}), frozenset(), 1)
    assert pets[0].skeleton == "how many _ are older than _"
    assert ages[0].skeleton == "how many pets are _ than _"
    for _ in range(2):
        assert select_examples("How many pets?", hits, {"pet"}, (), 1) == pets


def test_a_later_candidate_wins_by_a_ratio_close_to_its_bound() -> None:
    """The second candidate's similarity (0.8) tops the first's (0.7538) by less than a loose
    bound on its ratio would allow: skipping it must rest on a true upper bound."""
    hits = [
        QuestionHit(0.5, "d", (), "How many are older than 3", ""),
        QuestionHit(0.5, "d", (), "How many pets are older than 7.5?", ""),
    ]
    chosen = select_examples("How many pets are older than 3?", hits, {"pet"}, (), 1)
    assert [(e.question, e.similarity) for e in chosen] == [(hits[1].question, 0.8)]


# near-identical questions, so that skeletons often match closely or exactly, and random ones
NEAR = (
    "How many pets are older than 3?",
    "How many pets are older than 7.5?",
    "How many pets are there?",
    "How many are older than 3",
    "Show the name of New York pets",
    "show the name of the pets",
    "",
)
question_texts = st.one_of(
    st.sampled_from(NEAR), st.lists(st.sampled_from(SHAPE_WORDS), max_size=10).map(" ".join)
)
candidate_lists = st.lists(
    st.builds(
        lambda text, score: QuestionHit(score, "d", ("t",), text, "SELECT 1"),
        question_texts,
        st.sampled_from((0.0, 0.3, 0.5, 0.5, 0.8, 0.91234567)),
    ),
    max_size=12,
)


@settings(max_examples=500, deadline=None)
@given(question_texts, candidate_lists, st.integers(-1, 5))
def test_examples_equal_scoring_every_candidate_in_full(
    question: str, candidates: list[QuestionHit], count: int
) -> None:
    chosen = select_examples(question, candidates, frozenset(SCHEMA), frozenset(VALUES), count)
    assert chosen == reference_examples(question, candidates, SCHEMA, VALUES, count)
