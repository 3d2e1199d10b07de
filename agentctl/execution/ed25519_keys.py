"""The ed25519 keys themselves, with `cryptography` (the `attest` extra) imported at the top.

Loaded by `signing.load_signer` and `signing.load_public_key` on first use only, so that a
command that loads `signing` without signing (`pr create` without `--attest`, `pr status`) never
imports `cryptography`, and one without the extra installed says which extra it needs.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from agentctl.domain.errors import BadInput


@dataclass(frozen=True, slots=True)
class PublicKey:
    keyid: str  # sha256 of the raw public key, hex
    raw: bytes

    @property
    def hex(self) -> str:
        return self.raw.hex()

    def pem(self) -> str:
        return self._key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            self._key().verify(signature, message)
        except InvalidSignature:
            return False
        return True

    def _key(self) -> Ed25519PublicKey:
        return Ed25519PublicKey.from_public_bytes(self.raw)


class Signer:
    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        raw = key.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
        self.public = PublicKey(keyid=hashlib.sha256(raw).hexdigest(), raw=raw)

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)


def load_signer(path: Path, *, create: bool) -> Signer:
    """The private key at `path`; made there (never overwriting) when `create` and absent."""
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
