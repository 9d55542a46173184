"""Where an AUTO query's time goes, stage by stage, over a built data dir (issue 23).

    .venv/bin/python -m bench.query_stages DATA_DIR QUESTIONS [--repeat 2] [--warm-up 10]
        [--mode auto] [--in-place] [--answers OUT.json] [--top 10]

``DATA_DIR`` is a data dir a run of ``knotwork ingest`` (and ``communities build``) left, e.g.
one kept by ``corpus_eval.py --keep``; it is copied to a temporary directory first (opening
the embedded stores may write to it), unless ``--in-place``. ``QUESTIONS`` is a JSON-lines
file of ``{"id", "question", "category"}`` rows (a corpus's questions.jsonl) or a plain text
file, one question a line.

The process is opened and warmed up as ``knotwork serve`` does; then every question is asked
``--repeat`` times in order (pass 1 cold: every candidate text is new to the process; later
passes see the in-process vector memo warm). Each call of a store, of the embedding model,
of spaCy and of the engine's stages is wrapped: its time is charged to the innermost stage
running (exclusive time), so the stages add up to the query's wall time. Printed, in one run:
p50 / p95 of the query time per pass, each stage's share of all query time and its calls and
ms per query, the texts the model encoded per query (question and candidate texts), and the
slowest questions with their three biggest stages. Ratios (shares) are the figures to
compare between runs on a shared machine, not the milliseconds.
``--answers`` writes every question's answer, context, citations and trace of the first pass
(for an exact before/after comparison of answers, see ``bench/compare_answers.py``).
No results file is written.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from knotwork import Knotwork, Settings
from knotwork.domain.models import QueryMode
from knotwork.observability.tracing import unwrap


class Clock:
    """Exclusive time per stage: a stack of running stages, time charged to the innermost."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.last = 0.0
        self.ms: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self.texts: Counter[str] = Counter()
        self._thread = threading.get_ident()

    def _charge(self) -> None:
        now = time.perf_counter()
        if self.stack:
            self.ms[self.stack[-1]] += (now - self.last) * 1000
        self.last = now

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        if threading.get_ident() != self._thread:  # a worker thread: not on this stack
            yield
            return
        self._charge()
        self.stack.append(name)
        self.calls[name] += 1
        try:
            yield
        finally:
            self._charge()
            self.stack.pop()

    def take(self) -> tuple[Counter[str], Counter[str], Counter[str]]:
        out = (self.ms, self.calls, self.texts)
        self.ms, self.calls, self.texts = Counter(), Counter(), Counter()
        return out


def _wrap(
    clock: Clock, name: str | Callable[..., str], fn: Callable[..., Any]
) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        label = name(*args, **kwargs) if callable(name) else name
        with clock.stage(label):
            return fn(*args, **kwargs)

    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


class _Store:
    """Every public method of a store charged to ``<label>.<method>``."""

    def __init__(self, store: object, label: str, clock: Clock) -> None:
        self._store, self._label, self._clock = store, label, clock

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if name.startswith("_") or not callable(value):
            return value
        return _wrap(self._clock, f"{self._label}.{name}", value)


def instrument(kw: Knotwork, clock: Clock) -> Callable[[], None]:
    """Wrap the stores, the models and the engine's stages; returns the undo."""
    import knotwork.retrieval.engine as engine_mod
    import knotwork.retrieval.evidence_text as evidence_mod
    from knotwork.retrieval.engine import QueryEngine
    from knotwork.retrieval.global_search import GlobalSearch
    from knotwork.retrieval.local import LocalSearch

    rt = kw.runtime
    undo: list[Callable[[], None]] = []

    def patch(owner: Any, attr: str, label: str | Callable[..., str]) -> None:
        original = getattr(owner, attr)
        setattr(owner, attr, _wrap(clock, label, original))
        undo.append(lambda: setattr(owner, attr, original))

    for attr, label in (("graph", "graph"), ("vectors", "vectors"), ("documents", "sql")):
        original = getattr(rt, attr)
        setattr(rt, attr, _Store(unwrap(original), label, clock))
        undo.append(lambda a=attr, o=original: setattr(rt, a, o))
    embedder = rt.embedder
    encode = getattr(embedder, "_encode", None)
    if callable(encode):  # MiniLM: the model's own work, after its in-process memo

        def encoded(texts: list[str]) -> Any:
            clock.texts["encoded"] += len(texts)
            return encode(texts)

        embedder._encode = _wrap(clock, "model: encode", encoded)  # type: ignore[attr-defined]
        undo.append(lambda: delattr(embedder, "_encode"))
    embed = embedder.embed

    def embedded(texts: Any) -> Any:
        clock.texts["asked"] += len(texts)
        return embed(texts)

    embedder.embed = _wrap(clock, "embed (memo hit)", embedded)  # type: ignore[method-assign]
    undo.append(lambda: delattr(embedder, "embed"))
    extractor = rt.extractor
    patch(extractor, "names_in", "spacy: question names")
    patch(evidence_mod, "embed_cached", "embed (memo hit)")  # local and global candidates
    patch(engine_mod, "embed_cached", "embed (memo hit)")  # titles of cited documents
    for name in ("wrong_surname", "aggregate", "route", "_check_support", "global_", "drift"):
        patch(QueryEngine, name, f"engine.{name.strip('_')}")
    patch(engine_mod, "incident_answer", "engine.incident_answer")
    patch(engine_mod, "answer_chain", "engine.chain")
    for name in ("seed_entities", "_fact_units", "_sentence_units", "_score", "_context"):
        patch(LocalSearch, name, f"local.{name.strip('_')}")
    patch(LocalSearch, "answer", "local.answer (rest)")
    patch(GlobalSearch, "run", "global.run")

    def restore() -> None:
        for fn in reversed(undo):
            fn()

    return restore


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))]


