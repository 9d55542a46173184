"""Alembic environment of the Knotwork document store.

URL: the caller's ``sqlalchemy.url`` if set, else
``knotwork.settings.Settings().resolved_database_url()``. A caller may also hand
over an open connection in ``config.attributes["connection"]``
(``SqlDocumentStore.migrate()`` does), which is then used as-is.
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection, create_engine
from sqlalchemy.pool import NullPool

from knotwork.infra.sql.models import Base
from knotwork.infra.sql.store import configure_engine, ensure_sqlite_parent_dir

config = context.config
target_metadata = Base.metadata

if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from knotwork.settings import Settings

    return Settings().resolved_database_url()


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )


def run_migrations_offline() -> None:
    url = _url()
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    given = config.attributes.get("connection")
    if isinstance(given, Connection):
        _configure(given)
        with context.begin_transaction():
            context.run_migrations()
        return

    url = _url()
    ensure_sqlite_parent_dir(url)
    engine = configure_engine(create_engine(url, poolclass=NullPool))
    try:
        with engine.connect() as connection:
            _configure(connection)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
