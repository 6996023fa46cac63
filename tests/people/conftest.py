from tests.support.databases import each_database, opened  # noqa: F401 (fixtures)