def _questions(path: Path) -> list[dict[str, str]]:
    rows = [x.strip() for x in path.read_text().splitlines() if x.strip()]
    if rows and rows[0].startswith("{"):
        return [json.loads(x) for x in rows]
    return [{"id": f"q{i}", "question": q, "category": "-"} for i, q in enumerate(rows, 1)]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data_dir", type=Path)
    p.add_argument("questions", type=Path)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--mode", default="auto", choices=[m.value for m in QueryMode])
    p.add_argument("--warm-up", type=float, default=None, help="seconds (default: the setting)")
    p.add_argument("--in-place", action="store_true", help="open DATA_DIR itself, no copy")
    p.add_argument("--answers", type=Path, help="write the first pass's answers here (JSON)")
    p.add_argument("--top", type=int, default=10, help="slowest questions listed")
    p.add_argument("--max-context-tokens", type=int, default=4000, help="as the REST API's default")
    args = p.parse_args()
    questions = _questions(args.questions)
    tmp = None
    data = args.data_dir
    if not args.in_place:
        tmp = Path(tempfile.mkdtemp(prefix="kw-stages-"))
        data = tmp / "data"
        shutil.copytree(args.data_dir, data)
    sys.setswitchinterval(0.001)  # as `knotwork serve`
    try:
        kw = Knotwork(Settings(data_dir=data))
        kw.warm_up(args.warm_up)
        gc.collect()
        gc.freeze()
        clock = Clock()
        restore = instrument(kw, clock)
        mode = QueryMode(args.mode)
        stage_ms: list[Counter[str]] = []  # per pass
        stage_calls: list[Counter[str]] = []
        texts: list[Counter[str]] = []
        wall: list[list[float]] = []
        per_question: dict[str, list[tuple[float, Counter[str]]]] = defaultdict(list)
        answers: list[dict[str, Any]] = []
        for n in range(args.repeat):
            ms_total: Counter[str] = Counter()
            calls_total: Counter[str] = Counter()
            texts_total: Counter[str] = Counter()
            times: list[float] = []
            for q in questions:
                start = time.perf_counter()
                with clock.stage("engine (other)"):
                    result = kw.query(
                        q["question"], mode=mode, max_context_tokens=args.max_context_tokens
                    )
                times.append((time.perf_counter() - start) * 1000)
                ms, calls, seen = clock.take()
                ms_total.update(ms)
                calls_total.update(calls)
                texts_total.update(seen)
                per_question[q["id"]].append((times[-1], ms))
                if n == 0:
                    answers.append(
                        {
                            "id": q["id"],
                            "question": q["question"],
                            "mode": result.mode_used.value,
                            "answer": result.answer,
                            "confidence": result.confidence,
                            "context": result.context,
                            "citations": [c.model_dump(mode="json") for c in result.citations],
                            "trace": result.reasoning_trace,
                        }
                    )
            stage_ms.append(ms_total)
            stage_calls.append(calls_total)
            texts.append(texts_total)
            wall.append(times)
        restore()
        kw.close()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.answers:
        args.answers.write_text(json.dumps(answers, indent=1, ensure_ascii=False))
    nq = len(questions)
    print(f"{nq} questions, mode {mode.value}, {args.repeat} pass(es); data {args.data_dir}")
    for n, times in enumerate(wall, 1):
        print(
            f"pass {n}: p50 {_pct(times, 0.5):.0f} ms  p95 {_pct(times, 0.95):.0f} ms  "
            f"max {max(times):.0f} ms  total {sum(times) / 1000:.1f} s;  model texts per query: "
            f"asked {texts[n - 1]['asked'] / nq:.1f}, encoded {texts[n - 1]['encoded'] / nq:.1f}"
        )
    header = "".join(f"  pass{n}: share  ms/q  calls/q" for n in range(1, len(wall) + 1))
    print(f"{'stage':34}{header}")
    order = sorted(set().union(*stage_ms), key=lambda s: -sum(m[s] for m in stage_ms))
    for stage in order:
        cells = ""
        for ms, calls in zip(stage_ms, stage_calls, strict=True):
            total = sum(ms.values()) or 1.0
            cells += f"  {ms[stage] / total:12.3f} {ms[stage] / nq:5.0f} {calls[stage] / nq:8.1f}"
        print(f"{stage:34}{cells}")
    print("slowest questions (pass 1; biggest stages):")
    slow = sorted(questions, key=lambda q: -per_question[q["id"]][0][0])[: args.top]
    for q in slow:
        took, ms = per_question[q["id"]][0]
        top = ", ".join(f"{s} {v / took:.2f}" for s, v in ms.most_common(3))
        print(f"  {took:7.0f} ms  {q.get('category', '-'):11} {q['id']}  {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
