"""Tools from MCP servers that operators declare in an `mcp.json` (PARLEY_MCP_CONFIG).

`config` reads and checks that file; `transport` opens a connection as the file says;
`server` keeps one server connected, retrying with backoff while it is down; `tools` turns
the server's tools into Parley `Tool`s; `source` offers the connected servers' tools to an
agent; `status` tells operators, through Redis, how each worker's servers are doing.
"""
