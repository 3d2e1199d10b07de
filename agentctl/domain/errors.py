"""One error hierarchy; each error knows the exit code the CLI turns it into.

Exit codes (DESIGN.md §4): 2 bad input, unknown id or refused by policy; 3 an integrity check failed.
"""

from __future__ import annotations


class AgentctlError(Exception):
    """Something the user can act on; the CLI prints it as one line."""

    exit_code = 2


class BadInput(AgentctlError):
    """The request is malformed or names something that does not exist."""


class ConfigError(AgentctlError):
    """The configuration file is malformed or has an unknown or wrongly typed key."""


class NotFound(AgentctlError):
    """No record has that id or prefix."""


class AmbiguousId(AgentctlError):
    """An id prefix matches more than one record."""


class PolicyDenied(AgentctlError):
    """Policy refused the request; the reason is in the message."""


class InvariantViolation(AgentctlError):
    """A domain rule was broken, e.g. a task without an instruction."""


class IllegalTransition(InvariantViolation):
    """A status change the transition table does not allow."""

    def __init__(self, entity: str, current: str, target: str, detail: str = "") -> None:
        self.entity, self.current, self.target = entity, current, target
        message = f"{entity} cannot go from {current} to {target}"
        super().__init__(f"{message}: {detail}" if detail else message)


class LeaseLost(AgentctlError):
    """A write was refused because its attempt is no longer the run's active, unexpired lease."""


class IntegrityError(AgentctlError):
    """Stored evidence does not match its recorded hash, or the event chain is broken."""

    exit_code = 3


class InfrastructureFailure(AgentctlError):
    """Something outside the agent's control failed (clone, disk, network); worth a new attempt."""

    exit_code = 1


class ModelUnreachable(InfrastructureFailure):
    """The agent could not complete because its model could not be reached (the vendor kept
    failing, or never answered), its gateway's retries used up: the attempt is retried."""


class StoreUnavailable(InfrastructureFailure):
    """The shared database could not be reached, after retrying with backoff."""
