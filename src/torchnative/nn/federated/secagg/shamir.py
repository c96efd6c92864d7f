"""Shamir secret sharing over the prime field GF(2**521 - 1).

A secret of up to 64 bytes is one field element, so a 32-byte mask seed or private key is shared
as a single polynomial evaluation per holder. The coefficients come from ``secrets`` (the OS
generator); reconstruction is Lagrange interpolation at zero.
"""

from __future__ import annotations

import secrets

PRIME = (1 << 521) - 1  # a Mersenne prime: every secret below 2**512 fits with room to spare
_Y_BYTES = 66
MAX_SECRET_BYTES = 64


class NotEnoughShares(ValueError):
    """Fewer shares than the threshold: the secret is information-theoretically hidden."""


def split(secret: bytes, threshold: int, holders: list[int]) -> dict[int, bytes]:
    """Shares of ``secret``, one per holder id (distinct, in 1..2**32-1); any ``threshold`` of
    them reconstruct it, fewer reveal nothing."""
    if len(secret) > MAX_SECRET_BYTES:
        raise ValueError(f"a secret of {len(secret)} bytes exceeds the field ({MAX_SECRET_BYTES} bytes)")
    if not 1 <= threshold <= len(holders):
        raise ValueError(f"threshold {threshold} must lie in 1..{len(holders)} (the number of holders)")
    if len(set(holders)) != len(holders) or not all(0 < x < 1 << 32 for x in holders):
        raise ValueError("holder ids must be distinct integers in 1..2**32-1")
    # a length prefix keeps leading zero bytes of the secret
    value = int.from_bytes(bytes([len(secret)]) + secret, "big")
    coeffs = [value] + [secrets.randbelow(PRIME) for _ in range(threshold - 1)]
    shares = {}
    for x in holders:
        y = 0
        for c in reversed(coeffs):  # Horner
            y = (y * x + c) % PRIME
        shares[x] = x.to_bytes(4, "big") + y.to_bytes(_Y_BYTES, "big")
    return shares


def combine(shares: list[bytes], threshold: int) -> bytes:
    """The secret from at least ``threshold`` distinct shares."""
    points = {}
    for share in shares:
        if len(share) != 4 + _Y_BYTES:
            raise ValueError(f"a share is {4 + _Y_BYTES} bytes, got {len(share)}")
        points[int.from_bytes(share[:4], "big")] = int.from_bytes(share[4:], "big")
    if len(points) < threshold:
        raise NotEnoughShares(f"{len(points)} distinct shares, the threshold is {threshold}")
    xs = list(points)[:threshold]
    value = 0
    for i in xs:
        num, den = 1, 1
        for j in xs:
            if j != i:
                num = num * (-j) % PRIME
                den = den * (i - j) % PRIME
        value = (value + points[i] * num * pow(den, -1, PRIME)) % PRIME
    raw = value.to_bytes(MAX_SECRET_BYTES + 1, "big").lstrip(b"\0")
    if not raw or raw[0] != len(raw) - 1:
        raise ValueError("the shares do not reconstruct a well-formed secret (corrupt or mixed shares)")
    return raw[1:]
