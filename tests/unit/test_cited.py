"""The citation rule: a finished answer cites the evidence its text shows (retrieval/cited.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from knotwork.domain.models import Citation, QueryMode, QueryResult
from knotwork.retrieval.cited import BOUND_FROM_DOCUMENTS, TITLE_MARGIN, cite, shown
from knotwork.retrieval.global_search import NO_GLOBAL_ANSWER
from knotwork.retrieval.local import NO_ANSWER


def _citation(doc: str, evidence: str, chunk: str | None = None, title: str | None = None,
              text: str | None = None) -> Citation:
    c = Citation(document_id=doc, source_system="confluence", source_id=doc,
                 title=title or f"Page {doc}", chunk_id=chunk or f"{doc}-c", text=text or evidence)
    c._evidence = evidence
    return c


def _result(answer: str, citations: list[Citation]) -> QueryResult:
    return QueryResult(answer=answer, citations=citations, confidence=0.7,
                       mode_used=QueryMode.LOCAL)


def _no_relevance(titles: Sequence[str]) -> list[float]:
    raise AssertionError("the strength bound applies to many documents only")


def test_an_abstention_cites_nothing() -> None:
    for answer in (NO_ANSWER, NO_GLOBAL_ANSWER):
        out = cite(_result(answer, [_citation("d1", "The depot opened in May.")]), _no_relevance)
        assert out.citations == []
        assert out.answer == answer


def test_evidence_the_answer_does_not_show_is_not_cited() -> None:
    answer = "- The depot opened in May.\n- Mira Holt runs the depot."
    used = _citation("d1", "The depot opened in May.")
    left_out = _citation("d2", "The canteen serves soup on Fridays.")
    also_used = _citation("d3", "Mira Holt runs the depot.")
    out = cite(_result(answer, [used, left_out, also_used]), _no_relevance)
    assert [c.document_id for c in out.citations] == ["d1", "d3"]
    assert out.answer == answer


def test_a_fact_cites_its_sentence_not_the_chunk_opening() -> None:
    # the chunk does not hold the fact's sentence verbatim: the citation's text is the chunk's
    # opening, yet the evidence it stands for is the fact the answer shows
    fact = _citation("d1", "Mira Holt leads the depot team.", text="# Depot team home. Owners …")
    out = cite(_result("Mira Holt leads the depot team.", [fact]), _no_relevance)
    assert [c.document_id for c in out.citations] == ["d1"]


def test_shown_tolerates_a_spelled_out_acronym_and_a_clipped_tail() -> None:
    assert shown("Ravi led QA until March.", "Ravi led QA (quality assurance) until March.")
    assert shown("The night shift moved to the north hall in the spring of last year.",
                 "The night shift moved to the north hall in the spring …")
    assert not shown("The canteen serves soup on Fridays.", "The depot opened in May.")


def test_a_computed_answer_cites_every_counted_item() -> None:
    rows = [_citation("d1", "Ana Reyes — Office: Porto"), _citation("d2", "Li Wei — Office: Porto")]
    out = cite(_result("2 people (Porto): Ana Reyes, Li Wei.", rows), _no_relevance, computed=True)
    assert [c.document_id for c in out.citations] == ["d1", "d2"]


def test_an_answer_showing_none_of_its_evidence_keeps_it() -> None:
    cites = [_citation("d1", "The depot opened in May.")]
    out = cite(_result("Opened: spring.", cites), _no_relevance)
    assert [c.document_id for c in out.citations] == ["d1"]


def test_each_document_is_cited_once() -> None:
    answer = "The depot opened in May. Mira Holt runs the depot."
    cites = [_citation("d1", "The depot opened in May.", chunk="a"),
             _citation("d1", "Mira Holt runs the depot.", chunk="b")]
    out = cite(_result(answer, cites), _no_relevance)
    assert [c.chunk_id for c in out.citations] == ["a"]


def test_many_documents_are_bounded_by_title_relevance() -> None:
    sentences = [f"Point {w} about the depot rollout." for w in ("one", "two", "three", "four", "five")]
    cites = [_citation(f"d{i}", s, title=f"T{i}") for i, s in enumerate(sentences)]
    scores = {"T0": 0.2, "T1": 0.7, "T2": 0.3, "T3": 0.1, "T4": 0.7 - TITLE_MARGIN + 0.01}
    asked: list[Sequence[str]] = []

    def relevance(titles: Sequence[str]) -> list[float]:
        asked.append(list(titles))
        return [scores[t] for t in titles]

    out = cite(_result(" ".join(sentences), cites), relevance)
    assert asked == [["T0", "T1", "T2", "T3", "T4"]]
    # the three most relevant titles, and any other within the margin of the best, in
    # answer order
    assert [c.title for c in out.citations] == ["T1", "T2", "T4"]
    assert len(out.citations) >= BOUND_FROM_DOCUMENTS


@pytest.mark.parametrize("n", range(1, BOUND_FROM_DOCUMENTS + 1))
def test_few_documents_are_all_cited(n: int) -> None:
    sentences = [f"Fact number {i} about the depot." for i in range(n)]
    cites = [_citation(f"d{i}", s) for i, s in enumerate(sentences)]
    out = cite(_result(" ".join(sentences), cites), _no_relevance)
    assert len(out.citations) == n


def test_the_evidence_note_is_not_part_of_the_result() -> None:
    out = cite(_result("The depot opened in May.", [_citation("d1", "The depot opened in May.")]),
               _no_relevance)
    assert "_evidence" not in out.model_dump_json()
    assert out.citations[0]._evidence == ""  # a plain copy: equal to one read back from JSON
    assert QueryResult.model_validate_json(out.model_dump_json()) == out
