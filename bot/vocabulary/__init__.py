"""The records every layer passes around, at the bottom of `bot`: a conversation's messages,
the events a turn yields, a session's state, a run's record and trace, and token usage.

They import nothing above them, so the agent, the store and the trace can each use them
without importing each other.
"""
