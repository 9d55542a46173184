"""``knotwork entities calibrate|reresolve|merge|unmerge|review|split|undo`` (registered by cli on the
``entities`` group, next to ``entities resolve``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from knotwork.core import Knotwork


def _run(body: Callable[[Knotwork], None]) -> None:
    from knotwork.core import Knotwork
    from knotwork.resolution.merge import MergeError
    from knotwork.services import cli

    with cli._knotwork() as kw:
        assert isinstance(kw, Knotwork)
        try:
            body(kw)
        except (MergeError, ValueError) as exc:  # NotFoundError is a MergeError
            cli.fail(str(exc))


def calibrate(
    pairs: Annotated[Path, typer.Argument(help="CSV: mention,entity,type,same[,category]")],
    min_precision: Annotated[float, typer.Option("--min-precision", min=0.0, max=1.0,
                                                 help="Precision the match threshold must reach.")]
    = 0.98,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Fit the resolution thresholds from labelled pairs; print precision/recall at the point."""
    from knotwork.resolution.calibrate import calibrate as fit
    from knotwork.resolution.calibrate import evaluate, load_pairs, resolve_pairs
    from knotwork.resolution.resolver import Resolver
    from knotwork.resolution.service import resolution_config
    from knotwork.services import cli
    from knotwork.settings import Settings

    if not pairs.is_file():
        cli.fail(f"no such file: {pairs}")
    try:
        labelled = load_pairs(pairs)
    except (ValueError, UnicodeDecodeError) as exc:
        cli.fail(str(exc))
    config = resolution_config(cli._State.settings or Settings())
    resolver = Resolver(config)
    outcomes = resolve_pairs(resolver, labelled)
    current = evaluate(outcomes)
    fitted = fit(outcomes, config, min_precision)
    if as_json:
        typer.echo(json.dumps({"current": current.model_dump(),
                               "fitted": fitted.model_dump(exclude={"curve"})}, indent=2))
        return
    m = fitted.at_operating_point
    typer.echo(f"{len(labelled)} pairs; current settings: precision {current.precision:.3f} "
               f"recall {current.recall:.3f} F1 {current.f1:.3f}")
    typer.echo(f"fitted: match {fitted.match_threshold:.2f} auto {fitted.auto_threshold:.2f} "
               f"ambiguity {fitted.ambiguity_threshold:.2f}: precision {m.precision:.3f} "
               f"recall {m.recall:.3f} F1 {m.f1:.3f}")
    typer.echo(f"set KNOTWORK_RESOLUTION_MATCH_THRESHOLD={fitted.match_threshold} "
               f"KNOTWORK_RESOLUTION_AUTO_THRESHOLD={fitted.auto_threshold} "
               f"KNOTWORK_RESOLUTION_AMBIGUITY_THRESHOLD={fitted.ambiguity_threshold}")


