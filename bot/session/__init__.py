"""Running a session's turns in a worker: the runner holds the lease and commits each
envelope once, the turn decides what a run is asked to do, decisions and commands are the
envelopes that are not messages, and the watch turns a run's events into its record."""
