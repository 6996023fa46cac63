"""Where the core's parts are put together: the tool catalog, each tool built with what it
needs from the settings and the database's stores, the tools offered over MCP and the agent
built from the settings. Only the processes (`worker`) import it, and nothing in `bot`
imports it back, so the tool framework, the agent and the tools that reach the database
(tasks, memories, preferences) need not know each other.
"""
