"""Graph-level salience: passing phrases leave the graph, entities the evidence carries stay."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from knotwork.domain.models import Entity, EntityType
from knotwork.resolution.salience import (
    FEATURES,
    MIN_TENANT_DOCUMENTS,
    Evidence,
    features,
    keep_probability,
    passing,
    protected,
)

_NOW = datetime(2025, 1, 1, tzinfo=UTC)
_WORDS = frozenset({"goal", "reminder", "weekly", "sync", "office"})
P, O, L, C = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.LOCATION, EntityType.CONCEPT


def _e(name: str, etype: EntityType = O, aliases: tuple[str, ...] = (),
       subtype: str | None = None, merged: tuple[str, ...] = ()) -> Entity:
    return Entity(id=name, group_id="g", name=name, canonical_name=name.lower(), type=etype,
                  subtype=subtype, aliases=list(aliases), merged_from=list(merged),
                  created_at=_NOW, updated_at=_NOW)


def _ev(documents: int, votes: dict[str, int], typed: int = 0, untyped: int = 0) -> Evidence:
    return Evidence(documents=documents, mentions=sum(votes.values()), extractors=Counter(votes),
                    typed_facts=typed, untyped_facts=untyped)


def _is_word(w: str) -> bool:
    return w in _WORDS


def _passing(*pairs: tuple[Entity, Evidence], documents: int = 40) -> set[str]:
    return set(passing([e for e, _ in pairs], {e.id: ev for e, ev in pairs}, _is_word, documents))


def test_a_common_word_guessed_once_leaves_the_graph() -> None:
    goal = _e("Goal", P)
    assert _passing((goal, _ev(1, {"spacy": 1}))) == {"Goal"}


def test_a_name_several_documents_carry_stays() -> None:
    team = _e("Ledger Ops")
    assert _passing((team, _ev(2, {"spacy": 2}))) == set()
    assert protected(team, _ev(2, {"spacy": 2}))


def test_protected_ends_of_typed_relations_identities_and_identifiers() -> None:
    weak = _ev(1, {"spacy": 1})
    assert protected(_e("Weekly Sync"), _ev(1, {"spacy": 1}, typed=1))  # "works at …"
    assert protected(_e("Priya", P), _ev(1, {"speaker": 1}))  # wrote a message
    assert protected(_e("Acme Corp", aliases=("Acme",)), weak)  # an alias is identity evidence
    assert protected(_e("Orbit", merged=("x",)), weak)  # a twin was merged into it
    assert protected(_e("OPS-1432", C), weak)  # a ticket key
    assert not protected(_e("Reminder", P), weak)


def test_a_small_tenant_is_not_judged() -> None:
    goal = _e("Goal", P)
    assert _passing((goal, _ev(1, {"spacy": 1})), documents=MIN_TENANT_DOCUMENTS - 1) == set()


def test_features_read_evidence_and_name_shape() -> None:
    row = dict(zip(FEATURES, features(_e("Weekly Sync"), _ev(1, {"spacy": 1, "known": 2}), _is_word),
                   strict=True))
    assert row["no_fact"] == 1.0 and row["guess_only"] == 1.0 and row["echo_share_half"] == 1.0
    assert row["all_common_words"] == 1.0 and row["single_word"] == 0.0 and row["no_fact"] == 1.0
    strong = dict(zip(FEATURES, features(_e("Mosaic Platform"), _ev(3, {"rule": 3}, untyped=1),
                                         _is_word), strict=True))
    assert strong["rule_vote"] == 1.0 and strong["guess_only"] == 0.0 and strong["no_fact"] == 0.0


def test_a_rule_vote_and_an_uncommon_name_score_higher_than_a_guessed_phrase() -> None:
    once = keep_probability(features(_e("Weekly Sync"), _ev(1, {"spacy": 1}), _is_word))
    ruled = keep_probability(features(_e("Weekly Sync"), _ev(1, {"spacy": 1, "rule": 1}), _is_word))
    named = keep_probability(features(_e("Harbor Labs"), _ev(1, {"spacy": 1}), _is_word))
    assert ruled > once and named > once


def test_retired_names_stay_recognisable(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    from knotwork.domain.models import AuditEvent
    from knotwork.infra.sql.store import SqlDocumentStore
    from knotwork.resolution.salience import RETIRED, retired_names

    docs = SqlDocumentStore(f"sqlite:///{tmp_path / 's.db'}")
    docs.migrate()
    try:
        rt = SimpleNamespace(documents=docs)
        detail = ('{"reason": "salience", "name": "Harbor Labs", "type": "ORGANIZATION", '
                  '"subtype": null, "keys": ["harbor labs", "first:harbor"]}')
        docs.record_audit(AuditEvent(group_id="g", action=RETIRED, entity_id="e1", detail=detail))
        docs.record_audit(AuditEvent(group_id="g", action=RETIRED, entity_id="e2", detail="{}"))
        docs.record_audit(AuditEvent(group_id="other", action=RETIRED, entity_id="e3",
                                     detail=detail.replace("Harbor Labs", "Other Labs")))
        got = retired_names(rt, "g")  # type: ignore[arg-type]
        assert list(got) == ["harbor labs"]
        assert got["harbor labs"].name == "Harbor Labs" and got["harbor labs"].type is O
    finally:
        docs.close()
