"""Each hop of a chain verified: a first hop read from a labelled line about the anchor, the
bridges a plural anaphor stands for, a nested first part's own bridge set aside, the act
found in the evidence lines, and no chain planned for "the <thing> of X"."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from knotwork.domain.models import Citation, Entity, EntityType, Episode, QueryMode, QueryResult
from knotwork.resolution.normalize import normalize_name
from knotwork.retrieval.chain import answer_chain
from knotwork.retrieval.chain_plan import plan
from knotwork.retrieval.field_hop import WORDS_LABEL, AskedRole, asked_role, field_bridges
from knotwork.retrieval.multihop import decompose
from tests.unit.test_chain import names_in

T0 = datetime(2025, 1, 1, tzinfo=UTC)
P, O, L, X = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION, EntityType.PRODUCT
NO = "I could not find support for this in the knowledge graph."


def ent(name: str, etype: EntityType, *aliases: str) -> Entity:
    keys = [normalize_name(n) for n in (name, *aliases)]
    return Entity(id=keys[0], group_id="g", name=name, canonical_name=keys[0], type=etype,
                  aliases=list(aliases), name_keys=keys, created_at=T0, updated_at=T0)


ENTS = [ent("Noor Haddad", P, "N. Haddad"), ent("Tobias Wren", P), ent("Ilse Okafor", P),
        ent("Pia Voss", P), ent("Bergen", L), ent("Oslo", L), ent("Heron Rollout", X),
        ent("Forge", O), ent("Quillo Foods", O), ent("Brightmoor", O), ent("Beacon", X),
        ent("Spring Jam", EntityType.EVENT)]


def page(title: str, body: str, n: int = 0) -> Episode:
    return Episode(id=f"ep{n}", group_id="g", name=title, content=f"# {title}\n\n{body}",
                   document_id=f"d{n}", valid_at=T0, created_at=T0)


def named_in(text: str) -> list[tuple[str, Entity]]:
    return names_in(ENTS, text)


class Search:
    """Answers from a table of question → evidence (and its context); the pages are what
    mentions any anchor."""

    min_answer_score = 0.3

    def __init__(self, answers: dict[str, str | tuple[str, str]], pages: Sequence[Episode] = ()
                 ) -> None:
        self.answers = answers
        self.pages = list(pages)
        self.asked: list[str] = []

    def run(self, question: str, **_: object) -> QueryResult:
        self.asked.append(question)
        found = self.answers.get(question)
        if found is None:
            return QueryResult(answer=NO, citations=[], confidence=0.1, mode_used=QueryMode.LOCAL)
        answer, context = found if isinstance(found, tuple) else (found, "")
        return QueryResult(answer=answer, citations=[], confidence=0.8,
                           mode_used=QueryMode.LOCAL, context=context)

    def named_in(self, text: str) -> list[tuple[str, Entity]]:
        return named_in(text)

    def anchors(self, text: str) -> list[Entity]:
        return [e for words, e in named_in(text) if words[:1].isupper()]

    def episodes_mentioning(self, ids: Sequence[str], limit: int = 40) -> list[Episode]:
        return list(self.pages)

    def cite(self, evidence: Sequence[tuple[str, Sequence[str]]], limit: int) -> list[Citation]:
        return []


def ask(search: Search, question: str) -> QueryResult | None:
    return answer_chain(search, question, as_of=None, max_context_tokens=2000)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the asked role
@pytest.mark.parametrize(("inner", "role", "expected"), [
    ("Who owned the Heron Rollout?", None, AskedRole("owner")),
    ("Who wrote the postmortem for the outage?", None, AskedRole("author", (), "postmortem")),
    ("Which team leads Beacon?", None, AskedRole("lead")),
    ("Who is the current lead of Beacon?", "current lead", AskedRole("lead")),
    ("Who is Quillo Foods's account manager?", "account manager",
     AskedRole("manager", ("account",))),
    ("Who joined the Heron Rollout?", None, None),  # no role is asked
])
def test_the_role_a_first_hop_asks_for(inner: str, role: str | None,
                                       expected: AskedRole | None) -> None:
    assert asked_role(inner, role) == expected


# ---------------------------------------------------------------- labelled lines
def bridges(inner: str, role: AskedRole, anchor: str, pages: Sequence[Episode],
            kinds: frozenset[EntityType] | None = frozenset({P})) -> list[str]:
    anchors = [e for e in ENTS if e.name == anchor]
    hit = field_bridges(inner, role, anchors, pages, kinds, named_in)
    return [] if hit is None else [e.name for e in hit.bridges]


def test_a_header_line_under_the_anchors_title_names_the_bridge() -> None:
    pages = [page("Heron Rollout — Plan", "DONE\n\nOwner: N. Haddad\nApprover: Tobias Wren\n\n"
                  "## Why\n\nPia Voss asked for it.")]
    assert bridges("Who owned the Heron Rollout?", AskedRole("owner"), "Heron Rollout",
                   pages) == ["Noor Haddad"]
    assert bridges("Who approved the Heron Rollout?", AskedRole("approver"), "Heron Rollout",
                   pages) == ["Tobias Wren"]


def test_a_table_row_speaks_for_its_first_cell_only() -> None:
    pages = [page("Teams", "Unit: Brightmoor; Lead: Noor Haddad; Covers: Forge tooling\n"
                  "Team: Forge; Lead: Tobias Wren; Office: Oslo")]
    assert bridges("Who is the lead of Forge?", AskedRole("lead"), "Forge", pages) == ["Tobias Wren"]


def test_a_label_with_words_the_question_does_not_use_is_another_role() -> None:
    pages = [page("Forge", "Technical owner: Pia Voss\n\n## Notes\n\nRelationship owner: Noor Haddad")]
    assert bridges("Who owns the relationship with Forge?", AskedRole("owner"), "Forge",
                   pages) == ["Noor Haddad"]
    pages = [page("Forge", "Technical owner: Pia Voss")]
    assert bridges("Who owns Forge?", AskedRole("owner"), "Forge", pages) == []


def test_a_label_naming_more_of_the_question_wins() -> None:
    pages = [page("Sprint review", "Stream: Beacon; Owner: Pia Voss; Status: EARLY", 1),
             page("Beacon — Status", "## Overview\n\nCertification owner: Ilse Okafor", 2)]
    assert bridges("Who owns Beacon's certification submissions?", AskedRole("owner"), "Beacon",
                   pages) == ["Ilse Okafor"]


def test_a_people_row_whose_role_cell_holds_the_role() -> None:
    pages = [page("Quillo Foods — Team Page",
                  "## People\n\nName: Pia Voss; Role: Data analyst; Office: Oslo\n"
                  "Name: Tobias Wren; Role: Support engineer; Office: Bergen")]
    role = asked_role("Who is Quillo Foods's support engineer?", "support engineer")
    assert role is not None
    assert bridges("Who is Quillo Foods's support engineer?", role, "Quillo Foods",
                   pages) == ["Tobias Wren"]


def test_a_page_about_something_else_names_no_bridge() -> None:
    pages = [page("Oslo office", "Owner: Noor Haddad\n\nThe Heron Rollout moved here.")]
    assert bridges("Who owned the Heron Rollout?", AskedRole("owner"), "Heron Rollout", pages) == []


def test_the_thing_the_act_is_on_titles_the_page() -> None:
    pages = [page("Postmortem: INC-9 — payouts late",
                  "Severity: SEV-2 · Incident commander: Pia Voss · Author: Tobias Wren\n\n"
                  "Beacon rotated its key.")]
    role = asked_role("Who wrote the postmortem for the outage Beacon triggered?", None)
    assert role is not None
    assert bridges("Who wrote the postmortem for the outage Beacon triggered?", role, "Beacon",
                   pages) == ["Tobias Wren"]


# ---------------------------------------------------------------- the chain
def test_a_labelled_first_hop_replaces_a_sentence_that_names_no_one() -> None:
    search = Search({"Who owned the Heron Rollout?": "The Heron Rollout finished in March.",
                     "Who is Noor Haddad's manager?": "Noor Haddad — Reports to: Ilse Okafor."},
                    [page("Heron Rollout — Plan", "Owner: N. Haddad\n\n## Why\n\nBecause.")])
    found = ask(search, "Who owned the Heron Rollout, and who is that person's manager?")
    assert found is not None and "Owner: N. Haddad" in found.answer and "Ilse Okafor" in found.answer
    assert search.asked == ["Who is Noor Haddad's manager?"]  # hop 1 was read, not searched
    assert any("labelled line 'Owner'" in line for line in found.reasoning_trace)


def test_a_plural_anaphor_asks_about_every_bridge() -> None:
    search = Search({
        "Who approved the Heron budget?": "The Heron budget was approved by Noor Haddad and Pia Voss.",
        "What are Noor Haddad's roles?": "Noor Haddad — Role: Finance lead.",
        "What are Pia Voss's roles?": "Pia Voss — Role: Chief executive."})
    found = ask(search, "Who approved the Heron budget, and what are their roles?")
    assert found is not None and "Finance lead" in found.answer and "Chief executive" in found.answer
    assert found.answer.startswith("Noor Haddad and Pia Voss")
    one = Search({"Who approved the Heron budget?": "The Heron budget was approved by Noor Haddad.",
                  "Where is Noor Haddad based?": "Noor Haddad works from Oslo."})
    assert ask(one, "Who approved the Heron budget, and where is that person based?") is not None
    assert one.asked == ["Who approved the Heron budget?", "Where is Noor Haddad based?"]


def test_a_nested_first_part_gives_its_answer_not_its_bridge() -> None:
    search = Search({
        "Who is Quillo Foods's support engineer?": "Support engineer: Tobias Wren.",
        "Who does Tobias Wren report to?": "Tobias Wren — Reports to: Pia Voss.",
        "In which city does Pia Voss work?": "Pia Voss — Office: Bergen.",
        "In which city does Tobias Wren work?": "Tobias Wren — Office: Oslo."})
    found = ask(search, "Who does Quillo Foods's support engineer report to, and in which city "
                        "does that manager work?")
    assert found is not None and "Bergen" in found.answer and "Oslo" not in found.answer


def test_the_act_stated_in_a_context_line_about_the_bridge_verifies_it() -> None:
    answers: dict[str, str | tuple[str, str]] = {
        "Who owns the relationship with Forge?": (
            "Forge vendor switch — Noor Haddad (Art director).",
            "Forge vendor switch — Noor Haddad (Art director).\nRelationship owner: Noor Haddad"),
        "Which office is Noor Haddad in?": "Noor Haddad — Office: Bergen."}
    found = ask(Search(answers), "Who owns the relationship with Forge, and which office is "
                                 "that person in?")
    assert found is not None and "Bergen" in found.answer
    answers["Who owns the relationship with Forge?"] = (
        "Forge vendor switch — Noor Haddad (Art director).", "Pia Voss owns the Oslo desk.")
    assert ask(Search(answers), "Who owns the relationship with Forge, and which office is "
                                "that person in?") is None


# ---------------------------------------------------------------- the plans
@pytest.mark.parametrize("question", [
    "Who wrote RFC-12, the design for Beacon?",  # a thing described, not who holds a role
    "What were the two findings of Brightmoor's audit of the Forge vault?",
    "Which agency delivered the icon set for Release 9?",
])
def test_no_chain_through_the_thing_of_x(question: str) -> None:
    found = plan(question)
    assert found is None or "Who is the" not in found.inner


def test_a_clause_about_any_described_thing() -> None:
    found = decompose("Who is the lead of the game whose trailer won the Spring Jam?")
    assert found is not None
    assert (found.inner, found.template) == ("Which game's trailer won the Spring Jam?",
                                             "Who is the lead of {}?")


def test_a_label_of_the_questions_own_words_names_the_bridge() -> None:
    pages = [page("Spring Jam 2024 — recap", "Everyone came.\n\n## Winners\n\n"
                  "Best overall: Beacon — Pia Voss and Tobias Wren.\nJury: Noor Haddad")]
    jam = ent("Spring Jam 2024", X)
    hit = field_bridges("Which app won best overall at Spring Jam 2024?", WORDS_LABEL, [jam],
                        pages, frozenset({X}), named_in)
    assert hit is not None and [e.name for e in hit.bridges] == ["Beacon"]
    one_word = [page("Spring Jam 2024 — recap", "Jury: Noor Haddad")]
    assert field_bridges("Who was on the jury of Spring Jam 2024?", WORDS_LABEL, [jam],
                         one_word, frozenset({P}), named_in) is None  # one word says too little


def test_a_described_thing_of_a_known_kind_is_the_one_the_evidence_names() -> None:
    """"the game whose trailer won X": the game step 1's evidence names is asked about
    before one a neighbouring fact of the evidence leads to."""
    from knotwork.domain.models import Fact, RelationType
    from knotwork.retrieval.multihop import multi_hop

    near = Fact(id="f1", group_id="g", source_id="spring jam", target_id="heron rollout",
                type=RelationType.RELATED_TO, fact="The Heron Rollout demo ran at the Spring Jam.",
                created_at=T0)

    class Facts(Search):
        def run(self, question: str, **kw: object) -> QueryResult:
            found = super().run(question, **kw)
            return found.model_copy(update={"facts": [near]}) if "trailer" in question else found

        def entities(self, ids: Sequence[str]) -> list[Entity]:
            return [e for e in ENTS if e.id in ids]

    search = Facts({"Which game's trailer won the Spring Jam?":
                    "The Spring Jam jury loved the Beacon trailer.",
                    "Who is the lead of Beacon?": "Beacon — Lead: Pia Voss.",
                    "Who is the lead of Heron Rollout?": "Heron Rollout — Lead: Noor Haddad."})
    found = multi_hop(search, "Who is the lead of the game whose trailer won the Spring Jam?",  # type: ignore[arg-type]
                      as_of=None, max_context_tokens=2000)
    assert found is not None and "Pia Voss" in found.answer
    assert search.asked[1] == "Who is the lead of Beacon?"
