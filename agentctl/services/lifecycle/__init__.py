"""The life of a run around its attempts: created, queued, leased, kept alive, cancelled,
reaped, concluded.
"""
