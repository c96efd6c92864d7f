"""The SecAgg+ round: participants mask, the coordinator learns only the sum.

Four stages, as Flower's ``secaggplus`` workflow runs them:

1. setup — each participant makes two X25519 key pairs and publishes the public halves;
2. share keys — it Shamir-shares its private mask seed ``b`` and its first private key among its
   neighbours (a ring of ``num_shares`` around it), each share sealed for its holder and routed
   through the coordinator;
3. masked input — it quantizes its update into Z_modulus and adds PRG(b) plus, for every
   neighbour that completed stage 2, ±PRG(pairwise seed) (the sign by id order, so pairs cancel);
4. unmask — survivors send the shares of ``b`` of every surviving neighbour and the shares of the
   first private key of every neighbour that dropped after stage 2; the coordinator removes the
   private masks and the dropped participants' pairwise masks.

An honest participant never reveals both secrets of one neighbour, so the coordinator never
unmasks an individual update. With fewer than ``threshold`` shares for someone the round fails
with :class:`SecAggRoundFailed` naming who could not be recovered: a partial sum is never returned.
Messages are plain dicts of ints, bytes and numpy arrays, so any transport can carry them.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import numpy as np

from . import keys, prg, quantize, shamir


class SecAggRoundFailed(RuntimeError):
    """The round cannot produce the sum (too many dropouts, or a protocol violation)."""


@dataclass(frozen=True)
class Config:
    """Parameters every party of a round agrees on (Flower's defaults for the ranges)."""

    size: int                      # entries of the flattened update
    num_shares: int                # neighbourhood size, the participant included
    threshold: int                 # shares needed to reconstruct a secret
    clip: float = 8.0              # update entries are clipped to [-clip, clip]
    levels: int = 1 << 22          # quantization levels over [-clip, clip]
    modulus: int = 1 << 32         # the field Z_modulus the masked sums live in
    max_weight: float = 1000.0     # weights are scaled by 1/max_weight before quantization

    def check(self, participants: int) -> None:
        if self.modulus & (self.modulus - 1) or not self.levels < self.modulus <= 1 << 32:
            raise ValueError(f"modulus must be a power of two above levels and at most 2**32 "
                             f"(levels={self.levels}, modulus={self.modulus})")
        # the integer sum of all quantized entries (and of the weights) must not wrap
        if participants * max(self.levels, self.max_weight) >= self.modulus:
            raise ValueError(f"{participants} participants x {self.levels} levels overflow a modulus of "
                             f"{self.modulus}: lower levels or raise the modulus")
        if not 2 <= self.threshold <= self.num_shares:
            raise ValueError(f"threshold {self.threshold} must lie in 2..num_shares ({self.num_shares})")


def neighbours(ids: list[int], num_shares: int) -> dict[int, list[int]]:
    """SecAgg+'s communication graph: a ring, each id with num_shares // 2 on either side."""
    half = num_shares // 2
    n = len(ids)
    return {nid: sorted({ids[(i + k) % n] for k in range(-half, half + 1)}) for i, nid in enumerate(ids)}


def _label(kind: bytes, a: int, b: int) -> bytes:
    lo, hi = sorted((a, b))
    return kind + lo.to_bytes(4, "big") + hi.to_bytes(4, "big")


def _pair_mask(sk1: bytes, pk1_peer: bytes, me: int, peer: int, cfg: Config) -> np.ndarray:
    seed = keys.agree(sk1, pk1_peer, _label(b"secagg+mask", me, peer))
    m = prg.mask(seed, cfg.size + 1, cfg.modulus)
    return m if me > peer else -m


def _pack(src: int, dst: int, b_share: bytes, sk_share: bytes) -> bytes:
    return src.to_bytes(4, "big") + dst.to_bytes(4, "big") + len(b_share).to_bytes(2, "big") + b_share + sk_share


def _unpack(plain: bytes) -> tuple[int, int, bytes, bytes]:
    n = int.from_bytes(plain[8:10], "big")
    return int.from_bytes(plain[:4], "big"), int.from_bytes(plain[4:8], "big"), plain[10:10 + n], plain[10 + n:]


@dataclass
class Participant:
    """One participant's side of a round; its secrets never appear in what it returns, except
    the Shamir shares stage 4 asks of it for others."""

    nid: int
    cfg: Config
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(secrets.randbits(128)))

    def setup(self, neighbour_ids: list[int]) -> dict:
        self.neighbour_ids = list(neighbour_ids)
        self.sk1, self.sk2 = keys.new_private_key(), keys.new_private_key()
        return {"pk1": keys.public_key(self.sk1), "pk2": keys.public_key(self.sk2)}

    def share_keys(self, public: dict[int, dict]) -> dict[int, bytes]:
        """``public``: neighbour id -> its pk1/pk2 (itself included). Returns sealed shares by
        destination."""
        if set(public) - set(self.neighbour_ids):
            raise SecAggRoundFailed(f"participant {self.nid}: keys offered for non-neighbours "
                                    f"{sorted(set(public) - set(self.neighbour_ids))}")
        if len(public) < self.cfg.threshold:
            raise SecAggRoundFailed(f"participant {self.nid}: {len(public)} neighbours left, "
                                    f"threshold {self.cfg.threshold}")
        pks = [p[k] for p in public.values() for k in ("pk1", "pk2")]
        if len(set(pks)) != len(pks):
            raise SecAggRoundFailed(f"participant {self.nid}: repeated public keys")
        if public.get(self.nid) != {"pk1": keys.public_key(self.sk1), "pk2": keys.public_key(self.sk2)}:
            raise SecAggRoundFailed(f"participant {self.nid}: its own public keys were altered")
        self.public = public
        self.b = secrets.token_bytes(32)
        holders = sorted(public)
        b_shares = shamir.split(self.b, self.cfg.threshold, holders)
        sk_shares = shamir.split(self.sk1, self.cfg.threshold, holders)
        self.held: dict[int, tuple[bytes, bytes]] = {self.nid: (b_shares[self.nid], sk_shares[self.nid])}
        out = {}
        for dst in holders:
            if dst != self.nid:
                key = keys.agree(self.sk2, public[dst]["pk2"], _label(b"secagg+share", self.nid, dst))
                out[dst] = keys.seal(key, _pack(self.nid, dst, b_shares[dst], sk_shares[dst]),
                                     _label(b"route", self.nid, dst))
        return out

    def masked_input(self, sealed: dict[int, bytes], update: np.ndarray, weight: float = 1.0) -> np.ndarray:
        """``sealed``: source id -> the ciphertext it addressed to this participant. ``update`` is
        the flat float vector; ``weight`` (e.g. sample count) scales it, as Flower's SecAgg+."""
        if len(sealed) + 1 < self.cfg.threshold:
            raise SecAggRoundFailed(f"participant {self.nid}: shares from {len(sealed)} neighbours, "
                                    f"threshold {self.cfg.threshold}")
        for src, box in sealed.items():
            if src not in self.public or src == self.nid:
                raise SecAggRoundFailed(f"participant {self.nid}: a share from non-neighbour {src}")
            key = keys.agree(self.sk2, self.public[src]["pk2"], _label(b"secagg+share", self.nid, src))
            s, d, b_share, sk_share = _unpack(keys.open_sealed(key, box, _label(b"route", src, self.nid)))
            if (s, d) != (src, self.nid):
                raise SecAggRoundFailed(f"participant {self.nid}: share addressed {s}->{d} arrived as {src}")
            self.held[src] = (b_share, sk_share)
        update = np.asarray(update, np.float64).reshape(-1)
        if update.size != self.cfg.size:
            raise ValueError(f"update has {update.size} entries, the round expects {self.cfg.size}")
        if not np.isfinite(update).all():
            raise ValueError(f"participant {self.nid}: the update holds NaN or inf")
        if not 0 < weight <= self.cfg.max_weight or weight != int(weight):
            raise ValueError(f"weight {weight} must be an integer (a sample count) in "
                             f"1..max_weight={self.cfg.max_weight}")
        q = quantize.quantize(update * (weight / self.cfg.max_weight), self.cfg.clip, self.cfg.levels, self.rng)
        vec = np.append(q, int(weight))  # the weight travels masked too: the sum of weights
        vec = vec + prg.mask(self.b, self.cfg.size + 1, self.cfg.modulus)
        for peer in sealed:
            vec = vec + _pair_mask(self.sk1, self.public[peer]["pk1"], self.nid, peer, self.cfg)
        self.masked_with = sorted(sealed)
        return vec % self.cfg.modulus

    def unmask(self, alive: list[int], dropped: list[int]) -> dict[int, bytes]:
        """Shares of ``b`` for neighbours still in, of the first private key for those gone."""
        if set(alive) & set(dropped):
            raise SecAggRoundFailed(f"participant {self.nid}: asked for both secrets of "
                                    f"{sorted(set(alive) & set(dropped))}")
        if len(alive) < self.cfg.threshold:
            raise SecAggRoundFailed(f"participant {self.nid}: {len(alive)} survivors, threshold {self.cfg.threshold}")
        out = {}
        for nid in alive:
            if nid in self.held:
                out[nid] = self.held[nid][0]
        for nid in dropped:
            if nid in self.held:
                out[nid] = self.held[nid][1]
        return out


