"""A run's trace: what happened in it, step by step, and what that says of its health."""
