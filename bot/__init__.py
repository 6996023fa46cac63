"""Parley's core: configuration, messages, providers, tools and the agent loop."""

__version__ = "0.1.0"
