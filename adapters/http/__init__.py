"""The HTTP API and web chat: `parley web` serves them; replies travel as Redis streams."""
