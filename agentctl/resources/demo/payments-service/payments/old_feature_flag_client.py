"""The legacy feature-flag client, being retired in favour of new_feature_flags."""

_ENABLED = {"fast_checkout", "instant_refunds"}


def is_enabled(flag):
    return flag in _ENABLED
