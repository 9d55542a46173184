"""``python -m bench.world OUT [--people 50] [--seed 7] [--questions 12]``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.world.build import generate_world


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.world",
                                     description="Generate a synthetic enterprise world.")
    parser.add_argument("out", type=Path, help="output directory (created)")
    parser.add_argument("--people", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--questions", type=int, default=12, help="questions per category")
    args = parser.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        print(f"bench.world: error: {args.out} is not empty", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    s = generate_world(args.out, args.people, args.seed, args.questions)
    print(f"{s.people} people, {s.entities} entities mentioned, {s.relations} relations, "
          f"{s.documents} documents, {s.questions} questions in {time.perf_counter() - t0:.1f}s "
          f"-> {s.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