def reresolve(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only print what would merge.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Re-run resolution over the tenant (after threshold changes): merges are undoable."""
    from knotwork.resolution.reresolve import reresolve as run
    from knotwork.services.cli_progress import progress

    def body(kw: Knotwork) -> None:
        total = kw.runtime.graph.counts(kw.settings.group).entities
        with progress("re-resolve", total) as tracker:
            report = run(kw.runtime, kw.settings.group, dry_run=dry_run, progress=tracker.advance)
        if as_json:
            typer.echo(report.model_dump_json(indent=2))
            return
        verb = "would merge" if dry_run else "merged"
        for m in report.merges:
            typer.echo(f"{verb} {m.source!r} into {m.target!r} ({m.score:.3f})"
                       + (f" merge {m.merge_id}" if m.merge_id else ""))
        typer.echo(f"{report.entities} entities, {len(report.merges)} {verb}, "
                   f"{report.flagged} flagged for review")

    _run(body)


def merge(
    target: Annotated[str, typer.Argument(help="The entity that stays.")],
    sources: Annotated[list[str], typer.Argument(help="Entities merged into it.")],
) -> None:
    """Merge entities into TARGET (prints the merge id; undo with ``entities unmerge``)."""
    from knotwork.resolution.workflow import EntityWorkflow

    def body(kw: Knotwork) -> None:
        record = EntityWorkflow(kw.runtime, kw.settings.group).merge(target, sources, "cli")
        typer.echo(json.dumps({"merge_id": record.id, "target_id": record.target_id,
                               "source_ids": record.source_ids}))

    _run(body)


def unmerge(merge_id: Annotated[str, typer.Argument(help="A merge id.")]) -> None:
    """Undo a merge: the merged entities, their facts and mentions come back."""
    from knotwork.resolution.workflow import EntityWorkflow

    def body(kw: Knotwork) -> None:
        record = EntityWorkflow(kw.runtime, kw.settings.group).unmerge(merge_id, "cli")
        typer.echo(json.dumps({"merge_id": record.id, "restored": record.source_ids}))

    _run(body)


def split(
    entity_id: Annotated[str, typer.Argument(help="The entity to take mentions from.")],
    forms: Annotated[list[str] | None, typer.Option(
        "--form", help="Move the mentions written this way (repeatable).")] = None,
    documents: Annotated[list[str] | None, typer.Option(
        "--document", help="Move the mentions in this document id (repeatable).")] = None,
    mentions: Annotated[list[str] | None, typer.Option(
        "--mention", help="Move this mention id (repeatable; see --list).")] = None,
    into: Annotated[str | None, typer.Option("--into", help="Move them to this entity "
                                             "instead of a new one.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="The new entity's name.")] = None,
    list_only: Annotated[bool, typer.Option("--list", help="List the entity's mentions and "
                                            "change nothing.")] = False,
) -> None:
    """Split mentions off an entity (facts follow their evidence); undo with ``entities undo``."""
    from knotwork.resolution.workflow import EntityWorkflow, SplitRequest
    from knotwork.services import cli

    def body(kw: Knotwork) -> None:
        wf = EntityWorkflow(kw.runtime, kw.settings.group)
        if list_only:
            for row in wf.mentions(entity_id):
                typer.echo(f"{row.id} {row.text!r} in {row.document_title or row.document_id}")
            return
        if not (forms or documents or mentions):
            cli.fail("select mentions with --form, --document or --mention (see --list)")
        action = wf.split(entity_id, SplitRequest(
            surface_forms=forms or [], document_ids=documents or [], mention_ids=mentions or [],
            into=into, name=name), "cli")
        typer.echo(json.dumps({"action_id": action.id, "entity_ids": action.entity_ids,
                               "moved_mentions": action.snapshot.moved_mentions,
                               "moved_facts": len(action.snapshot.moved_facts)}))

    _run(body)


def undo(action_id: Annotated[str, typer.Argument(help="An action id (see the split's "
                                                   "output or GET /v1/actions).")]) -> None:
    """Undo a split, move or review decision exactly (newest first on the same entities)."""
    from knotwork.resolution.workflow import EntityWorkflow

    def body(kw: Knotwork) -> None:
        action = EntityWorkflow(kw.runtime, kw.settings.group).undo(action_id, "cli")
        typer.echo(json.dumps({"action_id": action.id, "kind": action.kind.value,
                               "undone": action.undone_at is not None}))

    _run(body)


def review(
    status: Annotated[str, typer.Option("--status", help="pending|approved|rejected|merged|all")]
    = "pending",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the review queue."""
    from knotwork.resolution.models import ReviewStatus
    from knotwork.resolution.workflow import EntityWorkflow
    from knotwork.services import cli

    wanted = None if status == "all" else cli._choice(status, ReviewStatus, "status")

    def body(kw: Knotwork) -> None:
        items = EntityWorkflow(kw.runtime, kw.settings.group).reviews(wanted, "", 500)
        if as_json:
            typer.echo(json.dumps([i.model_dump(mode="json") for i in items], indent=2))
            return
        for i in items:
            alts = ", ".join(f"{c.name} {c.score:.2f}" for c in i.candidates)
            typer.echo(f"{i.id} {i.status.value} {i.mention!r} -> {i.entity_id} ({alts})")

    _run(body)


def register(entities_app: typer.Typer) -> None:
    entities_app.command("calibrate")(calibrate)
    entities_app.command("reresolve")(reresolve)
    entities_app.command("merge")(merge)
    entities_app.command("unmerge")(unmerge)
    entities_app.command("review")(review)
    entities_app.command("split")(split)
    entities_app.command("undo")(undo)
