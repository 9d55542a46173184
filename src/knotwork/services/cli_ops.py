"""``knotwork doctor``: check every configured store and model (registered by cli)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from knotwork.domain.ports import ApiKeyStore
    from knotwork.settings import Settings


def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    skip_models: Annotated[bool, typer.Option("--skip-models",
                                              help="Do not load spaCy / MiniLM.")] = False,
) -> None:
    """Check connectivity and versions of every configured store, model and LLM endpoint.

    Exit code 0 when every check passes, 1 when one fails.
    """
    from rich.console import Console
    from rich.table import Table

    from knotwork.services import cli
    from knotwork.services.doctor import CheckStatus, run_checks
    from knotwork.settings import Settings

    settings = cli._State.settings or Settings()
    checks = run_checks(settings, models=not skip_models)
    failed = [c for c in checks if c.status is CheckStatus.FAIL]
    if as_json:
        typer.echo(json.dumps([asdict(c) for c in checks], indent=2))
    else:
        table = Table(title=f"knotwork doctor (tenant {settings.group})")
        for column in ("component", "backend", "status", "version", "detail"):
            table.add_column(column)
        style = {CheckStatus.OK: "green", CheckStatus.FAIL: "bold red", CheckStatus.SKIPPED: "dim"}
        for c in checks:
            table.add_row(c.component, c.backend, f"[{style[c.status]}]{c.status.value}[/]",
                          c.version, c.detail)
        Console().print(table)
    if failed:
        what = "; ".join(f"{c.component} ({c.backend}): {c.detail}" for c in failed)
        typer.echo(f"knotwork: error: {len(failed)} check(s) failed: {what}", err=True)
        raise typer.Exit(code=1)


db_app = typer.Typer(no_args_is_help=True, help="The SQL schema (Alembic is the only way it changes).")


def _database_url() -> str:
    from knotwork.services import cli
    from knotwork.settings import Settings

    settings = cli._State.settings or Settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return settings.resolved_database_url()


def _alembic(action: str, revision: str) -> None:
    from alembic import command
    from sqlalchemy import create_engine

    from knotwork.infra.sql.store import alembic_config
    from knotwork.services import cli

    url = _database_url()
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            cfg = alembic_config(url)
            cfg.attributes["connection"] = connection
            if action == "upgrade":
                command.upgrade(cfg, revision)
            else:
                command.downgrade(cfg, revision)
    except Exception as exc:  # noqa: BLE001 - one line, exit 2
        cli.fail(f"db {action} {revision} failed: {str(exc).splitlines()[0] if str(exc) else exc!r}")
    finally:
        engine.dispose()


@db_app.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head") -> None:
    """Apply migrations up to REVISION (default: head)."""
    _alembic("upgrade", revision)
    typer.echo(f"database at {_current_revision()}")


@db_app.command("downgrade")
def db_downgrade(revision: Annotated[str, typer.Argument(help="Target revision, e.g. -1.")]) -> None:
    """Revert migrations down to REVISION."""
    _alembic("downgrade", revision)
    typer.echo(f"database at {_current_revision()}")


@db_app.command("current")
def db_current() -> None:
    """Print the database's current revision."""
    typer.echo(_current_revision())


def _current_revision() -> str:
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine

    engine = create_engine(_database_url())
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision() or "base"
    finally:
        engine.dispose()


def export(out: Annotated[Path, typer.Argument(help="Directory to write (new or empty).")]) -> None:
    """Export the tenant: documents, graph, vectors and resolution lineage."""
    from knotwork.services import cli
    from knotwork.services.backup import BackupError, export_tenant

    with cli._knotwork() as kw:
        try:
            manifest = export_tenant(kw.runtime, kw.settings.group, out,  # type: ignore[attr-defined]
                                     progress=_say)
        except BackupError as exc:
            cli.fail(str(exc))
    typer.echo(f"exported tenant {manifest.group_id} to {out}: " + _summary(manifest.counts))


def import_(src: Annotated[Path, typer.Argument(help="A directory written by `knotwork export`.")],
            replace: Annotated[bool, typer.Option("--replace",
                                                  help="Overwrite a tenant that holds data.")] = False,
            ) -> None:
    """Import an export into its tenant (which must be empty unless --replace)."""
    from knotwork.services import cli
    from knotwork.services.backup import BackupError, import_tenant, read_manifest

    try:
        group = read_manifest(src).group_id
    except BackupError as exc:
        cli.fail(str(exc))
    settings = (cli._State.settings or _default_settings()).model_copy(update={"group": group})
    cli._State.settings = settings
    with cli._knotwork() as kw:
        try:
            manifest = import_tenant(kw.runtime, src, replace=replace,  # type: ignore[attr-defined]
                                     progress=_say)
        except BackupError as exc:
            cli.fail(str(exc))
    typer.echo(f"imported tenant {manifest.group_id} from {src}: " + _summary(manifest.counts))


