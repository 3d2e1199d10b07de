"""The state home, as the store's modules have long imported it; it lives in `agentctl.home`."""

from agentctl.home import DATABASE_FILENAME, Home, resolve_home

__all__ = ["DATABASE_FILENAME", "Home", "resolve_home"]
