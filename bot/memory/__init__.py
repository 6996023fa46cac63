"""Long-term memory: what people ask the agent to keep, whose it is, and how it reaches the
prompt. The storage is `bot.store.memory`."""
