"""``knotwork communities build|status|show|list`` and ``knotwork report`` (registered by cli)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from knotwork.core import Knotwork

communities_app = typer.Typer(no_args_is_help=True,
                              help="Hierarchical Leiden communities and their summaries.")


def _run(body: Callable[[Knotwork], None]) -> None:
    from knotwork.core import Knotwork
    from knotwork.services import cli

    with cli._knotwork() as kw:
        assert isinstance(kw, Knotwork)
        body(kw)


def _fail(message: str) -> None:
    from knotwork.services import cli

    cli.fail(message)


@communities_app.command("build")
def build(
    stale: Annotated[bool, typer.Option("--stale", help="Only re-summarize stale communities.")]
    = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Detect communities (hierarchical Leiden) and summarize them; replaces the old ones."""
    from knotwork.services.cli_progress import progress as tracked

    def body(kw: Knotwork) -> None:
        if stale:
            ids = kw.communities().refresh()
            typer.echo(json.dumps({"resummarized": ids}) if as_json
                       else f"re-summarized {len(ids)} stale communities")
            return
        with tracked("communities", None) as tracker:

            def progress(stage: str, done: int, total: int) -> None:
                tracker.update(done, total, label=stage)

            report = kw.build_communities(progress=progress)
        if as_json:
            typer.echo(report.model_dump_json(indent=2))
            return
        levels = ", ".join(f"level {lvl}: {n}" for lvl, n in report.per_level.items())
        typer.echo(f"built {report.communities} communities on {report.levels} "
                   f"level{'' if report.levels == 1 else 's'} "
                   f"({levels or 'none'}) from {report.entities} entities and {report.facts} "
                   f"facts; modularity {report.modularity:.3f}; {report.seconds:.1f}s")

    _run(body)


@communities_app.command("status")
def status(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """When communities were built, how many per level, how many are stale."""

    def body(kw: Knotwork) -> None:
        state = kw.communities().status()
        if as_json:
            typer.echo(state.model_dump_json(indent=2))
        elif not state.built:
            typer.echo("no communities yet: run `knotwork communities build`")
        else:
            levels = ", ".join(f"level {lvl}: {n}" for lvl, n in state.per_level.items())
            typer.echo(f"{state.communities} communities ({levels}), {state.stale} stale; built "
                       f"{state.built_at:%Y-%m-%d %H:%M} UTC from {state.entities} entities and "
                       f"{state.facts} facts; modularity {state.modularity:.3f}; changed since "
                       f"{state.changed_share:.1%} (rebuild above "
                       f"{state.rebuild_threshold:.0%})")

    _run(body)


@communities_app.command("list")
def list_(
    level: Annotated[int | None, typer.Option("--level", help="Only this level.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """One line per community: id, level, members, name."""

    def body(kw: Knotwork) -> None:
        found = kw.communities().communities(level)
        if as_json:
            typer.echo(json.dumps([c.model_dump(mode="json", exclude={"entity_ids"})
                                   for c in found], indent=2))
            return
        for c in found:
            flag = " (stale)" if c.summary_stale else ""
            typer.echo(f"{c.id}  L{c.level}  {c.entity_count:>5}  {c.name}{flag}")

    _run(body)


@communities_app.command("show")
def show(
    community_id: Annotated[str, typer.Argument(metavar="ID", help="A community id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """A community's summary, members, key facts, parent and children."""

    def body(kw: Knotwork) -> None:
        detail = kw.communities().detail(community_id)
        if detail is None:
            _fail(f"no community {community_id!r} in tenant {kw.settings.group!r}")
            return
        if as_json:
            typer.echo(detail.model_dump_json(indent=2))
            return
        c = detail.community
        typer.echo(f"{c.name}\n{c.id} · level {c.level} · {c.entity_count} entities"
                   + (" · summary stale" if c.summary_stale else ""))
        if detail.parent:
            typer.echo(f"parent: {detail.parent.name} ({detail.parent.id})")
        for child in detail.children:
            typer.echo(f"child:  {child.name} ({child.id}, {child.entity_count} entities)")
        typer.echo(f"\n{c.summary}\n\ntopics: {', '.join(c.key_topics)}")
        typer.echo("entities: " + ", ".join(e.name for e in detail.entities))
        for i, fact in enumerate(detail.key_facts, 1):
            typer.echo(f"  [{i}] {fact.fact}  (episodes: {', '.join(fact.episodes)})")

    _run(body)


def report(
    out: Annotated[Path, typer.Option("--out", help="Directory for report.html, report.md, ...")],
    level: Annotated[int | None, typer.Option("--level", help="Hierarchy level (default: top).")]
    = None,
) -> None:
    """Write the analyst digest (self-contained HTML + Markdown) of the top communities."""
    if out.exists() and not out.is_dir():
        _fail(f"--out is not a directory: {out}")

    def body(kw: Knotwork) -> None:
        result, paths = kw.write_report(out, level=level)
        typer.echo(f"wrote {paths['html']} and {paths['markdown']}: {len(result.communities)} of "
                   f"{result.community_count} communities at level {result.level}")

    _run(body)


def register(app: typer.Typer) -> None:
    app.add_typer(communities_app, name="communities")
    app.command("report")(report)
