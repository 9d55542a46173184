"""Cypher for withdrawing evidence (a changed or deleted document) and retiring what it leaves.

Shared by FalkorDB and Neo4j; values only as parameters; every query filters by ``$group_id``.
"""

from __future__ import annotations

from typing import Final

from knotwork.infra.graph_common.cypher import FACT_COLUMNS

DOCUMENT_EPISODE_IDS: Final = """
MATCH (ep:Episodic {group_id: $group_id})
WHERE ep.document_id IN $document_ids
RETURN ep.id AS id
ORDER BY id"""

# Facts keep their other evidence (with its per-episode confidences) and their confidence is
# recomputed from it as ``domain.evidence.evidence_confidence`` does ($boost, $cap); a fact left
# with none is found by UNEVIDENCED_FACTS. Facts stored without per-episode confidences count
# each remaining episode at the stored confidence less its boosts (``aligned_confidences``).
STRIP_EVIDENCE: Final = """
MATCH (:Entity {group_id: $group_id})-[r:RELATES_TO]->(:Entity)
WHERE r.group_id = $group_id AND any(x IN r.episodes WHERE x IN $ids)
WITH r, [i IN range(0, size(r.episodes) - 1) WHERE NOT r.episodes[i] IN $ids] AS keep,
     coalesce(r.episode_confidences, []) AS per_episode,
     r.confidence - $boost * (size(r.episodes) - 1) AS legacy
WITH r, keep, [i IN keep | CASE WHEN size(per_episode) = size(r.episodes) THEN per_episode[i]
                                WHEN legacy < 0.0 THEN 0.0 ELSE legacy END] AS kept
WITH r, keep, kept,
     reduce(m = 0.0, c IN kept | CASE WHEN c > m THEN c ELSE m END)
       + $boost * (size(kept) - 1) AS score
SET r.episodes = [i IN keep | r.episodes[i]], r.episode_confidences = kept,
    r.confidence = CASE WHEN size(kept) = 0 THEN r.confidence
                        WHEN score > $cap THEN $cap ELSE score END
RETURN count(r) AS written"""

DELETE_EPISODES_BY_ID: Final = """
MATCH (ep:Episodic {group_id: $group_id})
WHERE ep.id IN $ids
DETACH DELETE ep
RETURN count(*) AS deleted"""

UNEVIDENCED_FACTS: Final = f"""
MATCH (:Entity {{group_id: $group_id}})-[r:RELATES_TO]->(:Entity)
WHERE r.group_id = $group_id AND size(coalesce(r.episodes, [])) = 0
RETURN {FACT_COLUMNS}
ORDER BY id"""

DELETE_FACTS_BY_ID: Final = """
UNWIND $ids AS fact_id
MATCH ()-[r:RELATES_TO {id: fact_id}]->()
WHERE r.group_id = $group_id
DELETE r
RETURN count(*) AS deleted"""

# Entities no episode mentions and no fact touches: nothing evidences them any more.
ORPHAN_ENTITY_IDS: Final = """
MATCH (e:Entity {group_id: $group_id})
OPTIONAL MATCH (e)<-[m:MENTIONS]-(:Episodic)
WITH e, count(m) AS mentions
WHERE mentions = 0
OPTIONAL MATCH (e)-[r:RELATES_TO]-(:Entity)
WITH e, count(r) AS facts
WHERE facts = 0
RETURN e.id AS id
ORDER BY id"""

DELETE_ENTITIES_BY_ID: Final = """
MATCH (e:Entity {group_id: $group_id})
WHERE e.id IN $ids
DETACH DELETE e
RETURN count(*) AS deleted"""
