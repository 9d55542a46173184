"""Map what an LLM calls a type or relation onto Knotwork's fixed taxonomy (or drop it)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from knotwork.domain.models import EntityType, RelationType

E, R = EntityType, RelationType

ENTITY_SYNONYMS: Mapping[str, EntityType] = {
    **{k: E.PERSON for k in ("PER", "PERSON", "PEOPLE", "USER", "EMPLOYEE", "INDIVIDUAL",
                             "HUMAN", "CONTACT")},
    **{k: E.ORGANIZATION for k in ("ORG", "COMPANY", "TEAM", "DEPARTMENT", "GROUP", "SQUAD",
                                   "DIVISION", "BUSINESS", "VENDOR", "CUSTOMER", "AGENCY",
                                   "INSTITUTION", "CORPORATION", "UNIT")},
    **{k: E.LOCATION for k in ("LOC", "GPE", "PLACE", "CITY", "COUNTRY", "REGION", "OFFICE",
                               "SITE", "ADDRESS", "FAC", "FACILITY")},
    **{k: E.PRODUCT for k in ("PROJECT", "SERVICE", "SYSTEM", "APP", "APPLICATION", "PROGRAM",
                              "PROGRAMME", "INITIATIVE", "FEATURE", "MODULE", "COMPONENT")},
    **{k: E.TECHNOLOGY for k in ("TECH", "LANGUAGE", "PROGRAMMING_LANGUAGE", "FRAMEWORK",
                                 "LIBRARY", "DATABASE", "TOOL", "SOFTWARE", "PLATFORM",
                                 "INFRASTRUCTURE", "PROTOCOL", "API")},
    **{k: E.EVENT for k in ("MEETING", "INCIDENT", "RELEASE", "LAUNCH", "OUTAGE", "MILESTONE",
                            "CONFERENCE", "DEADLINE", "SPRINT")},
    **{k: E.CONCEPT for k in ("TOPIC", "IDEA", "POLICY", "METHOD", "METHODOLOGY", "PROCESS",
                              "STANDARD", "METRIC", "SKILL", "DOMAIN", "FIELD", "THEME")},
}

# relation name -> (type, reversed): "LED_BY" is LEADS from the target to the source
RELATION_SYNONYMS: Mapping[str, tuple[RelationType, bool]] = {
    **{k: (R.WORKS_AT, False) for k in ("WORKS_FOR", "EMPLOYED_BY", "EMPLOYED_AT", "WORKS_IN",
                                        "JOINED", "EMPLOYEE_OF")},
    **{k: (R.REPORTS_TO, False) for k in ("REPORTS", "REPORTS_INTO")},
    **{k: (R.MANAGES, False) for k in ("MANAGER_OF", "MANAGE", "SUPERVISES", "OVERSEES")},
    **{k: (R.MANAGES, True) for k in ("MANAGED_BY", "SUPERVISED_BY", "OVERSEEN_BY")},
    **{k: (R.MEMBER_OF, False) for k in ("PART_OF", "BELONGS_TO", "MEMBER", "IN_TEAM",
                                         "ON_TEAM")},
    **{k: (R.LEADS, False) for k in ("LEAD", "LED", "LEADER_OF", "HEADS", "RUNS",
                                     "DRIVES")},
    **{k: (R.LEADS, True) for k in ("LED_BY", "HEADED_BY", "RUN_BY", "DRIVEN_BY")},
    **{k: (R.LOCATED_IN, False) for k in ("BASED_IN", "LOCATED_AT", "LIVES_IN", "IN")},
    **{k: (R.HEADQUARTERED_IN, False) for k in ("HQ_IN", "HEADQUARTERS_IN")},
    **{k: (R.OWNS, True) for k in ("OWNED_BY",)},
    **{k: (R.ACQUIRED, False) for k in ("ACQUIRES", "BOUGHT", "PURCHASED")},
    **{k: (R.ACQUIRED, True) for k in ("ACQUIRED_BY",)},
    **{k: (R.INVESTED_IN, False) for k in ("INVESTS_IN", "FUNDED", "FUNDS", "BACKED")},
    **{k: (R.INVESTED_IN, True) for k in ("FUNDED_BY", "BACKED_BY")},
    **{k: (R.COLLABORATED_WITH, False) for k in ("COLLABORATES_WITH", "WORKS_WITH",
                                                 "PARTNERED_WITH", "PARTNERS_WITH")},
    **{k: (R.CREATED, False) for k in ("CREATES", "FOUNDED", "AUTHORED", "WROTE", "DESIGNED")},
    **{k: (R.CREATED, True) for k in ("CREATED_BY", "FOUNDED_BY", "AUTHORED_BY", "WRITTEN_BY")},
    **{k: (R.DEVELOPED, False) for k in ("DEVELOPS", "BUILDS", "BUILT", "IMPLEMENTED")},
    **{k: (R.DEVELOPED, True) for k in ("DEVELOPED_BY", "BUILT_BY", "IMPLEMENTED_BY")},
    **{k: (R.MAINTAINS, False) for k in ("MAINTAIN", "SUPPORTS", "OPERATES")},
    **{k: (R.MAINTAINS, True) for k in ("MAINTAINED_BY", "SUPPORTED_BY", "OPERATED_BY")},
    **{k: (R.USES, False) for k in ("USE", "USING", "UTILIZES", "RUNS_ON", "BUILT_WITH")},
    **{k: (R.USES, True) for k in ("USED_BY",)},
    **{k: (R.DEPENDS_ON, False) for k in ("DEPENDS", "REQUIRES", "RELIES_ON", "CALLS",
                                          "INTEGRATES_WITH")},
    **{k: (R.RELATED_TO, False) for k in ("RELATED", "ASSOCIATED_WITH", "RELATES_TO")},
}

_NON_WORD = re.compile(r"[^A-Z0-9]+")


def _key(label: str) -> str:
    return _NON_WORD.sub("_", label.strip().upper()).strip("_")


def map_entity_type(label: str) -> tuple[EntityType | None, bool]:
    """(type, exact): exact when the label is one of the taxonomy's own; None = drop."""
    key = _key(label)
    if key in EntityType.__members__:
        return EntityType(key), True
    return ENTITY_SYNONYMS.get(key), False


def map_relation(label: str) -> tuple[RelationType, bool, bool]:
    """(type, reversed, known): unknown labels fall back to RELATED_TO (design doc 003)."""
    key = _key(label)
    if key in RelationType.__members__:
        return RelationType(key), False, True
    if key in RELATION_SYNONYMS:
        rel, rev = RELATION_SYNONYMS[key]
        return rel, rev, True
    return RelationType.RELATED_TO, False, False
