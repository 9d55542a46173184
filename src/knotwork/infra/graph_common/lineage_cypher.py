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

# Facts keep their other evidence (with its per-episode confidences and starts) and their
# confidence and valid_at are recomputed from it as ``domain.evidence`` does ($boost, $cap);
# a fact left
# with none is found by UNEVIDENCED_FACTS. Facts stored without per-episode confidences count
# each remaining episode at the stored confidence less its boosts (``aligned_confidences``).
STRIP_EVIDENCE: Final = """
MATCH (:Entity {group_id: $group_id})-[r:RELATES_TO]->(:Entity)
WHERE r.group_id = $group_id AND any(x IN r.episodes WHERE x IN $ids)
WITH r, [i IN range(0, size(r.episodes) - 1) WHERE NOT r.episodes[i] IN $ids] AS keep,
     coalesce(r.episode_confidences, []) AS per_episode,
     coalesce(r.episode_valid_at, []) AS starts,
     r.confidence - $boost * (size(r.episodes) - 1) AS legacy
WITH r, keep, [i IN keep | CASE WHEN size(per_episode) = size(r.episodes) THEN per_episode[i]
                                WHEN legacy < 0.0 THEN 0.0 ELSE legacy END] AS kept,
     [i IN keep | CASE WHEN size(starts) = size(r.episodes) THEN starts[i]
                       ELSE coalesce(r.valid_at, '') END] AS kept_starts
WITH r, keep, kept, kept_starts,
     reduce(m = 0.0, c IN kept | CASE WHEN c > m THEN c ELSE m END)
       + $boost * (size(kept) - 1) AS score,
     reduce(m = '', s IN kept_starts | CASE WHEN s = '' THEN m WHEN m = '' OR s < m THEN s
                                            ELSE m END) AS since
SET r.episodes = [i IN keep | r.episodes[i]], r.episode_confidences = kept,
    r.episode_valid_at = kept_starts,
    r.confidence = CASE WHEN size(kept) = 0 THEN r.confidence
                        WHEN score > $cap THEN $cap ELSE score END,
    r.valid_at = CASE WHEN size(kept) = 0 THEN r.valid_at WHEN since = '' THEN null
                      ELSE since END
RETURN count(r) AS written"""

# A fact ended by a newer one ends when that one begins, after its evidence changed too; if
# it is no longer the newer one (its earliest evidence withdrawn), the end goes.
SYNC_ENDS: Final = """
MATCH (:Entity {group_id: $group_id})-[o:RELATES_TO]->(:Entity)
WHERE o.group_id = $group_id AND o.invalidated_by IS NOT NULL
MATCH (:Entity {group_id: $group_id})-[r:RELATES_TO {id: o.invalidated_by}]->(:Entity)
WHERE r.group_id = $group_id AND r.valid_at IS NOT NULL AND r.valid_at <> o.invalid_at
  AND size(r.episodes) > 0
WITH o, r, o.valid_at IS NULL OR r.valid_at >= o.valid_at AS holds
SET o.invalid_at = CASE WHEN holds THEN r.valid_at ELSE null END,
    o.expired_at = CASE WHEN holds THEN o.expired_at ELSE null END,
    o.invalidated_by = CASE WHEN holds THEN o.invalidated_by ELSE null END
RETURN count(o) AS written"""

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

FACTS_INVALIDATED_BY: Final = f"""
MATCH (:Entity {{group_id: $group_id}})-[r:RELATES_TO]->(:Entity)
WHERE r.group_id = $group_id AND r.invalidated_by IN $ids
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
