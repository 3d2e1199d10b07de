"""Use cases: one function per thing a user or worker does, each in one unit of work."""
