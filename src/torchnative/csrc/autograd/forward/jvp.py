"""FunctionsManual.cpp's helpers that only forward formulas call (``*_jvp``...), written from
upstream's definitions. Tangents are read with ``levels.fw_grad``."""

from __future__ import annotations
