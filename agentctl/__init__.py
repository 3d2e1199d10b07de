"""agentctl: the execution plane and audit trail for autonomous coding agents."""

__version__ = "0.1.0"
