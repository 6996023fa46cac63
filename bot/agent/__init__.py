"""The agent loop: a turn's model calls and tool calls, its plan, its prompt, and the
compaction that keeps its context under budget."""
