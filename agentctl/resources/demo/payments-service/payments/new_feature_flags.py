"""The new feature-flag service: flags are evaluated against a request context."""

_RULES = {
    "fast_checkout": lambda context: True,
    "instant_refunds": lambda context: context.get("region") != "restricted",
}


def evaluate(flag, context):
    rule = _RULES.get(flag)
    return bool(rule and rule(context))
