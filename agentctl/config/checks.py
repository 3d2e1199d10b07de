"""Value checks for config keys: each takes the TOML value and returns it typed, or raises
TypeError naming what was expected ("a positive integer"), which the loader turns into one line
naming the file and the key.

A key's check is attached to its type with `Annotated` (`Globs = Annotated[tuple[str, ...],
globs]`), so the settings classes are the whole schema: type, check and default in one place.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable
from typing import Annotated

from agentctl.domain import globs as glob_rules
from agentctl.domain.errors import BadInput
from agentctl.domain.model_prices import PriceError, parse_prices
from agentctl.domain.sandbox import validate_rule

Check = Callable[[object], object]


def text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("a string")
    return value


def flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError("true or false")
    return value


def count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError("a non-negative integer")
    return value


def positive_count(value: object) -> int:
    number = count(value)
    if number == 0:
        raise TypeError("a positive integer")
    return number


def number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 \
            or not math.isfinite(value):
        raise TypeError("a non-negative number")
    return float(value)


def positive_number(value: object) -> float:
    """Timeouts and lease times: zero, infinity and NaN all mean "never", which no bound may."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
            or not math.isfinite(value):
        raise TypeError("a positive, finite number of seconds")
    return float(value)


def fraction(value: object) -> float:
    result = number(value)
    if result > 1:
        raise TypeError("a number between 0 and 1")
    return result


def strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError("a list of strings")
    return tuple(value)


def glob_list(value: object) -> tuple[str, ...]:
    try:
        return tuple(glob_rules.validate_glob(item) for item in strings(value))
    except BadInput as error:
        raise TypeError(f"a list of valid globs ({error})") from None


def command_list(value: object) -> tuple[str, ...]:
    items = strings(value)
    for item in items:
        try:
            if not shlex.split(item):
                raise ValueError("empty")
        except ValueError:
            raise TypeError(f"a list of command lines ({item!r} does not split shell-style)"
                            ) from None
    return items


def regex_list(value: object) -> tuple[str, ...]:
    items = strings(value)
    for item in items:
        try:
            re.compile(item)
        except re.error as error:
            raise TypeError(f"a list of regular expressions ({item!r}: {error})") from None
    return items


def network_rules(value: object) -> tuple[str, ...]:
    try:
        return tuple(validate_rule(item) for item in strings(value))
    except BadInput as error:
        raise TypeError(f"a list of host[:port] globs ({error})") from None


def price_list(value: object) -> tuple[str, ...]:
    items = strings(value)
    try:
        parse_prices(items)
    except PriceError as error:
        raise TypeError(f"a list of MODEL=IN/OUT prices ({error})") from None
    return items


DATABASE_SCHEMES = ("sqlite:///", "postgresql+psycopg://")


def database_url(value: object) -> str:
    """Empty (the embedded SQLite file in the home), or a URL of a store agentctl supports."""
    url = text(value)
    if url and not url.startswith(DATABASE_SCHEMES):
        raise TypeError("a database URL starting with sqlite:/// or postgresql+psycopg://")
    return url


def aliases(value: object) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise TypeError('a table of name = "path or URL"')
    return dict(value)


Text = Annotated[str, text]
DatabaseUrl = Annotated[str, database_url]
Flag = Annotated[bool, flag]
Count = Annotated[int, count]
PositiveCount = Annotated[int, positive_count]
Number = Annotated[float, number]
Seconds = Annotated[float, positive_number]
Fraction = Annotated[float, fraction]
Strings = Annotated[tuple[str, ...], strings]
Globs = Annotated[tuple[str, ...], glob_list]
Commands = Annotated[tuple[str, ...], command_list]
Regexes = Annotated[tuple[str, ...], regex_list]
Aliases = Annotated[dict[str, str], aliases]
NetworkRules = Annotated[tuple[str, ...], network_rules]
Prices = Annotated[tuple[str, ...], price_list]
