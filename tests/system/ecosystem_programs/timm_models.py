"""timm: model families created with random (seeded) weights and run forward in eval mode, and
fine-tuning steps with timm's own optimizer factory and loss. Nothing is downloaded."""

import torch
import timm
from timm.loss import LabelSmoothingCrossEntropy
from timm.optim import create_optimizer_v2


def image(shape, dt, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g, dtype=torch.float64).to(dt)


def forward(name, size, **kw):
    def case(dt):
        def run():
            torch.manual_seed(0)
            m = timm.create_model(name, pretrained=False, num_classes=7, **kw).to(dt).eval()
            with torch.no_grad():
                return {"logits": m(image((8, 3, size, size), dt)),
                        "features": m.forward_features(image((1, 3, size, size), dt, 2))}
        return run
    return case


def finetune(dt, lr=1e-3, steps=3):
    def run():
        torch.manual_seed(0)
        m = timm.create_model("resnet10t", pretrained=False, num_classes=5).to(dt)
        m.train()
        opt = create_optimizer_v2(m, "adamw", lr=lr, weight_decay=0.05)
        loss_fn = LabelSmoothingCrossEntropy(0.1)
        x = image((4, 3, 48, 48), dt, 3)
        y = torch.tensor([0, 3, 1, 4])
        watched = {"fc.weight": m.fc.weight, "conv1.0.weight": m.conv1[0].weight}
        out = {f"initial/{k}": v.detach().clone() for k, v in watched.items()}
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = loss_fn(m(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        out["losses"] = torch.stack(losses)
        out.update({k: v.detach() for k, v in watched.items()})
        return out
    return run


def cases(dt):
    return {
        "resnet18": forward("resnet18", 64)(dt),
        "efficientnet_b0": forward("efficientnet_b0", 64)(dt),
        "mobilenetv3_small_050": forward("mobilenetv3_small_050", 64)(dt),
        "convnext_atto": forward("convnext_atto", 64)(dt),
        "vit_tiny": forward("vit_tiny_patch16_224", 32, img_size=32)(dt),
        "deit_tiny": forward("deit_tiny_patch16_224", 32, img_size=32)(dt),
        "finetune_resnet10t": finetune(dt),
    }
