"""The ``knotwork`` command line. Errors: exit code 2 and one line on stderr."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn, TypeVar

import typer
from pydantic import ValidationError

from knotwork.domain.errors import StoreBusy
from knotwork.domain.models import EntityType, EpisodeSource, QueryMode
from knotwork.domain.timeutil import parse_user_time
from knotwork.services.cli_examples import attach_examples
from knotwork.settings import LogFormat, Settings

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Knotwork: an entity-resolved, bi-temporal knowledge graph with cited answers.")
episode_app = typer.Typer(no_args_is_help=True, help="Add episodes (messages, text, JSON).")
graph_app = typer.Typer(no_args_is_help=True, help="Inspect the graph.")
entities_app = typer.Typer(no_args_is_help=True, help="Entity resolution.")
app.add_typer(episode_app, name="episode")
app.add_typer(graph_app, name="graph")
app.add_typer(entities_app, name="entities")

T = TypeVar("T")


class _State:
    settings: Settings | None = None
    verbose: bool = False


def fail(message: str) -> NoReturn:
    typer.echo(f"knotwork: error: {message}", err=True)
    raise typer.Exit(code=2)


def _choice(value: str, options: type[T], what: str) -> T:
    try:
        return options(value)  # type: ignore[call-arg]
    except ValueError:
        allowed = ", ".join(o.value for o in options)  # type: ignore[attr-defined]
        fail(f"unknown {what} {value!r} (choose from: {allowed})")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("knotwork")
    except PackageNotFoundError:  # a source tree on PYTHONPATH, not installed
        from knotwork import __version__

        return __version__


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"knotwork {_version()}")
        raise typer.Exit()


@app.callback()
def main_options(
    data_dir: Annotated[Path | None, typer.Option("--data-dir", envvar="KNOTWORK_DATA_DIR",
                                                  help="Directory holding all embedded state.")] = None,
    group: Annotated[str | None, typer.Option("--group", envvar="KNOTWORK_GROUP",
                                              help="Tenant (group id).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log progress details.")] = False,
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_print_version,
                                          help="Print the version and exit.")] = False,
    log_json: Annotated[bool, typer.Option(
        "--log-json", help="Logs as JSON lines on stderr (also KNOTWORK_LOG_FORMAT=json).")] = False,
) -> None:
    from knotwork.logging import configure_logging

    _State.verbose = verbose
    overrides: dict[str, object] = {}
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    if group is not None:
        overrides["group"] = group
    if log_json:
        overrides["log_format"] = LogFormat.JSON
    try:
        _State.settings = Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:  # an invalid --group (or KNOTWORK_* value): one line, exit 2
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        fail(f"{where}: {first.get('msg', 'invalid')}".removeprefix(": "))
    configure_logging("INFO" if verbose else "WARNING",
                      json_logs=_State.settings.log_format is LogFormat.JSON)


@contextmanager
def _knotwork() -> Iterator[object]:
    from knotwork.core import Knotwork
    from knotwork.ingestion.extraction.spacy_model import ModelUnavailableError
    from knotwork.ingestion.loaders.errors import LoaderError

    settings = _State.settings or Settings()
    try:
        kw = Knotwork(settings)
    except StoreBusy:
        fail(busy_message(settings))
    except Exception as exc:  # noqa: BLE001 - any store that cannot open: one line, exit 2
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        fail(f"cannot open the stores in {settings.data_dir}: {detail}")
    try:
        yield kw
    except (LoaderError, ValueError, ModelUnavailableError) as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    except Exception as exc:
        from knotwork.services.api.middleware import is_store_outage

        if not is_store_outage(exc) or _State.verbose:
            raise
        # e.g. the embedded graph server died: what was begun stays PROCESSING and the same
        # command run again rolls it back and redoes it (``IngestionPipeline.recover``)
        detail = _first_line(str(exc)) or type(exc).__name__
        fail(f"a store stopped answering ({detail}); run the command again to resume")
    finally:
        _close_quietly(kw)


def _close_quietly(kw: object) -> None:
    """Close the stores; a store that died is past closing (its error is already said)."""
    from knotwork.core import Knotwork

    assert isinstance(kw, Knotwork)
    try:
        kw.close()
    except Exception:  # one error line is the contract
        if _State.verbose:
            raise


def busy_message(settings: Settings) -> str:
    """What to do when another process holds the embedded stores (one line)."""
    return (f"the embedded stores in {settings.data_dir} are in use by another process (a running "
            "`knotwork serve`, `worker` or `mcp`?): stop it and retry, ask the running server "
            "over its REST API, or use a Qdrant server (KNOTWORK_VECTOR_BACKEND=qdrant, "
            "KNOTWORK_QDRANT_URL) so that several processes can share the stores")


def _run(body: Callable[[object], None]) -> None:
    with _knotwork() as kw:
        body(kw)


@app.command()
def ingest(path: Annotated[Path, typer.Argument(help="Confluence JSON dir, Slack export, or files.")],
           queue: Annotated[bool, typer.Option("--queue", help="Enqueue for `knotwork worker` "
                                               "instead of processing inline.")] = False) -> None:
    """Ingest a Confluence export, a Slack export (dir or zip), or text/markdown/HTML files."""
    from knotwork.ingestion.loaders.detect import load_path
    from knotwork.ingestion.loaders.errors import LoaderError
    from knotwork.ingestion.loaders.slack_members import load_members

    if not path.exists():
        fail(f"path does not exist: {path}")
    try:
        loaded = load_path(path, max_chars=(_State.settings or Settings()).max_document_chars)
    except LoaderError as exc:
        fail(str(exc))
    for note in loaded.notes:  # skipped-and-reported items
        typer.echo(f"knotwork: skipped: {note}", err=True)
    if queue:
        from knotwork.services.cli_worker import enqueue_loaded

        enqueue_loaded(loaded.documents, loaded.kind.value, load_members(path))
        return

    def body(kw: object) -> None:
        from knotwork.core import Knotwork

        assert isinstance(kw, Knotwork)
        from knotwork.services.cli_progress import progress

        with progress("ingest", len(loaded.documents)) as tracker:
            report = kw.ingest_documents(loaded.documents, progress=tracker.advance,
                                         members=load_members(path))
        typer.echo(
            f"ingested {report.documents_ingested} {loaded.kind.value} documents "
            f"({report.documents_unchanged} unchanged, {report.chunks} chunks, "
            f"{report.entities} entities, {report.facts} facts touched)"
        )

    _run(body)


@episode_app.command("add")
def episode_add(
    text: Annotated[str, typer.Argument(help="The episode content.")],
    source: Annotated[str, typer.Option("--source", help="message | text | json")] = "message",
    time: Annotated[str | None, typer.Option("--time", help="Reference time, ISO-8601.")] = None,
) -> None:
    """Add one episode (a message, text or JSON)."""
    kind = _choice(source.lower(), EpisodeSource, "episode source")
    when = None
    if time is not None:
        try:
            when = parse_user_time(time)
        except ValueError as exc:
            fail(str(exc))

    def body(kw: object) -> None:
        from knotwork.core import Knotwork

        assert isinstance(kw, Knotwork)
        result = kw.add_episode(text, reference_time=when, source=kind)
        typer.echo(json.dumps(result.model_dump()))

    _run(body)


def _nothing_ingested(settings: Settings) -> NoReturn:
    group = "" if settings.group == Settings.model_fields["group"].default else f" --group {settings.group}"
    fail(f"nothing has been ingested into {settings.data_dir} (tenant {settings.group!r}): "
         f"run `knotwork --data-dir {settings.data_dir}{group} ingest PATH` first")


def _fail_if_nothing_ingested() -> None:
    """Before any store opens: the documents live in the data dir and it does not exist, so
    nothing was ingested there (opening the stores would create it)."""
    settings = _State.settings or Settings()
    if not settings.database_url and not settings.data_dir.exists():
        _nothing_ingested(settings)


def _fail_if_tenant_empty(kw: object) -> None:
    from knotwork.core import Knotwork

    assert isinstance(kw, Knotwork)
    if kw.runtime.documents.counts(kw.settings.group).documents == 0:
        _nothing_ingested(kw.settings)


@app.command()
def query(
    question: Annotated[str, typer.Argument(help="A question in plain language.")],
    mode: Annotated[QueryMode, typer.Option(
        "--mode", case_sensitive=False,
        help="auto picks local (one thing and its neighbours), global (the whole corpus, "
             "from community summaries) or drift (global, then local follow-ups).")
    ] = QueryMode.AUTO,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Answer as of this date.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    level: Annotated[int | None, typer.Option("--level", min=0,
                                              help="Global: the community level.")] = None,
    max_iterations: Annotated[int | None, typer.Option("--max-iterations", min=0, max=10,
                                                       help="DRIFT: follow-ups at most.")] = None,
    as_reader: Annotated[list[str] | None, typer.Option(
        "--as", help="Answer as this reader (user:<id or email>, group:<name>; repeat): "
                     "documents whose source ACL they do not meet are left out.")] = None,
) -> None:
    """Ask a question; prints a cited answer (AUTO picks local, global or DRIFT)."""
    chosen = QueryMode(mode)
    when = None
    if as_of is not None:
        try:
            when = parse_user_time(as_of)
        except ValueError as exc:
            fail(str(exc))

    _fail_if_nothing_ingested()

    def body(kw: object) -> None:
        from knotwork.core import Knotwork

        assert isinstance(kw, Knotwork)
        _fail_if_tenant_empty(kw)
        from knotwork.retrieval.options import QueryOptions

        options = QueryOptions(mode=chosen, as_of=when, community_level=level,
                               max_iterations=max_iterations,
                               principals=tuple(as_reader) if as_reader is not None else None)
        result = kw.query(question, options=options)
        if as_json:
            keys = {"answer", "citations", "confidence", "mode_used", "context", "reasoning_trace"}
            if result.key_points:
                keys |= {"key_points", "community_level"}
            if result.mode_used is QueryMode.DRIFT:
                keys |= {"iterations", "final_coverage"}
            payload = result.model_dump(mode="json", include=keys)
            for c in payload["citations"]:
                c.pop("entity_id", None)
            typer.echo(json.dumps(payload, indent=2))
            return
        typer.echo(result.answer)
        for i, c in enumerate(result.citations, 1):
            where = c.url or f"{c.source_system}:{c.source_id}"
            typer.echo(f"  [{i}] {c.title} ({where})")
        for step in result.iterations:
            typer.echo(f"  {step.mode.value}: {step.query} (coverage {step.coverage:.2f})")
        typer.echo(f"confidence {result.confidence:.2f} · mode {result.mode_used.value}")

    _run(body)


@graph_app.command("export")
def graph_export(
    as_json: Annotated[bool, typer.Option("--json/--summary",
                                          help="Print JSON (default) or a one-line count.")] = True,
) -> None:
    """Export entities and facts of the tenant."""

    def body(kw: object) -> None:
        from knotwork.core import Knotwork

        assert isinstance(kw, Knotwork)
        export = kw.export_graph()
        if as_json:
            typer.echo(export.model_dump_json(indent=2))
        else:
            typer.echo(f"{len(export.entities)} entities, {len(export.facts)} facts")

    _run(body)


@entities_app.command("resolve")
def entities_resolve(
    mention: Annotated[str, typer.Argument(help="The mention text.")],
    type_: Annotated[str | None, typer.Option("--type", help="Entity type hint.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Resolve a mention to an entity id, with alternatives."""
    etype = _choice(type_.upper(), EntityType, "entity type") if type_ else None

    def body(kw: object) -> None:
        from knotwork.core import Knotwork

        assert isinstance(kw, Knotwork)
        result = kw.resolve_entity(mention, etype)
        if as_json:
            typer.echo(result.model_dump_json(indent=2))
        elif result.entity_id:
            typer.echo(f"{result.name} ({result.type}) {result.entity_id} confidence {result.confidence:.2f}")
        else:
            typer.echo("no matching entity")

    _run(body)


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8000,
    access_log: Annotated[bool, typer.Option(
        "--access-log", help="uvicorn's plain-text line per request (~0.4 ms each); the "
        "structured request logs, X-Request-ID and /metrics latencies are always on")] = False,
) -> None:
    """Serve the REST API (FastAPI + uvicorn)."""
    import gc

    import uvicorn

    from knotwork.services.api.app import create_app

    # Routes run in worker threads: a 1 ms GIL switch interval (CPython's default is 5 ms)
    # keeps a cheap request from waiting a whole slice behind an expensive one under load.
    sys.setswitchinterval(0.001)

    from knotwork.logging import configure_logging

    # one structured line per request (method, route, status, ms) at INFO, on stderr
    configure_logging("INFO", json_logs=(_State.settings or Settings()).log_format is LogFormat.JSON)

    def body(kw: object) -> None:
        from knotwork.core import Knotwork

        assert isinstance(kw, Knotwork)
        # the models load now, not inside the first request; then up to KNOTWORK_WARM_UP_S
        # of local searches pay the stores' first-touch costs before the first user query
        kw.warm_up()
        # ~0.5 M long-lived objects (models, vocabularies): a full collection walks them all
        # (0.3-1 s) and would stall whichever request triggered it; freeze them.
        gc.collect()
        gc.freeze()
        uvicorn.run(create_app(kw.settings, knotwork=kw), host=host, port=port, log_level="info",
                    access_log=access_log)

    _run(body)


