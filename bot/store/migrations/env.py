"""Alembic's entry point. Parley runs migrations itself (`bot.store.migrate`) and hands over an
open connection, so there is no alembic.ini and no URL here."""

from alembic import context

from bot.store.schema import Base, modelled

context.configure(
    connection=context.config.attributes["connection"],
    target_metadata=Base.metadata,
    render_as_batch=True,  # SQLite alters a table by copying it; batch mode does that
    compare_type=True,
    include_name=modelled,
)
with context.begin_transaction():
    context.run_migrations()
