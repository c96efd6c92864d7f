"""Key agreement and authenticated encryption for SecAgg+, from the ``cryptography`` package.

Each participant holds two X25519 key pairs: the first agrees the pairwise mask seeds, the second
the keys that encrypt secret shares sent to a neighbour through the coordinator. A shared secret
goes through HKDF-SHA256 with a label, so the two uses never share key material.
"""

from __future__ import annotations

import os

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_RAW = dict(encoding=serialization.Encoding.Raw, format=serialization.PublicFormat.Raw)


def new_private_key() -> bytes:
    return X25519PrivateKey.generate().private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())


def public_key(private: bytes) -> bytes:
    return X25519PrivateKey.from_private_bytes(private).public_key().public_bytes(**_RAW)


def agree(private: bytes, peer_public: bytes, label: bytes) -> bytes:
    """A 32-byte key both ends derive: ECDH, then HKDF-SHA256 bound to ``label``."""
    shared = X25519PrivateKey.from_private_bytes(private).exchange(X25519PublicKey.from_public_bytes(peer_public))
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=label).derive(shared)


def seal(key: bytes, plaintext: bytes, context: bytes) -> bytes:
    """ChaCha20-Poly1305 with a random nonce; ``context`` (sender, receiver) is authenticated."""
    nonce = os.urandom(12)
    return nonce + ChaCha20Poly1305(key).encrypt(nonce, plaintext, context)


def open_sealed(key: bytes, sealed: bytes, context: bytes) -> bytes:
    return ChaCha20Poly1305(key).decrypt(sealed[:12], sealed[12:], context)
