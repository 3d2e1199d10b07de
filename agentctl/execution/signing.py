"""The ed25519 key that signs attestations: made on first use in the state home, mode 0600.

Kept apart from the audit checkpoint's HMAC key: that one proves the log to this machine, this
one proves statements to anyone holding the public key. `cryptography` is imported here only,
so commands that do not sign never load it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentctl.domain.errors import BadInput

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

KEY_FILENAME = "attest-ed25519.pem"


@dataclass(frozen=True, slots=True)
class PublicKey:
    keyid: str  # sha256 of the raw public key, hex
    raw: bytes

    @property
    def hex(self) -> str:
        return self.raw.hex()

    def pem(self) -> str:
        from cryptography.hazmat.primitives import serialization

        return self._key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()

    def verify(self, message: bytes, signature: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature

        try:
            self._key().verify(signature, message)
        except InvalidSignature:
            return False
        return True

    def _key(self) -> Ed25519PublicKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        return Ed25519PublicKey.from_public_bytes(self.raw)


class Signer:
    def __init__(self, key: Ed25519PrivateKey) -> None:
        from cryptography.hazmat.primitives import serialization

        self._key = key
        raw = key.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
        self.public = PublicKey(keyid=hashlib.sha256(raw).hexdigest(), raw=raw)

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)


def default_key_path(home: Path) -> Path:
    return home / KEY_FILENAME


def load_signer(path: Path, *, create: bool) -> Signer:
    """The private key at `path`; made there (never overwriting) when `create` and absent."""
    _need_cryptography()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if not path.exists():
        if not create:
            raise BadInput(f"no signing key at {path}")
        _write_new_key(path)
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError, OSError) as error:
        raise BadInput(f"{path} is not an unencrypted PEM private key ({error})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise BadInput(f"{path} is not an ed25519 private key")
    return Signer(key)


def load_public_key(path: Path) -> PublicKey:
    """An ed25519 public key from a PEM file, or the public half of a PEM private key."""
    _need_cryptography()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        data = path.read_bytes()
    except OSError as error:
        raise BadInput(f"cannot read key {path}: {error.strerror}") from None
    if b"PRIVATE KEY" in data:
        return load_signer(path, create=False).public
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as error:
        raise BadInput(f"{path} is not a PEM public key ({error})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise BadInput(f"{path} is not an ed25519 public key")
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PublicKey(keyid=hashlib.sha256(raw).hexdigest(), raw=raw)


def _write_new_key(path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # another process made it first: use theirs
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(pem)


def _need_cryptography() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise BadInput("signing attestations needs the `cryptography` package: "
                       "pip install 'agentctl[attest]'") from None