def _register_extensions() -> None:
    from knotwork.services import cli_communities, cli_ops, cli_sync

    cli_communities.register(app)
    cli_sync.register(app)
    cli_ops.register(app)
    from knotwork.services import cli_status, cli_worker

    cli_status.register(app)
    cli_worker.register(app)
    from knotwork.services import cli_bench

    cli_bench.register(app)
    from knotwork.services import cli_entities

    cli_entities.register(entities_app)  # issue 5: calibrate, reresolve, merge, unmerge, review
    from knotwork.services import cli_retrieval

    cli_retrieval.register(app)  # issue 7: knotwork mcp
    from knotwork.services import cli_documents

    cli_documents.register(app)


_register_extensions()
attach_examples(app)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main() -> None:
    """Run the CLI; every error (usage errors included) is one line on stderr."""
    try:
        from typer._click import exceptions as click_exc  # typer >= 0.20 vendors click
    except ImportError:  # pragma: no cover - older typer uses click itself
        from click import exceptions as click_exc  # type: ignore[no-redef]

    # SIGTERM unwinds like Ctrl-C, so the stores close and an embedded graph server this
    # process started stops with it (`knotwork worker` installs its own graceful handler)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        code = app(standalone_mode=False, prog_name="knotwork")
    except click_exc.NoArgsIsHelpError as exc:  # the help text is already printed
        sys.exit(exc.exit_code)
    except click_exc.ClickException as exc:  # usage errors: bad option, missing argument, ...
        typer.echo(f"knotwork: error: {_first_line(exc.format_message()) or type(exc).__name__}",
                   err=True)
        sys.exit(exc.exit_code or 2)
    except typer.Abort:
        typer.echo("knotwork: error: aborted", err=True)
        sys.exit(1)
    except StoreBusy:  # whichever command touched the embedded vectors first
        typer.echo(f"knotwork: error: {busy_message(_State.settings or Settings())}", err=True)
        sys.exit(2)
    except Exception as exc:  # an unexpected failure: still one line, exit 1
        if _State.verbose:
            raise
        detail = _first_line(str(exc))
        typer.echo(f"knotwork: error: {type(exc).__name__}{': ' + detail if detail else ''} "
                   "(run with -v for the traceback)", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    # `python -m knotwork.services.cli`: run the imported module, not this __main__ copy, so
    # the commands registered from other modules share its global options (_State)
    from knotwork.services.cli import main as _main

    _main()
