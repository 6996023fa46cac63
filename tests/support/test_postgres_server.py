"""The test PostgreSQL server: reachable through SQLAlchemy, one fresh database per ask."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.support.postgres_server import PostgresServer


async def test_a_fresh_database_answers(postgres_url: str) -> None:
    engine = create_async_engine(postgres_url)
    try:
        async with engine.connect() as connection:
            version = (await connection.execute(text("select version()"))).scalar_one()
            database = (await connection.execute(text("select current_database()"))).scalar_one()
    finally:
        await engine.dispose()
    assert version.startswith("PostgreSQL")
    assert postgres_url.endswith(f"/{database}")


def test_each_ask_gets_its_own_database(postgres_server: PostgresServer, postgres_url: str) -> None:
    assert postgres_server.create_database() != postgres_url
