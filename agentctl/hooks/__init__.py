"""The bridge between a native agent CLI's hooks and the attempt that runs it.

Stdlib only and imported by the hook process on every tool call: keep it tiny.
"""
