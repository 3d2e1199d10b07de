from payments import old_feature_flag_client


def checkout_path(cart_total_cents, context):
    if old_feature_flag_client.is_enabled("fast_checkout"):
        return "fast"
    return "standard"
