from payments import old_feature_flag_client


def refund_amount(paid_cents, fee_cents):
    """Refund what was paid, minus the fee, never below zero."""
    return max(paid_cents - fee_cents, 0)


def refund_mode(context):
    if old_feature_flag_client.is_enabled("instant_refunds"):
        return "instant"
    return "batch"
