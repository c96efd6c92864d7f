"""torchvision.transforms.v2 on tensors (uint8 and floating), PIL images and boxes, seeded.

uint8 results are compared exactly; floating ones at the derived tolerance (the float64 run
feeds the same pixels widened)."""

import numpy as np
import torch
from PIL import Image
from torchvision import tv_tensors
from torchvision.transforms import v2
from torchvision.transforms.v2 import functional as F


def pixels(h=40, w=52, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (3, h, w), generator=g, dtype=torch.uint8)


def cases(dt):
    img = pixels()
    fimg = img.to(torch.float64).div(255).to(dt)
    pil = Image.fromarray(img.permute(1, 2, 0).numpy())
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]

    def train_pipeline(antialias):
        def run():
            t = v2.Compose([v2.RandomResizedCrop(24, antialias=antialias), v2.RandomHorizontalFlip(),
                            v2.ColorJitter(0.4, 0.4, 0.4, 0.1), v2.ToDtype(dt, scale=True),
                            v2.Normalize(mean, std)])
            torch.manual_seed(3)
            return {"first": t(tv_tensors.Image(img)), "again": t(tv_tensors.Image(img))}
        return run

    def pil_pipeline():
        t = v2.Compose([v2.Resize(30), v2.CenterCrop(24), v2.PILToTensor()])
        u = t(pil)
        return {"pil": u, "as_float": v2.Compose([v2.ToImage(), v2.ToDtype(dt, scale=True),
                                                  v2.Normalize(mean, std)])(t(pil))}

    def resize_antialias():
        return {"uint8": F.resize(img, [20, 30], antialias=True),
                "float": F.resize(fimg, [20, 30], antialias=True)}

    def geometry():
        return {"resize_up_float": F.resize(fimg, [60, 70], antialias=False),
                "resize_nearest": F.resize(img, [25, 31], interpolation=v2.InterpolationMode.NEAREST),
                "pad": F.pad(img, [2, 3, 4, 5], padding_mode="reflect"),
                "crop_flip": F.vertical_flip(F.crop(img, 5, 6, 20, 30)),
                "five_crop": torch.stack(F.five_crop(fimg, [10, 12]))}

    def warps():
        return {"rotate": F.rotate(fimg, 30.0),
                "affine": F.affine(fimg, angle=12.0, translate=[3, -2], scale=0.9, shear=[5.0, 0.0]),
                "perspective": F.perspective(fimg, [[0, 0], [51, 0], [51, 39], [0, 39]],
                                             [[2, 3], [49, 1], [50, 36], [1, 38]])}

    def color():
        return {"gray": F.rgb_to_grayscale(fimg), "gray_uint8": F.rgb_to_grayscale(img),
                "brightness": F.adjust_brightness(fimg, 1.3), "contrast": F.adjust_contrast(img, 0.7),
                "saturation": F.adjust_saturation(fimg, 1.5), "hue": F.adjust_hue(fimg, 0.1),
                "blur": F.gaussian_blur(fimg, [5, 5], [1.5, 1.5]),
                "equalize": F.equalize(img), "posterize": F.posterize(img, 3),
                "autocontrast": F.autocontrast(fimg), "sharpness": F.adjust_sharpness(fimg, 2.0)}

    def random_erasing():
        torch.manual_seed(5)
        return {"erasing": v2.RandomErasing(p=1.0)(fimg)}

    def augment_policies():
        torch.manual_seed(5)
        return {"affine": v2.RandomAffine(20, translate=(0.1, 0.1), scale=(0.8, 1.2))(fimg),
                "autoaugment": v2.AutoAugment()(img), "randaugment": v2.RandAugment()(img),
                "trivial": v2.TrivialAugmentWide()(img)}

    def boxes():
        b = tv_tensors.BoundingBoxes(torch.tensor([[4., 5., 30., 25.], [10., 2., 50., 38.]], dtype=dt),
                                     format="XYXY", canvas_size=(40, 52))
        t = v2.Compose([v2.RandomHorizontalFlip(p=1.0), v2.Resize((30, 40)),
                        v2.RandomAffine(10, translate=(0.05, 0.05))])
        torch.manual_seed(7)
        return {"boxes": t(b), "cxcywh": F.convert_bounding_box_format(b, new_format="CXCYWH")}

    return {"train_pipeline": train_pipeline(False), "train_pipeline_antialias": train_pipeline(True),
            "pil_pipeline": pil_pipeline, "resize_antialias": resize_antialias, "geometry": geometry,
            "warps": warps, "color": color, "random_erasing": random_erasing,
            "augment_policies": augment_policies, "boxes": boxes}
