"""In-memory BM25: stemming, term filtering, ranking and score normalisation."""

from __future__ import annotations

import pytest

from knotwork.retrieval.lexical import (
    STOPWORDS,
    bm25_scores,
    bm25_with_context,
    stem,
    term_set,
    terms,
)


@pytest.mark.parametrize(
    ("words", "root"),
    [
        (("cause", "caused", "causes"), "caus"),
        (("use", "uses", "used", "using"), "us"),
        (("migration", "migrations"), "migr"),
        (("deploy", "deployed", "deploys", "deploying"), "deploy"),
    ],
)
def test_inflections_share_a_stem(words: tuple[str, ...], root: str) -> None:
    assert {stem(w) for w in words} == {root}


def test_stem_never_shrinks_below_two_characters() -> None:
    assert stem("is") == "is"  # stripping "s" would leave one letter
    assert stem("ed") == "ed"
    assert stem("bes") == "be"  # "es" would leave one letter, so only "s" goes
    for word in ("ies", "ing", "ers", "as", "es", "ly"):
        assert len(stem(word)) >= 2


def test_terms_lowercase_stem_and_drop_stopwords() -> None:
    assert terms("Who leads the Billing Service?") == ["lead", "bill", "servic"]
    assert terms("the of and is was") == []
    assert {"the", "and", "who", "what"} <= STOPWORDS


def test_more_query_terms_rank_higher() -> None:
    docs = [
        "Kafka is a message broker.",
        "The Billing Service depends on Kafka and PostgreSQL.",
        "PostgreSQL stores invoices.",
    ]
    scores = bm25_scores("billing service kafka postgresql", docs)
    assert scores[1] == max(scores)
    assert scores[1] > scores[0] and scores[1] > scores[2]
    assert scores[1] == pytest.approx(1.0)  # the top document covers every term


def test_unrelated_document_scores_zero() -> None:
    scores = bm25_scores("kafka outage", ["Kafka outage on Monday", "Lunch menu for Friday"])
    assert scores[0] > 0
    assert scores[1] == 0.0


def test_stemming_matches_inflected_forms() -> None:
    scores = bm25_scores("what caused the outages", ["The outage was caused by a bad deploy",
                                                     "Team offsite planning"])
    assert scores[0] > 0.9
    assert scores[1] == 0.0


def test_stopwords_do_not_contribute() -> None:
    docs = ["the the the of of and and is is was", "Billing Service runbook"]
    assert bm25_scores("the of and is", docs) == [0.0, 0.0]
    # a stopword-heavy document gains nothing from the stopwords in the query
    with_stop = bm25_scores("what is the billing service", docs)
    without = bm25_scores("billing service", docs)
    assert with_stop == pytest.approx(without)
    assert with_stop[0] == 0.0


def test_rare_terms_weigh_more_than_common_ones() -> None:
    docs = [
        "kafka cluster upgrade",
        "kafka consumer lag",
        "kafka topic retention",
        "zookeeper removal plan",
    ]
    scores = bm25_scores("kafka zookeeper", docs)
    # each document matches one term; the rare term wins the raw BM25 part
    assert scores[3] > scores[0]
    assert scores[0] == pytest.approx(scores[1]) == pytest.approx(scores[2])


def test_scores_are_normalised_to_unit_interval() -> None:
    docs = ["alpha beta gamma", "alpha", "delta", "beta beta beta gamma alpha"]
    scores = bm25_scores("alpha beta gamma", docs)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert max(scores) == pytest.approx(1.0)


def test_empty_inputs() -> None:
    assert bm25_scores("kafka", []) == []
    assert bm25_scores("", ["kafka"]) == [0.0]
    assert bm25_scores("kafka", ["", ""]) == [0.0, 0.0]


def test_scores_with_context_equal_scores_of_the_joined_texts() -> None:
    """Local search scores each unit alone and with its title/heading: computed from the
    memoised terms of each part, the scores are exactly those of the joined strings."""
    texts = ["Mara Voss leads Project Atlas.", "The Atlas launch slipped to May.", "",
             "Billing Service depends on Ledger Service.", "Who reports to Mara?"]
    contexts = ["Atlas kickoff notes", "", "Roadmap Launch dates", "Billing runbook", "Org chart"]
    question = "When is the Project Atlas launch?"
    plain, joined = bm25_with_context(question, texts, contexts)
    assert plain == bm25_scores(question, texts)
    assert joined == bm25_scores(question, [f"{t} {c}" for t, c in zip(texts, contexts, strict=True)])
    assert joined[2] > 0 == plain[2]  # only its heading names the launch
    assert term_set(*texts, *contexts) == set(terms(" ".join(texts + contexts)))


def test_irregular_verb_forms_meet_their_base_form() -> None:
    from knotwork.retrieval.lexical import terms

    assert terms("Why did they choose Kafka?")[:1] == terms("We chose Kafka.")[:1]
    assert set(terms("who led it")) == set(terms("who leads it"))
    assert set(terms("the service was written in Go")) >= set(terms("write"))
