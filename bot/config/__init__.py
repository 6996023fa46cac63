"""Configuration: the settings read from the environment once at start, and the checks and
reference data (database URLs, time zones, model prices) they are validated with."""
