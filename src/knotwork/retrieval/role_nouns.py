"""The head nouns of a description that names someone or something by role: "the release
manager of X", "the vendor of X". Data shared by the chain planners (:mod:`chain_plan`,
:mod:`multihop`)."""

from __future__ import annotations

__all__ = ["GROUP_ROLES", "PERSON_ROLES", "ROLE_HEADS"]

# head nouns of a description that names a person ("the account manager", "the MLRO")
PERSON_ROLES = frozenset({
    "person", "engineer", "employee", "manager", "lead", "leader", "head", "owner", "director",
    "designer", "developer", "scientist", "analyst", "officer", "commander", "founder", "author",
    "approver", "reviewer", "contact", "sponsor", "producer", "coordinator", "boss", "supervisor",
    "maintainer", "architect", "champion", "chair", "president", "writer", "artist", "admin",
    "administrator", "steward", "representative", "liaison", "captain", "creator", "co-creator",
    "specialist", "consultant", "advisor", "adviser", "auditor", "assessor", "investigator"})
# head nouns of a description that names a group or a company
GROUP_ROLES = frozenset({"team", "squad", "division", "department", "group", "unit", "vendor",
                         "supplier", "partner", "provider", "employer", "company", "studio",
                         "publisher", "customer", "merchant", "office"})
ROLE_HEADS = PERSON_ROLES | GROUP_ROLES
