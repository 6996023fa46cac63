"""Platform I/O: each platform's updates made into envelopes and the replies shown back.

The platforms are `telegram/`, `slack/`, `http/` and the terminal's `console.py` (one module,
so no package of its own); what the chat platforms share is in `chat/`, what the web
process's parts share in `web/`, and the platforms as a whole, for the processes, in
`platforms/`."""
