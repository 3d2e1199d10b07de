"""The ed25519 key that signs attestations: made on first use in the state home, mode 0600.

Kept apart from the audit checkpoint's HMAC key: that one proves the log to this machine, this
one proves statements to anyone holding the public key. The keys themselves are in
`ed25519_keys`, which imports `cryptography` (the `attest` extra) at its top; it is loaded here
when a key is read, so commands that do not sign never load it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentctl.domain.errors import BadInput

if TYPE_CHECKING:
    from agentctl.execution.ed25519_keys import PublicKey, Signer

KEY_FILENAME = "attest-ed25519.pem"


def default_key_path(home: Path) -> Path:
    return home / KEY_FILENAME


def load_signer(path: Path, *, create: bool) -> Signer:
    """The private key at `path`; made there (never overwriting) when `create` and absent."""
    return _keys().load_signer(path, create=create)


def load_public_key(path: Path) -> PublicKey:
    """An ed25519 public key from a PEM file, or the public half of a PEM private key."""
    return _keys().load_public_key(path)


class _Keys(Protocol):
    """What this module uses of `ed25519_keys` (the module itself, once imported)."""

    def load_signer(self, path: Path, *, create: bool) -> Signer: ...
    def load_public_key(self, path: Path) -> PublicKey: ...


def _keys() -> _Keys:
    """`ed25519_keys`, imported with the first key read."""
    try:
        from agentctl.execution import ed25519_keys
    except ImportError as error:
        raise _without_cryptography(error) from None
    return ed25519_keys


def _without_cryptography(error: ImportError) -> Exception:
    """What to raise when `ed25519_keys` cannot be imported: a `cryptography` that is not there
    is bad input (which extra to install); an import error of agentctl's own is itself."""
    if (error.name or "").startswith("agentctl"):
        return error
    return BadInput("signing attestations needs the `cryptography` package: "
                    "pip install 'agentctl[attest]'")
