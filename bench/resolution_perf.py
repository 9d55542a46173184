"""Resolution time per mention against 10k / 100k (/ 1M) existing entities.

    .venv/bin/python -m bench.resolution_perf [--sizes 10000,100000] [--million] [--mentions 2000]

Entities are synthetic people (given names from the nickname table and a list of common ones,
surnames built from syllables with a Zipf-like frequency, so common surnames crowd their
blocking keys) plus a share of teams and systems. Mentions: half are existing entities written
differently (nickname, initial, typo, "Last, First", handle, exact), half are new people.
The index is the in-memory blocking index (:class:`MemoryCandidates`); timings are
resolution only (key generation, lookup, prefilter, scoring, decision), one mention at a time;
``cpu_ms_per_mention`` is the process CPU time (less sensitive to other load than wall time).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import statistics
import time

from knotwork.domain.models import EntityType
from knotwork.resolution.names import NICKNAME_GROUPS
from knotwork.resolution.resolver import MemoryCandidates, Resolver
from knotwork.resolution.scoring import CandidateRecord, MentionQuery

GIVEN = sorted({g[0] for g in NICKNAME_GROUPS} | {
    "aisha", "akira", "amara", "ananya", "arjun", "bianca", "carlos", "chen", "dmitri", "elena",
    "fatima", "farah", "hana", "hiroshi", "ines", "ivan", "jamal", "keiko", "lars", "leila",
    "lucia", "mateo", "mei", "nadia", "omar", "oscar", "priya", "rahul", "rosa", "sofia",
    "tariq", "uma", "viktor", "wei", "yara", "yusuf", "zara", "zoe", "nikolai", "ingrid"})
SYLLABLES = ["an", "ber", "cal", "dor", "el", "fen", "gar", "hal", "is", "jor", "kel", "lin",
             "mor", "nov", "ost", "par", "quin", "ros", "sten", "tor", "ul", "van", "wes", "yor",
             "zan", "bright", "field", "ford", "ham", "ley", "man", "son", "ton", "wick", "berg",
             "stein", "ov", "ez", "ski", "ini"]
TEAM_WORDS = ["Payments", "Billing", "Search", "Identity", "Data", "Platform", "Mobile", "Risk"]
SUFFIX = ["Team", "Service", "Gateway", "Platform", "Pipeline"]


def surname(rng: random.Random) -> str:
    n = rng.choice((2, 2, 3))
    return "".join(rng.choice(SYLLABLES) for _ in range(n)).capitalize()


def make_entities(n: int, seed: int) -> list[CandidateRecord]:
    rng = random.Random(seed)
    pool = [surname(rng) for _ in range(max(1000, n // 20))]
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(pool))]  # Zipf-like: Smiths crowd keys
    names = rng.choices(pool, weights=weights, k=n)
    out = []
    for i in range(n):
        if i % 10 == 9:
            name = f"{rng.choice(TEAM_WORDS)} {names[i]} {rng.choice(SUFFIX)}"
            out.append(CandidateRecord(id=f"e{i}", name=name, type=EntityType.ORGANIZATION))
        else:
            out.append(CandidateRecord(id=f"e{i}", name=f"{rng.choice(GIVEN).capitalize()} {names[i]}",
                                       type=EntityType.PERSON))
    return out


def variant(name: str, rng: random.Random) -> str:
    given, last = name.split(" ", 1)
    kind = rng.randrange(6)
    if kind == 0:
        for group in NICKNAME_GROUPS:
            if group[0] == given.lower() and len(group) > 1:
                return f"{group[1].capitalize()} {last}"
        return name
    if kind == 1:
        return f"{given[0]}. {last}"
    if kind == 2 and len(last) > 4:
        i = rng.randrange(1, len(last) - 1)
        return f"{given} {last[:i]}{last[i + 1]}{last[i]}{last[i + 2:]}"
    if kind == 3:
        return f"{last}, {given}"
    if kind == 4:
        return f"@{given[0].lower()}{last.lower()}"
    return name


def run(n: int, mentions: int, seed: int) -> dict[str, float]:
    t0 = time.perf_counter()
    entities = make_entities(n, seed)
    store = MemoryCandidates()
    for rec in entities:
        store.add(rec)
    build_s = time.perf_counter() - t0
    rng = random.Random(seed + 1)
    people = [e for e in entities if e.type is EntityType.PERSON]
    queries = []
    for i in range(mentions):
        if i % 2 == 0:
            queries.append(MentionQuery(variant(rng.choice(people).name, rng), EntityType.PERSON))
        else:
            queries.append(MentionQuery(f"{rng.choice(GIVEN).capitalize()} {surname(rng)}",
                                        EntityType.PERSON))
    resolver = Resolver()
    for q in queries[:50]:  # warm caches
        resolver.resolve(q, [store])
    times, read, scored = [], [], []
    gc.disable()
    cpu0 = time.process_time()
    for q in queries:
        s = time.perf_counter()
        d = resolver.resolve(q, [store])
        times.append((time.perf_counter() - s) * 1000)
        read.append(d.candidates_read)
        scored.append(d.candidates_scored)
    cpu_ms = (time.process_time() - cpu0) * 1000 / len(queries)
    gc.enable()
    times.sort()
    return {"entities": n, "mentions": mentions, "index_build_s": round(build_s, 1),
            "ms_per_mention_mean": round(statistics.fmean(times), 3),
            "cpu_ms_per_mention": round(cpu_ms, 3),
            "ms_p50": round(times[len(times) // 2], 3),
            "ms_p95": round(times[int(len(times) * 0.95)], 3),
            "postings_read_mean": round(statistics.fmean(read), 1),
            "postings_read_max": max(read),
            "candidates_scored_mean": round(statistics.fmean(scored), 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--million", action="store_true", help="also 1,000,000 (slow, ~GBs)")
    parser.add_argument("--mentions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default="bench/results/resolution_perf.jsonl")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.million:
        sizes.append(1_000_000)
    for n in sizes:
        row = run(n, args.mentions, args.seed)
        print(json.dumps(row), flush=True)
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"bench": "resolution_perf",
                                 "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                 **row}) + "\n")


if __name__ == "__main__":
    main()
