"""RoTTA's category-balanced memory bank with timeliness and uncertainty (CSTU, Yuan et al. 2023).

Each test sample is filed under its pseudo-label with its entropy and an age. A sample's score is
λ_t·sigmoid(age / capacity) + λ_u·entropy / ln C: old and uncertain samples score high and are the
ones evicted. A new sample enters when its class holds fewer than capacity / C samples and the
bank has room; when the bank is full it replaces the highest-scoring sample of the most occupied
classes, and when its own class is full, that class's highest-scoring sample — in both cases only
if that score is above the newcomer's. Every insertion attempt ages every stored sample by one.
"""

from __future__ import annotations

import math

import torch


class CategoryBalancedMemory:
    def __init__(self, capacity: int, num_class: int, lambda_t: float = 1.0,
                 lambda_u: float = 1.0, items: list | None = None):
        if capacity < 1 or num_class < 2:
            raise ValueError(f"capacity must be >= 1 and num_class >= 2, got {capacity}, {num_class}")
        self.capacity, self.num_class = capacity, num_class
        self.per_class = capacity / num_class
        self.lambda_t, self.lambda_u = lambda_t, lambda_u
        # per class, [sample, entropy, age] lists: plain data, so its owner may keep (and copy,
        # and count the bytes of) the bank's contents without this object
        self.items: list[list[list]] = items if items is not None else [[] for _ in range(num_class)]

    def __len__(self) -> int:
        return sum(len(c) for c in self.items)

    def score(self, age: int, entropy: float) -> float:
        return (self.lambda_t / (1 + math.exp(-age / self.capacity))
                + self.lambda_u * entropy / math.log(self.num_class))

    def add(self, sample: torch.Tensor, label: int, entropy: float) -> None:
        if self._make_room(label, self.score(0, entropy)):
            self.items[label].append([sample, entropy, 0])
        for cls in self.items:
            for item in cls:
                item[2] += 1

    def _make_room(self, label: int, new_score: float) -> bool:
        if len(self.items[label]) < self.per_class:
            if len(self) < self.capacity:
                return True
            sizes = [len(c) for c in self.items]
            most = max(sizes)
            return self._evict([c for c, n in enumerate(sizes) if n == most], new_score)
        return self._evict([label], new_score)

    def _evict(self, classes: list[int], new_score: float) -> bool:
        best = None  # (score, class, index); on ties the last one seen, as the reference
        for c in classes:
            for i, (_, entropy, age) in enumerate(self.items[c]):
                s = self.score(age, entropy)
                if best is None or s >= best[0]:
                    best = (s, c, i)
        if best is None:
            return True
        if best[0] > new_score:
            self.items[best[1]].pop(best[2])
            return True
        return False

    def samples(self) -> tuple[list[torch.Tensor], list[float]]:
        """The stored samples (class by class, oldest first) and their ages / capacity."""
        data = [s for cls in self.items for s, _, _ in cls]
        ages = [a / self.capacity for cls in self.items for _, _, a in cls]
        return data, ages
