"""payments-service: checkout and refunds."""
