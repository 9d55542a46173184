"""``knotwork sync confluence|slack``: incremental sync of a live source (registered by cli)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

if TYPE_CHECKING:
    from knotwork.ingestion.connectors.http import RetryPolicy
    from knotwork.ingestion.sync import DocRef, SyncReport, SyncSource
    from knotwork.settings import Settings

sync_app = typer.Typer(no_args_is_help=True,
                       help="Incremental sync of Confluence Cloud or Slack over their APIs.")

LISTED = 20  # titles printed per kind of change


def _settings() -> Settings:
    from knotwork.services import cli
    from knotwork.settings import Settings

    return cli._State.settings or Settings()


def _fail(message: str) -> NoReturn:
    from knotwork.services import cli

    cli.fail(message)


def _policy(settings: Settings) -> RetryPolicy:
    from knotwork.ingestion.connectors.http import RetryPolicy

    return RetryPolicy(max_retries=settings.sync_max_retries, max_delay=settings.sync_max_backoff)


def _secret(value: str | None, configured: object, what: str, env: str) -> str:
    if value:
        return value
    secret = getattr(configured, "get_secret_value", None)
    if secret is not None and secret():
        return str(secret())
    _fail(f"no {what}: pass --token or set {env}")


def _refs(sign: str, refs: list[DocRef]) -> None:
    for ref in refs[:LISTED]:
        typer.echo(f"  {sign} {ref.title} ({ref.source_id})")
    if len(refs) > LISTED:
        typer.echo(f"  {sign} … and {len(refs) - LISTED} more")


def _print(report: SyncReport, as_json: bool) -> None:
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    typer.echo(
        f"synced {report.source}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{report.unchanged} unchanged, {len(report.deleted)} deleted"
        f"{f', {report.skipped} skipped' if report.skipped else ''} "
        f"({report.documents_processed} documents extracted, "
        f"{f'{report.tasks_enqueued} tasks enqueued, ' if report.tasks_enqueued else ''}"
        f"{report.chunks} chunks, "
        f"{report.facts_retired} facts retired)"
    )
    _refs("+", report.added)
    _refs("~", report.updated)
    _refs("-", report.deleted)
    for ref in report.oversized:
        typer.echo(f"  skipped (over KNOTWORK_MAX_DOCUMENT_CHARS): {ref.source_id} {ref.title}")


def _sync(make_source: Callable[[], SyncSource], as_json: bool, queue: bool = False) -> None:
    from knotwork.core import Knotwork
    from knotwork.services import cli

    source = make_source()  # bad URL or missing token: fails before the stores open
    try:
        with cli._knotwork() as kw:
            assert isinstance(kw, Knotwork)
            from knotwork.services.cli_progress import progress

            with progress("sync documents", None) as tracker:
                if queue:  # new and changed documents go to `knotwork worker`
                    from knotwork.services.cli_worker import queued_sync

                    report = queued_sync(kw, source, tracker.advance)
                else:
                    report = kw.sync(source, progress=tracker.advance)
            _print(report, as_json)
    finally:
        close = getattr(getattr(source, "_client", None), "close", None)
        if close is not None:
            close()


@sync_app.command("confluence")
def confluence(
    space: Annotated[str, typer.Option("--space", help="Space key, e.g. ENG.")],
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="Site URL, e.g. https://acme.atlassian.net "
        "[env KNOTWORK_CONFLUENCE_URL]")] = None,
    email: Annotated[str | None, typer.Option(
        "--email", help="Account email of the API token (Confluence Cloud) "
        "[env KNOTWORK_CONFLUENCE_EMAIL]; without it the token is sent as a bearer token.")]
    = None,
    token: Annotated[str | None, typer.Option(
        "--token", help="API token [env KNOTWORK_CONFLUENCE_TOKEN].")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    queue: Annotated[bool, typer.Option("--queue", help="Enqueue new and changed pages for "
                                        "`knotwork worker` instead of extracting inline.")]
    = False,
) -> None:
    """Sync one Confluence space: new and edited pages are (re-)ingested, deleted ones removed."""
    settings = _settings()
    url = base_url or settings.confluence_url
    if not url:
        _fail("no Confluence URL: pass --base-url or set KNOTWORK_CONFLUENCE_URL")
    secret = _secret(token, settings.confluence_token, "Confluence API token",
                     "KNOTWORK_CONFLUENCE_TOKEN")

    def make() -> SyncSource:
        from knotwork.ingestion.connectors.confluence import ConfluenceClient, ConfluenceSource
        from knotwork.ingestion.loaders.errors import LoaderError

        try:
            client = ConfluenceClient(str(url), secret, email=email or settings.confluence_email,
                                      policy=_policy(settings))
            return ConfluenceSource(client, space)
        except LoaderError as exc:
            _fail(str(exc))

    _sync(make, as_json, queue)


@sync_app.command("slack")
def slack(
    token: Annotated[str | None, typer.Option(
        "--token", help="Bot token (xoxb-…) [env KNOTWORK_SLACK_TOKEN].")] = None,
    channels: Annotated[str | None, typer.Option(
        "--channels", help="Comma-separated channel names or ids (default: every channel "
        "the app is a member of).")] = None,
    full: Annotated[bool, typer.Option(
        "--full", help="Re-read whole histories (catches old edits and deletions).")] = False,
    lookback_days: Annotated[float, typer.Option(
        "--lookback-days", min=0, help="Re-read this much history before the cursor.")] = 7.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    queue: Annotated[bool, typer.Option("--queue", help="Enqueue new and changed threads for "
                                        "`knotwork worker` instead of extracting inline.")]
    = False,
) -> None:
    """Sync Slack channels: new, edited and deleted messages and threads."""
    settings = _settings()
    secret = _secret(token, settings.slack_token, "Slack token", "KNOTWORK_SLACK_TOKEN")
    wanted = [c.strip() for c in (channels or "").split(",") if c.strip()]

    def make() -> SyncSource:
        from knotwork.ingestion.connectors.slack import SlackClient, SlackSource

        client = SlackClient(secret, base_url=settings.slack_api_url, policy=_policy(settings))
        return SlackSource(client, wanted or None, lookback_days=lookback_days, full=full)

    _sync(make, as_json, queue)


def register(app: typer.Typer) -> None:
    app.add_typer(sync_app, name="sync")