@dataclass
class Coordinator:
    """The server side: routes sealed shares, sums masked vectors, removes the masks."""

    cfg: Config
    ids: list[int]

    def __post_init__(self):
        self.cfg.check(len(self.ids))
        if len(set(self.ids)) != len(self.ids) or len(self.ids) < 2:
            raise ValueError("a round needs at least two distinct participant ids")
        order = list(self.ids)
        secrets.SystemRandom().shuffle(order)  # the ring order is the coordinator's, unpredictable
        self.graph = neighbours(order, min(self.cfg.num_shares, len(order)))

    def _need(self, stage: str, alive: set[int]) -> None:
        for nid in alive:
            have = len(set(self.graph[nid]) & alive)
            if have < self.cfg.threshold:
                raise SecAggRoundFailed(f"{stage}: participant {nid} has {have} live neighbours "
                                        f"(itself included), the threshold is {self.cfg.threshold}")

    def public_keys(self, answers: dict[int, dict]) -> dict[int, dict[int, dict]]:
        """Stage 1 answers -> what each live participant receives in stage 2."""
        self.pk = dict(answers)
        self.s1 = set(answers)
        self._need("setup", self.s1)
        return {nid: {j: self.pk[j] for j in self.graph[nid] if j in self.s1} for nid in self.s1}

    def route(self, answers: dict[int, dict[int, bytes]]) -> dict[int, dict[int, bytes]]:
        """Stage 2 answers (sealed shares by destination) -> each recipient's inbox."""
        self.s2 = set(answers) & self.s1
        self._need("share keys", self.s2)
        inbox = {nid: {} for nid in self.s2}
        for src in self.s2:
            for dst, box in answers[src].items():
                if dst in self.s2:
                    inbox[dst][src] = box
        return inbox

    def collect(self, answers: dict[int, np.ndarray]) -> dict[int, tuple[list[int], list[int]]]:
        """Stage 3 masked vectors -> each survivor's unmask request (alive, dropped neighbours)."""
        self.s3 = set(answers) & self.s2
        self._need("masked input", self.s3)
        total = np.zeros(self.cfg.size + 1, np.int64)
        for nid in self.s3:
            vec = np.asarray(answers[nid], np.int64)
            if vec.shape != total.shape or (vec < 0).any() or (vec >= self.cfg.modulus).any():
                raise SecAggRoundFailed(f"masked input from {nid} is not a vector of {total.size} field elements")
            total = (total + vec) % self.cfg.modulus
        self.total = total
        dropped = self.s2 - self.s3
        return {nid: ([j for j in self.graph[nid] if j in self.s3], [j for j in self.graph[nid] if j in dropped])
                for nid in self.s3}

    def unmask(self, answers: dict[int, dict[int, bytes]], masked_with: dict[int, list[int]] | None = None
               ) -> tuple[np.ndarray, float]:
        """Stage 4 shares -> (the weighted mean of the survivors' updates, their total weight).

        The mean is sum(w_i x_i) / sum(w_i); with all weights 1 it times the count is the sum.
        ``masked_with`` (survivor -> the peers it masked with) is needed when the coordinator did
        not route stage 2 itself; by default it is what ``route`` delivered."""
        pool: dict[int, list[bytes]] = {nid: [] for nid in self.s2}
        for holder, shares in answers.items():
            if holder not in self.s3:
                continue
            for owner, share in shares.items():
                if owner in pool:
                    pool[owner].append(share)
        total = self.total.copy()
        for nid in sorted(self.s2):
            try:
                secret = shamir.combine(pool[nid], self.cfg.threshold)
            except shamir.NotEnoughShares as e:
                what = "mask seed" if nid in self.s3 else "private key of the dropped participant"
                raise SecAggRoundFailed(f"unmask: cannot recover the {what} {nid}: {e}") from None
            if nid in self.s3:
                total = total - prg.mask(secret, self.cfg.size + 1, self.cfg.modulus)
            else:
                # undo what each surviving neighbour added for its pair with the dropped one:
                # the dropped side's sign is the opposite of the survivor's
                for peer in self.graph[nid]:
                    if peer in self.s3 and (masked_with is None or nid in masked_with[peer]):
                        total = total + _pair_mask(secret, self.pk[peer]["pk1"], nid, peer, self.cfg)
        total %= self.cfg.modulus
        weight = float(total[-1])
        weighted_sum = quantize.dequantize_sum(total[:-1], len(self.s3), self.cfg.clip, self.cfg.levels)
        return weighted_sum * (self.cfg.max_weight / weight), weight

    @property
    def survivors(self) -> list[int]:
        return sorted(self.s3)