def _default_settings() -> Settings:
    from knotwork.settings import Settings

    return Settings()


def _say(step: str) -> None:
    typer.echo(f"  {step} …", err=True)


def _summary(counts: dict[str, int]) -> str:
    keys = ("entities", "facts", "episodes", "sql.documents", "sql.chunks")
    return ", ".join(f"{counts.get(k, 0)} {k.removeprefix('sql.')}" for k in keys)


keys_app = typer.Typer(no_args_is_help=True, help="API keys (hashed at rest; scopes query, ingest, admin).")


@contextmanager
def _key_store() -> Iterator[ApiKeyStore]:
    from knotwork.infra.sql.store import SqlDocumentStore
    from knotwork.services import cli

    try:
        store = SqlDocumentStore(_database_url())
        store.migrate()
    except Exception as exc:  # noqa: BLE001 - one line, exit 2
        cli.fail(f"cannot open the database: {str(exc).splitlines()[0] if str(exc) else exc!r}")
    try:
        yield store.api_keys()
    finally:
        store.close()


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Argument(help="Who or what uses the key.")],
    scope: Annotated[list[str], typer.Option("--scope", help="query, ingest or admin (repeat).")],
    tenant: Annotated[str | None, typer.Option("--tenant", help="Bind the key to one tenant.")] = None,
    principal: Annotated[list[str] | None, typer.Option(
        "--principal", help="An identity for source ACLs, e.g. user:ana@acme.com (repeat).")] = None,
    rate: Annotated[int | None, typer.Option("--rate", min=1, help="Requests per minute.")] = None,
) -> None:
    """Create a key and print its secret (shown once, never stored)."""
    from knotwork.domain.auth import Scope
    from knotwork.services import cli

    scopes = [cli._choice(s.lower(), Scope, "scope") for s in scope]
    with _key_store() as keys:
        try:
            issued = keys.create(name, scopes, tenant=tenant, principals=principal or [],
                                 rate_limit_per_minute=rate)
        except ValueError as exc:
            cli.fail(str(exc))
    typer.echo(issued.secret)
    typer.echo(f"created key {issued.key.id} ({issued.key.prefix}) with scopes "
               f"{', '.join(s.value for s in issued.key.scopes)}; the secret is not shown again",
               err=True)


@keys_app.command("list")
def keys_list(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List keys (never their secrets)."""
    with _key_store() as keys:
        found = keys.list()
    if as_json:
        typer.echo(json.dumps([k.model_dump(mode="json") for k in found], indent=2))
        return
    for k in found:
        state = "revoked" if k.revoked_at else "active"
        typer.echo(f"{k.id}  {k.prefix}  {state:7}  {','.join(s.value for s in k.scopes):18}  "
                   f"tenant={k.tenant or '*'}  {k.name}")


@keys_app.command("revoke")
def keys_revoke(key: Annotated[str, typer.Argument(help="The key's id or prefix.")]) -> None:
    """Revoke a key (effective within seconds on running servers)."""
    from knotwork.services import cli

    with _key_store() as keys:
        if not keys.revoke(key):
            cli.fail(f"no active key {key!r}")
    typer.echo(f"revoked {key}")


def reconcile(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report only; change nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Repair drift between graph, vectors and SQL after a crash, and report what was fixed."""
    from knotwork.services import cli
    from knotwork.services.reconcile import reconcile as run

    with cli._knotwork() as kw:
        report = run(kw.runtime, kw.settings.group, dry_run=dry_run,  # type: ignore[attr-defined]
                     progress=_say)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    verb = "would repair" if dry_run else "repaired"
    typer.echo(f"{verb} {report.repaired} item(s) in tenant {report.group_id}")
    for field, value in report.model_dump().items():
        if field in ("group_id", "dry_run") or not value:
            continue
        shown = ", ".join(value[:10]) + (" …" if len(value) > 10 else "") if isinstance(value, list) else value
        typer.echo(f"  {field.replace('_', ' ')}: {shown}")


def register(app: typer.Typer) -> None:
    app.command("reconcile")(reconcile)
    app.add_typer(keys_app, name="keys")
    app.command("doctor")(doctor)
    app.command("export")(export)
    app.command("import")(import_)
    app.add_typer(db_app, name="db")
