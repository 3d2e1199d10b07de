"""The model gateway: every model request of an agent CLI passes through agentctl.

The CLI inside the sandbox is given a base URL on the gateway and a placeholder key; the
gateway, in agentctl's own process, forwards to the real endpoint with the real key, meters
each exchange as it streams and ends a response once a budget is spent.
"""
