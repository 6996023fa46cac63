pytest_plugins = [
    "tests.fakes.llm.fixtures",
    "tests.support.redis_server",
    "tests.support.stack",
]
