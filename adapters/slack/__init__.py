"""Slack: events in through slack-bolt (HTTP or Socket Mode), streamed replies out."""
