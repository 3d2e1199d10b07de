"""When the model gateway tries a vendor request again: the vendor's faults (429, 529, 5xx, a
dropped connection) are not the agent's, so they are ridden out within a bound.

Only before anything of the answer went to the agent: a streamed answer that broke off is passed
on as it broke. `retry-after` (or OpenAI's `retry-after-ms`) is honoured when it is within the
bound; a vendor asking for a longer wait gets its answer passed on instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

RETRIED_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))


@dataclass(frozen=True, slots=True)
class Retries:
    """How hard the gateway tries one request of the agent."""

    tries: int = 4  # upstream requests per request of the agent, the first included
    backoff_seconds: float = 0.5  # before the second try; doubled before each next one
    max_wait_seconds: float = 30.0  # any one wait, a vendor's retry-after included
    timeout_seconds: float = 600.0  # an upstream silent this long is given up on (not retried)


DEFAULT_RETRIES = Retries()


def wait_before_retry(policy: Retries, tries_made: int, status: int | None,
                      header: Callable[[str], str | None], now: float) -> float | None:
    """Seconds to wait before the next try after a failed one (`status` None: the connection
    failed or dropped); None when no next try is due (not a vendor fault, tries used up, or the
    vendor asks for longer than the bound). `header` reads the failed answer's headers; `now`
    is the epoch time, for an HTTP-date retry-after."""
    if tries_made >= policy.tries or (status is not None and status not in RETRIED_STATUSES):
        return None
    backoff = min(policy.backoff_seconds * 2.0 ** (tries_made - 1), policy.max_wait_seconds)
    asked = _asked(header, now)
    if asked is None:
        return backoff
    return asked if asked <= policy.max_wait_seconds else None


def _asked(header: Callable[[str], str | None], now: float) -> float | None:
    """The wait the vendor asked for, if it asked (`retry-after-ms`, `retry-after` in seconds
    or as an HTTP date)."""
    milliseconds = header("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    given = header("retry-after")
    if not given:
        return None
    try:
        return max(0.0, float(given))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(given).timestamp() - now)
    except (TypeError, ValueError, IndexError):
        return None
