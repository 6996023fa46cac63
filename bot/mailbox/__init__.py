"""The session mailboxes in Redis: the inbox every message goes through, the lease a worker
holds on a session, the hot state's layout, and how much work waits."""
