"""The platforms as a whole, for the processes: which ones a worker answers on and how their
egress loads, and where a task's runs are answered, from a session key of any platform."""
