"""Scheduled tasks: the book they are kept in, the tools that make and end them, and the
scheduler that fires each run through the mailbox like a message."""
