pytest_plugins = [
    "tests.fakes.llm.fixtures",
    "tests.fakes.tg.fixtures",
    "tests.support.redis_server",
    "tests.support.stack",
    "tests.support.telegram",
]
