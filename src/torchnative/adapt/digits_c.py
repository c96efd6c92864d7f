"""digits-C: scikit-learn's 8×8 digits under the 15 CIFAR-10-C corruptions at 5 severities.

Pure numpy and deterministic (each corruption × severity draws from its own seeded generator).
Severity parameters follow Hendrycks & Dietterich's ``make_cifar_c.py``; spatial ones (blur radii,
displacements, zoom, pixelation) are scaled by 8/32. Three corruptions need assets or codecs that
an 8×8 grey image does not have, and are stood in for, in the same spirit and severities:
frost (a seeded fractal texture instead of the frost photographs), snow (seeded flakes streaked
along one direction) and JPEG (an 8×8 image is one JPEG block: its DCT quantised with the standard
luminance table at the severity's quality). Images are floats in [0, 1], shape (N, 1, 8, 8).
"""

from __future__ import annotations

import zlib

import numpy as np

CORRUPTIONS = ("gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur",
               "motion_blur", "zoom_blur", "snow", "frost", "fog", "brightness", "contrast",
               "elastic_transform", "pixelate", "jpeg_compression")
S = 8 / 32  # spatial scale from CIFAR's 32×32 to 8×8


def load_digits_split(seed: int = 0, n_test: int = 597):
    """(x_train, y_train, x_test, y_test): images in [0, 1] as float32 (N, 1, 8, 8), labels int64."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    te, tr = order[:n_test], order[n_test:]
    return x[tr], y[tr], x[te], y[te]


def corrupt(x: np.ndarray, name: str, severity: int) -> np.ndarray:
    """``x`` (N, 1, 8, 8) in [0, 1] corrupted; the same call always gives the same result."""
    if name not in CORRUPTIONS:
        raise ValueError(f"unknown corruption {name!r}; choose from {', '.join(CORRUPTIONS)}")
    if severity not in (1, 2, 3, 4, 5):
        raise ValueError(f"severity must be 1..5, got {severity!r}")
    rng = np.random.default_rng(zlib.crc32(f"{name}/{severity}".encode()))
    imgs = np.asarray(x, dtype=np.float64)[:, 0]
    out = np.stack([_FUNCS[name](im, severity - 1, rng) for im in imgs])
    return np.clip(out, 0, 1).astype(np.float32)[:, None]


# ----------------------------------------------------------------------------- image helpers
def _gauss_kernel(sigma: float) -> np.ndarray:
    r = max(1, int(np.ceil(3 * sigma)))
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / max(sigma, 1e-6)) ** 2)
    return k / k.sum()


def _conv2(im: np.ndarray, k: np.ndarray) -> np.ndarray:
    """2-D correlation with reflect padding, same size."""
    ph, pw = k.shape[0] // 2, k.shape[1] // 2
    p = np.pad(im, ((ph, ph), (pw, pw)), mode="reflect" if max(ph, pw) < im.shape[0] else "edge")
    out = np.zeros_like(im)
    for i in range(k.shape[0]):
        for j in range(k.shape[1]):
            out += k[i, j] * p[i:i + im.shape[0], j:j + im.shape[1]]
    return out


def _blur(im, sigma):
    k = _gauss_kernel(sigma)
    return _conv2(im, np.outer(k, k))


def _sample(im: np.ndarray, yy: np.ndarray, xx: np.ndarray) -> np.ndarray:
    """Bilinear sampling at float coordinates, edges clamped."""
    h, w = im.shape
    yy, xx = np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)
    y0, x0 = np.floor(yy).astype(int), np.floor(xx).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = yy - y0, xx - x0
    return (im[y0, x0] * (1 - fy) * (1 - fx) + im[y1, x0] * fy * (1 - fx)
            + im[y0, x1] * (1 - fy) * fx + im[y1, x1] * fy * fx)


def _zoom(im, z):
    h, w = im.shape
    c = (h - 1) / 2
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    return _sample(im, (yy - c) / z + c, (xx - c) / z + c)


def _plasma(rng, size=8, decay=3.0):
    """A seeded fractal (diamond-square-like, by octaves of upsampled noise) in [0, 1]."""
    out = np.zeros((size, size))
    amp, n = 1.0, 2
    while n <= size:
        g = rng.uniform(-1, 1, (n, n))
        yy, xx = np.mgrid[0:size, 0:size] * ((n - 1) / (size - 1))
        out += amp * _sample(g, yy, xx)
        amp /= decay
        n *= 2
    out -= out.min()
    return out / max(out.max(), 1e-12)


# ----------------------------------------------------------------------------- corruptions
def gaussian_noise(im, s, rng):
    return im + rng.normal(size=im.shape, scale=[0.04, 0.06, .08, .09, .10][s])


def shot_noise(im, s, rng):
    c = [500, 250, 100, 75, 50][s]
    return rng.poisson(im * c) / c


def impulse_noise(im, s, rng):
    c = [.01, .02, .03, .05, .07][s]
    im = im.copy()
    m = rng.uniform(size=im.shape)
    im[m < c / 2] = 0.0
    im[(m >= c / 2) & (m < c)] = 1.0
    return im


def defocus_blur(im, s, rng):
    radius, alias = [(0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1, 0.2), (1.5, 0.1)][s]
    r = radius * S * 4  # a disk of the scaled radius, at least one pixel across
    L = np.arange(-max(1, int(np.ceil(r))), max(1, int(np.ceil(r))) + 1)
    yy, xx = np.meshgrid(L, L, indexing="ij")
    disk = ((yy ** 2 + xx ** 2) <= max(r, 1) ** 2).astype(np.float64)
    disk = _conv2(disk, np.outer(_gauss_kernel(alias), _gauss_kernel(alias))) if alias > 0.15 else disk
    return _conv2(im, disk / disk.sum())


def glass_blur(im, s, rng):
    sigma, delta, iters = [(0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2), (0.4, 1, 2)][s]
    im = _blur(im, max(sigma, 1e-3))
    h, w = im.shape
    for _ in range(iters):
        for i in range(h - delta, delta - 1, -1):
            for j in range(w - delta, delta - 1, -1):
                dy, dx = rng.integers(-delta, delta, size=2)
                ii, jj = min(max(i + dy, 0), h - 1), min(max(j + dx, 0), w - 1)
                if i < h and j < w:
                    im[i, j], im[ii, jj] = im[ii, jj], im[i, j]
    return _blur(im, max(sigma, 1e-3))


def motion_blur(im, s, rng):
    radius, sigma = [(10, 1), (10, 1.5), (10, 2), (10, 2.5), (12, 3)][s]
    angle = rng.uniform(-45, 45) * np.pi / 180
    steps = np.arange(0, max(2, int(round(radius * S))) + 1)
    wts = np.exp(-0.5 * (steps / (sigma * S * 2)) ** 2)
    yy, xx = np.mgrid[0:im.shape[0], 0:im.shape[1]].astype(np.float64)
    out = sum(w * _sample(im, yy - t * np.sin(angle), xx - t * np.cos(angle))
              for t, w in zip(steps, wts))
    return out / wts.sum()


def zoom_blur(im, s, rng):
    top = [1.06, 1.11, 1.16, 1.21, 1.26][s]
    zooms = np.arange(1, top, 0.01)
    return (im + sum(_zoom(im, z) for z in zooms)) / (len(zooms) + 1)


def snow(im, s, rng):
    loc, scale, thr, blend = [(0.1, 0.2, 0.6, 0.95), (0.1, 0.2, 0.5, 0.9), (0.15, 0.3, 0.4, 0.85),
                              (0.25, 0.3, 0.45, 0.85), (0.3, 0.3, 0.4, 0.8)][s]
    flakes = rng.normal(loc, scale, im.shape)
    flakes[flakes < thr] = 0
    flakes = motion_blur(flakes, min(s, 4), rng)
    base = blend * im + (1 - blend) * np.maximum(im, im * 1.5 + 0.5)
    return base + flakes + np.rot90(flakes, 2)


def frost(im, s, rng):
    a, b = [(1, 0.2), (1, 0.3), (0.9, 0.4), (0.85, 0.4), (0.75, 0.45)][s]
    return a * im + b * _plasma(rng, decay=1.5)


def fog(im, s, rng):
    amount, decay = [(.2, 3), (.5, 3), (.75, 2.5), (1, 2), (1.5, 1.75)][s]
    mx = im.max()
    return (im + amount * _plasma(rng, decay=decay)) * mx / (mx + amount)


def brightness(im, s, rng):
    return im + [.05, .1, .15, .2, .3][s]


def contrast(im, s, rng):
    c = [.75, .5, .4, .3, 0.15][s]
    m = im.mean()
    return (im - m) * c + m


def elastic_transform(im, s, rng):
    # (affine jitter, displacement magnitude, smoothing) in CIFAR pixels × 8/32
    aff, alpha, sigma = [(0, 0, 0.08), (0.05, 0.2, 0.07), (0.08, 0.06, 0.06), (0.1, 0.04, 0.05),
                         (0.1, 0.03, 0.03)][s]
    n = im.shape[0]
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float64)
    shift = rng.uniform(-aff * n, aff * n, size=2)
    dy = _blur(rng.uniform(-1, 1, im.shape), max(sigma * n, 0.3)) * alpha * n * 4
    dx = _blur(rng.uniform(-1, 1, im.shape), max(sigma * n, 0.3)) * alpha * n * 4
    return _sample(im, yy + dy + shift[0], xx + dx + shift[1])


def pixelate(im, s, rng):
    c = [0.95, 0.9, 0.85, 0.75, 0.65][s]
    n = im.shape[0]
    m = max(1, int(round(n * c)))
    yy, xx = np.mgrid[0:m, 0:m] * ((n - 1) / max(m - 1, 1))
    small = _sample(im, yy.astype(np.float64), xx.astype(np.float64))
    idx = np.minimum((np.arange(n) * m) // n, m - 1)  # nearest back up, as a box upsample
    return small[idx][:, idx]


_LUMA = np.array([[16, 11, 10, 16, 24, 40, 51, 61], [12, 12, 14, 19, 26, 58, 60, 55],
                  [14, 13, 16, 24, 40, 57, 69, 56], [14, 17, 22, 29, 51, 87, 80, 62],
                  [18, 22, 37, 56, 68, 109, 103, 77], [24, 35, 55, 64, 81, 104, 113, 92],
                  [49, 64, 78, 87, 103, 121, 120, 101], [72, 92, 95, 98, 112, 100, 103, 99]], float)


def _dct_matrix(n=8):
    k = np.arange(n)
    m = np.cos(np.pi * (2 * k[None] + 1) * k[:, None] / (2 * n)) * np.sqrt(2 / n)
    m[0] /= np.sqrt(2)
    return m


def jpeg_compression(im, s, rng):
    q = [80, 65, 58, 50, 40][s]
    scale = 5000 / q if q < 50 else 200 - 2 * q
    table = np.clip(np.floor((_LUMA * scale + 50) / 100), 1, 255)
    d = _dct_matrix()
    coef = d @ (im * 255 - 128) @ d.T
    coef = np.round(coef / table) * table
    return (d.T @ coef @ d + 128) / 255


_FUNCS = {n: globals()[n] for n in CORRUPTIONS}


# ----------------------------------------------------------------------------- streams
def stream(x, y, setting: str, corruptions=CORRUPTIONS, severity: int = 5, batch_size: int = 64,
           seed: int = 0):
    """Batches (x, y, domain) of a test stream.

    ``reset``/``continual``: one corruption after another (the caller reverts between domains in
    ``reset``); ``mixed``: all corruptions' samples shuffled together; ``label``: each domain's
    samples sorted by label (a non-i.i.d., label-correlated stream).
    """
    if setting not in ("reset", "continual", "mixed", "label"):
        raise ValueError(f"unknown setting {setting!r} (reset, continual, mixed, label)")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    rng = np.random.default_rng(seed)
    doms = [(c, corrupt(x, c, severity), y) for c in corruptions]
    if setting == "mixed":
        xs = np.concatenate([d[1] for d in doms])
        ys = np.concatenate([d[2] for d in doms])
        order = rng.permutation(len(ys))
        doms = [("mixed", xs[order], ys[order])]
    for dom in doms:
        name, xs, ys = dom[0], dom[1], dom[2]
        order = np.argsort(ys, kind="stable") if setting == "label" else (
            rng.permutation(len(ys)) if setting != "mixed" else np.arange(len(ys)))
        for i in range(0, len(ys), batch_size):
            sel = order[i:i + batch_size]
            yield xs[sel], ys[sel], name
