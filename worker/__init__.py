"""The composition root: the `parley` command and the processes it starts (web, worker,
scheduler, MCP server), each built from the settings."""
