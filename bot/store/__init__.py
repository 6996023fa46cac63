"""The durable record in SQL: sessions, messages, runs and the approvals audit.

Redis holds what a turn needs right now; this package holds what an operator must be able to
answer later ("what did the bot say to whom, and what did it cost"), and what a session is
rebuilt from when its hot state is gone.
"""
