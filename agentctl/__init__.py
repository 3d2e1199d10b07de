"""agentctl: the execution plane and audit trail for autonomous coding agents."""

from agentctl import dataclass_code

__version__ = "0.1.0"

dataclass_code.install()
