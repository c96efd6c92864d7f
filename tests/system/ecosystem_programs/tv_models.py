"""torchvision model constructors with random (seeded) weights, forward in eval and in train mode.

Weights are initialised in float32 from the seeded generator and then widened, so the float64
run computes the same network; inputs are made in-process. Train-mode outputs of models with
dropout or stochastic depth carry masks that float64 draws differently: the same pass with those
layers off is recorded too, and its upstream error sets their tolerance.
"""

import torch
import torchvision
from torchvision import models
from torchvision.models import convnext, swin_transformer, vision_transformer
from torchvision.ops import StochasticDepth


def image(shape, dt, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g, dtype=torch.float64).to(dt)


def classify(build, shape):
    def case(dt):
        def run():
            torch.manual_seed(0)
            m = build().to(dt)
            x = image(shape, dt)
            m.eval()
            with torch.no_grad():
                ev = m(x)
            m.train()
            torch.manual_seed(1)
            with torch.no_grad():
                tr = m(x)
            out = {"eval": ev, "train": tr}
            random = [mod for mod in m.modules() if isinstance(mod, (torch.nn.Dropout, StochasticDepth))
                      and mod.p > 0]
            if random:  # the same train-mode pass with its random layers off: the tolerance source
                for mod in random:
                    mod.p = 0.0
                with torch.no_grad():
                    out["train_without_dropout"] = m(x)
            return out
        return run
    return case


def small_convnext():
    cfg = convnext.CNBlockConfig
    return convnext.ConvNeXt([cfg(16, 32, 1), cfg(32, 64, 1), cfg(64, None, 1)], num_classes=10)


def small_swin():
    return swin_transformer.SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2],
                                            num_heads=[2, 4], window_size=[4, 4], num_classes=10)


def small_vit():
    return vision_transformer.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                                                hidden_dim=64, mlp_dim=128, num_classes=10)


def detection(dt):
    def run():
        torch.manual_seed(0)
        m = models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None, num_classes=5, min_size=160, max_size=200).to(dt)
        imgs = [image((3, 96, 128), dt, 2), image((3, 112, 100), dt, 3)]
        m.eval()
        with torch.no_grad():
            det = m(imgs)
        out = {}
        for i, d in enumerate(det):
            out.update({f"eval{i}_{k}": v for k, v in d.items()})
        m.train()
        targets = [{"boxes": torch.tensor([[10., 12., 60., 70.], [30., 5., 90., 50.]], dtype=dt),
                    "labels": torch.tensor([1, 3])},
                   {"boxes": torch.tensor([[5., 20., 40., 100.]], dtype=dt), "labels": torch.tensor([2])}]
        torch.manual_seed(1)
        losses = m(imgs, targets)
        out.update({f"train_{k}": v for k, v in losses.items()})
        return out
    return run


def cases(dt):
    return {
        "resnet18": classify(lambda: models.resnet18(num_classes=10), (2, 3, 64, 64))(dt),
        "mobilenet_v3_small": classify(lambda: models.mobilenet_v3_small(num_classes=10), (2, 3, 64, 64))(dt),
        "efficientnet_b0": classify(lambda: models.efficientnet_b0(num_classes=10), (2, 3, 64, 64))(dt),
        "vit": classify(small_vit, (2, 3, 32, 32))(dt),
        "convnext": classify(small_convnext, (2, 3, 32, 32))(dt),
        "swin": classify(small_swin, (2, 3, 32, 32))(dt),
        "fasterrcnn_mobilenet_v3_fpn": detection(dt),
    }
