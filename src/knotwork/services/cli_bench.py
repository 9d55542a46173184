"""``knotwork bench quality DIR``: the quality benchmark of ``bench/`` (registered by cli).

``bench`` is not part of the installed package: the command works from a checkout (run it
from the repository root), and otherwise exits 2 saying so.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated

import typer

bench_app = typer.Typer(no_args_is_help=True,
                        help="Benchmarks from a source checkout (bench/ is not installed).")

NOT_FOUND = ("the bench package is not importable: run from the repository root "
             "(or use `python -m bench.quality DIR` there)")


def _bench_quality_main() -> object:
    root = Path.cwd()
    if (root / "bench" / "quality.py").is_file() and str(root) not in sys.path:
        sys.path.insert(0, str(root))  # console scripts do not put the cwd on sys.path
    try:
        module = importlib.import_module("bench.quality")
    except ImportError:
        from knotwork.services import cli

        cli.fail(NOT_FOUND)
    return module.main


@bench_app.command("quality")
def quality(
    world: Annotated[Path, typer.Argument(help="A world directory (python -m bench.world DIR).")],
    keep: Annotated[Path | None, typer.Option("--keep", help="Build the store here and keep it.")]
    = None,
    out: Annotated[Path | None, typer.Option("--out", help="JSON report path.")] = None,
    questions: Annotated[int | None, typer.Option("--questions", help="Ask only the first N.")]
    = None,
    no_baseline: Annotated[bool, typer.Option("--no-baseline")] = False,
    no_record: Annotated[bool, typer.Option("--no-record")] = False,
) -> None:
    """Ingest a generated world into a fresh store and score Knotwork against its truth."""
    main = _bench_quality_main()
    argv = [str(world)]
    if keep is not None:
        argv += ["--keep", str(keep)]
    if out is not None:
        argv += ["--out", str(out)]
    if questions is not None:
        argv += ["--questions", str(questions)]
    argv += ["--no-baseline"] * no_baseline + ["--no-record"] * no_record
    code = main(argv)  # type: ignore[operator]
    if code:
        raise typer.Exit(code=int(code))


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")
