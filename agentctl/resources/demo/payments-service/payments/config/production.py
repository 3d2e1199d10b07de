"""Production settings: read at start-up by every payments-service instance."""

FLAG_PROVIDER = "old_feature_flag_client"
CHECKOUT_TIMEOUT_SECONDS = 30
REFUND_LIMIT_CENTS = 50_000
