pytest_plugins = [
    "tests.support.redis_server",
    "tests.support.postgres_server",
    "tests.fakes.llm.fixtures",
    "tests.fakes.tg.fixtures",
    "tests.fakes.slack.fixtures",
    "tests.support.stack",
    "tests.support.telegram",
    "tests.support.slack",
]
