"""Chained questions: the embedded description answered first, its bridge put in its place."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from knotwork.domain.models import Citation, Entity, EntityType, Episode, QueryMode, QueryResult
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.chain import MAX_SEARCHES, answer_chain, bridge_of
from knotwork.retrieval.chain_plan import plan
from knotwork.retrieval.router import route

T0 = datetime(2025, 1, 1, tzinfo=UTC)
P, O, L, X = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION, EntityType.PRODUCT


# ---------------------------------------------------------------- the plan
@pytest.mark.parametrize(("question", "shape", "inner", "template"), [
    ("In which office is the release manager of OUT-77 based?", "role-of",
     "Who is the release manager of OUT-77?", "In which office is {} based?"),
    ("To which team does the acting owner of the Heron Rollout belong?", "role-of",
     "Who is the acting owner of the Heron Rollout?", "To which team does {} belong?"),
    ("In which office is the owner of the Quasar v2 refresh based?", "role-of",
     "Who is the owner of the Quasar v2 refresh?", "In which office is {} based?"),
    ("In which city does Quillo Foods's support engineer live?", "possessive-role",
     "Who is Quillo Foods's support engineer?", "In which city does {} live?"),
    ("Which team does Brightmoor's CFO belong to?", "possessive-role",
     "Who is Brightmoor's CFO?", "Which team does {} belong to?"),
    ("In which city is Build & Crate's lead based?", "possessive-role",
     "Who is Build & Crate's lead?", "In which city is {} based?"),
    ("Who drafted the Heron budget, and where is that person based?", "conjunction-anaphor",
     "Who drafted the Heron budget?", "Where is {} based?"),
    ("Which plugin shipped in Release 9, and which team maintains its installer?",
     "conjunction-anaphor", "Which plugin shipped in Release 9?",
     "Which team maintains {}'s installer?"),
    # relative clauses: an order word is kept, any kind of party may be described
    ("Who looks after the account of the first customer that signed up for Nimbus?",
     "relative-clause", "Which customer signed up for Nimbus, the first one?",
     "Who looks after the account of {}?"),
    ("Who is the contact at the vendor that hosts the Heron archive?", "relative-clause",
     "Which vendor hosts the Heron archive?", "Who is the contact at {}?"),
    ("Where is the person who leads Project Falcon based?", "relative-clause",
     "Who leads Project Falcon?", "Where is {} based?"),
    ("Who is the lead of the team that owns the Billing service?", "relative-clause",
     "Which team owns the Billing service?", "Who is the lead of {}?"),
    ("In which city does the lead of the team that owns Quarry work?", "relative-clause",
     "Which team owns Quarry?", "In which city does the lead of {} work?"),
    ("Which studio made the last product that the Atlas team ships?", "relative-clause",
     "Which product does the Atlas team ship, the last one?", "Which studio made {}?"),
    ("Who is the contact at the vendor whose demo won the Spring Jam?", "relative-clause",
     "Which vendor's demo won the Spring Jam?", "Who is the contact at {}?"),
    ("Where is the person whose team owns Quarry based?", "relative-clause",
     "Whose team owns Quarry?", "Where is {} based?"),
    # a chain of roles: the inner role is answered first
    ("Who is the manager of the lead of Project Falcon?", "role-of",
     "Who is the lead of Project Falcon?", "Who is the manager of {}?"),
])
def test_each_shape_finds_the_embedded_description(question: str, shape: str, inner: str,
                                                   template: str) -> None:
    found = plan(question)
    assert found is not None
    assert (found.shape, found.inner, found.template) == (shape, inner, template)


@pytest.mark.parametrize("question", [
    "Who is the manager of Pia Voss?",  # one hop: the description is the whole question
    "What is the name of Quillo Foods's support engineer?",  # the same
    "Who was Brightmoor's CFO before Pia Voss?",  # a time, not a chain
    "Which vendor replaced Graniteware as Quillo's hosting partner?",  # a complement
    "Who led the Heron team in 2023, and who leads it now?",  # "it" is the team, no answer
    "What was Heron's error rate on Monday, and what was it after the fix?",  # a number
    "Which office is Brightmoor's QA team in?",  # an acronym that is no role
    "What is the first step of the Heron rollout?",  # an order word without a clause
])
def test_no_chain_where_there_is_none(question: str) -> None:
    assert plan(question) is None


def test_a_chain_routes_to_local_search_but_a_conjunction_keeps_its_route() -> None:
    assert route("In which office is the release manager of OUT-77 based?").reason.startswith("a chain")
    conj = route("Who drafted the Heron budget, and where is that person based?", ["Heron"])
    assert conj.mode is QueryMode.DRIFT  # the engine tries the chain first, DRIFT if it fails


def test_a_conjunction_chain_outranks_a_corpus_cue_word() -> None:
    q = "Which plugin won best overall at the Release 9 fair, and who maintains its installer?"
    assert plan(q) is not None
    assert route(q).mode is QueryMode.DRIFT
    assert route("Which plugins won best overall across all releases?").mode is QueryMode.GLOBAL


# ---------------------------------------------------------------- the search
def ent(name: str, etype: EntityType, *aliases: str) -> Entity:
    keys = [normalize_name(n) for n in (name, *aliases)]
    return Entity(id=keys[0], group_id="g", name=name, canonical_name=keys[0], type=etype,
                  aliases=list(aliases), name_keys=keys, created_at=T0, updated_at=T0)


ENTS = [ent("Noor Haddad", P), ent("Tobias Wren", P), ent("Ilse Okafor", P, "CFO"),
        ent("Bergen", L), ent("Oslo", L), ent("OUT-77", X), ent("Heron Rollout", X),
        ent("Quillo Foods", O), ent("Brightmoor", O), ent("Beacon", X), ent("Forge", O)]


def result(answer: str, confidence: float = 0.8) -> QueryResult:
    return QueryResult(answer=answer, citations=[], confidence=confidence, mode_used=QueryMode.LOCAL)


class Search:
    """Answers from a table of question → evidence; anything else: nothing found."""

    min_answer_score = 0.3

    def __init__(self, answers: dict[str, str], pages: Sequence[Episode] = ()) -> None:
        self.answers = answers
        self.pages = list(pages)
        self.asked: list[str] = []

    def anchors(self, text: str) -> list[Entity]:
        return [e for words, e in self.named_in(text) if words[:1].isupper()]

    def episodes_mentioning(self, ids: Sequence[str], limit: int = 40) -> list[Episode]:
        return list(self.pages)

    def cite(self, evidence: Sequence[tuple[str, Sequence[str]]], limit: int) -> list[Citation]:
        return []

    def run(self, question: str, **_: object) -> QueryResult:
        self.asked.append(question)
        if question in self.answers:
            return result(self.answers[question])
        return result("I could not find support for this in the knowledge graph.", 0.1)

    def named_in(self, text: str) -> list[tuple[str, Entity]]:
        return names_in(ENTS, text)


def names_in(entities: Sequence[Entity], text: str) -> list[tuple[str, Entity]]:
    """The entities a text names (the first of each one's names found), longest name first."""
    low = text.lower()
    found = []
    for e in entities:
        for n in (e.name, *e.aliases):
            if n.lower() in low:
                found.append((n, e))
                break
    return sorted(found, key=lambda we: -len(we[0]))


def ask(search: Search, question: str) -> QueryResult | None:
    return answer_chain(search, question, as_of=None, max_context_tokens=2000)  # type: ignore[arg-type]


def test_role_of_bridge_is_the_person_next_to_the_role_words() -> None:
    search = Search({
        "Who is the release manager of OUT-77?":
            "OUT-77 · Author: Tobias Wren · Release manager: Noor Haddad · Severity 1.",
        "In which office is Noor Haddad based?": "Noor Haddad — Office: Bergen.",
        "In which office is Tobias Wren based?": "Tobias Wren — Office: Oslo."})
    found = ask(search, "In which office is the release manager of OUT-77 based?")
    assert found is not None and found.answer.startswith("Noor Haddad — Office: Bergen.")
    assert "Noor Haddad" in found.answer.split("—", 2)[-1]  # the bridge is named
    assert any("role-of" in line and "Noor Haddad" in line for line in found.reasoning_trace)
    assert search.asked == ["Who is the release manager of OUT-77?",
                            "In which office is Noor Haddad based?"]


def test_the_role_stated_near_the_anchor_wins() -> None:
    evidence = "From May Tobias Wren owns Ledgerworks and Noor Haddad owns the Heron Rollout."
    assert bridge_of(Search({}), evidence, "Who is the acting owner of the Heron Rollout?",  # type: ignore[arg-type]
                     "To which team does {} belong?", frozenset({P}), "acting owner").name == "Noor Haddad"


def test_a_role_the_graph_knows_as_an_alias_is_the_bridge() -> None:
    evidence = "Ilse Okafor — Title: CFO; Reports to: Tobias Wren."
    assert bridge_of(Search({}), evidence, "Who is Brightmoor's CFO?",  # type: ignore[arg-type]
                     "Who is the manager of {}?", frozenset({P}), "CFO").name == "Ilse Okafor"


def test_evidence_that_never_states_the_role_is_no_bridge() -> None:
    search = Search({"Who is the release manager of OUT-77?":
                     "OUT-77 was written up by Tobias Wren on Friday.",
                     "In which office is Tobias Wren based?": "Tobias Wren — Office: Oslo."})
    assert ask(search, "In which office is the release manager of OUT-77 based?") is None
    assert len(search.asked) == 1  # the outer question is never asked about a guess


def test_a_failed_second_hop_falls_back() -> None:
    search = Search({"Who is the release manager of OUT-77?": "Release manager: Noor Haddad."})
    assert ask(search, "In which office is the release manager of OUT-77 based?") is None


def test_conjunction_answers_both_parts_with_the_bridge_substituted() -> None:
    search = Search({
        "Who drafted the Heron budget?": "The Heron budget was drafted by Tobias Wren in May.",
        "Where is Tobias Wren based?": "Tobias Wren works from Bergen."})
    found = ask(search, "Who drafted the Heron budget, and where is that person based?")
    assert found is not None
    assert "drafted by Tobias Wren" in found.answer and "works from Bergen" in found.answer
    assert found.answer.index("drafted by") < found.answer.index("Bergen")


def test_conjunction_whose_first_answer_does_not_state_the_act_falls_back() -> None:
    search = Search({"Who drafted the Heron budget?": "Tobias Wren joined the Heron team.",
                     "Where is Tobias Wren based?": "Tobias Wren works from Bergen."})
    assert ask(search, "Who drafted the Heron budget, and where is that person based?") is None


def test_a_nested_second_part_stays_within_the_search_budget() -> None:
    search = Search({
        "Which plugin shipped with Release 9?": "Beacon shipped with Release 9.",
        "Who is Beacon's owner?": "Beacon — Owner: Noor Haddad.",
        "In which city is Noor Haddad based?": "Noor Haddad — Office: Bergen."})
    found = ask(search, "Which plugin shipped with Release 9, and in which city is its owner based?")
    assert found is not None and "Bergen" in found.answer and "Beacon" in found.answer
    assert len(search.asked) <= MAX_SEARCHES


def test_recognised_names_only() -> None:
    """No entity of the described kind in the evidence: no bridge."""
    search = Search({})
    assert bridge_of(search, "Nobody was named here.", "Who is the lead of Beacon?",  # type: ignore[arg-type]
                     "Where is {} based?", frozenset({P}), "lead") is None

