pytest_plugins = ["tests.fakes.llm.fixtures"]
