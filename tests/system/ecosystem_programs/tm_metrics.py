"""torchmetrics: the common classification, regression and text metrics, as modular metrics
updated batch by batch (their states aggregate) and as functional calls. Each case also computes
its metrics with the last batch dropped (``dropped/...``), which the test uses as a control: a
comparison that missed a lost batch would be no comparison."""

import contextlib

import torch
import torchmetrics
from torchmetrics import classification as C, regression as R, text as T
from torchmetrics.functional import classification as FC

BATCHES = 4


@contextlib.contextmanager
def default_dtype(dt):
    """Metric states are made in the default dtype: the float64 rerun must be float64 through."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(dt)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def data(dt, seed, n=48, classes=3):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(BATCHES, n, classes, generator=g, dtype=torch.float64)
    target = torch.randint(0, classes, (BATCHES, n), generator=g)
    # targets correlated with the scores, so AUROC and F1 are not near chance
    logits[torch.arange(BATCHES)[:, None], torch.arange(n)[None], target] += 1.0
    return logits.softmax(-1).to(dt), target


def run_metrics(make, batches):
    """name -> computed value, for fresh metrics fed ``batches`` one update at a time."""
    metrics = make()
    for args in batches:
        for m in metrics.values():
            m.update(*args)
    out = {}
    for k, m in metrics.items():
        v = m.compute()
        if isinstance(v, dict):
            out.update({f"{k}.{kk}": vv for kk, vv in v.items()})
        else:
            out[k] = v
    return out


def with_control(make, batches):
    out = run_metrics(make, batches)
    out.update({f"dropped/{k}": v for k, v in run_metrics(make, batches[:-1]).items()})
    return out


def classification(dt):
    def run():
        with default_dtype(dt):
            probs, target = data(dt, 1)
            binary_p = probs[..., 1] / (probs[..., 1] + probs[..., 0])
            binary_t = (target == 1).long()

            def multiclass():
                return {
                    "accuracy_macro": C.MulticlassAccuracy(3, average="macro"),
                    "accuracy_micro": C.MulticlassAccuracy(3, average="micro"),
                    "f1_macro": C.MulticlassF1Score(3, average="macro"),
                    "f1_per_class": C.MulticlassF1Score(3, average=None),
                    "precision": C.MulticlassPrecision(3),
                    "recall": C.MulticlassRecall(3),
                    "auroc": C.MulticlassAUROC(3),
                    "auroc_binned": C.MulticlassAUROC(3, thresholds=11),
                    "average_precision": C.MulticlassAveragePrecision(3),
                    "confusion": C.MulticlassConfusionMatrix(3),
                    "confusion_normalized": C.MulticlassConfusionMatrix(3, normalize="true"),
                    "calibration": C.MulticlassCalibrationError(3, n_bins=5),
                }

            def binary():
                return {
                    "b_accuracy": C.BinaryAccuracy(),
                    "b_f1": C.BinaryF1Score(threshold=0.4),
                    "b_auroc": C.BinaryAUROC(),
                    "b_confusion": C.BinaryConfusionMatrix(),
                    "b_mcc": C.BinaryMatthewsCorrCoef(),
                }

            out = with_control(multiclass, list(zip(probs, target)))
            out.update(with_control(binary, list(zip(binary_p, binary_t))))
            flat_p, flat_t = probs.reshape(-1, 3), target.reshape(-1)
            out["functional/accuracy"] = FC.multiclass_accuracy(flat_p, flat_t, 3)
            out["functional/auroc"] = FC.multiclass_auroc(flat_p, flat_t, 3)
            roc = FC.binary_roc(binary_p.reshape(-1), binary_t.reshape(-1))
            out.update({"functional/roc_fpr": roc[0], "functional/roc_tpr": roc[1],
                        "functional/roc_thresholds": roc[2]})
            # the task-dispatching front door people use most
            out["front/accuracy"] = torchmetrics.functional.accuracy(
                flat_p, flat_t, task="multiclass", num_classes=3)
            return out
    return run


def regression(dt):
    def run():
        with default_dtype(dt):
            g = torch.Generator().manual_seed(2)
            target = torch.randn(BATCHES, 40, generator=g, dtype=torch.float64)
            preds = 0.8 * target + 0.5 * torch.randn(BATCHES, 40, generator=g, dtype=torch.float64)
            preds, target = preds.to(dt), target.to(dt)

            def make():
                return {"mse": R.MeanSquaredError(), "rmse": R.MeanSquaredError(squared=False),
                        "mae": R.MeanAbsoluteError(), "r2": R.R2Score(),
                        "pearson": R.PearsonCorrCoef(), "spearman": R.SpearmanCorrCoef(),
                        "explained_variance": R.ExplainedVariance(),
                        "mape": R.MeanAbsolutePercentageError()}

            return with_control(make, list(zip(preds, target)))
    return run


PREDS = ["the cat sat on the mat", "there is a dog in the garden", "a quick brown fox jumps",
         "hello wrld", "we love machine learning models"]
REFS = [["the cat is sitting on the mat", "a cat sat on the mat"],
        ["a dog is in the garden"], ["the quick brown fox jumped over"], ["hello world"],
        ["we really love learning machines", "machine learning models are loved"]]


def text(dt):
    def run():
        def make():
            return {"bleu": T.BLEUScore(), "bleu_smooth": T.BLEUScore(n_gram=3, smooth=True),
                    "sacrebleu": T.SacreBLEUScore(),
                    "rouge": T.ROUGEScore(rouge_keys=("rouge1", "rouge2", "rougeL")),
                    "chrf": T.CHRFScore()}

        def make_single():  # the error rates take one reference per prediction
            return {"cer": T.CharErrorRate(), "wer": T.WordErrorRate(),
                    "mer": T.MatchErrorRate()}

        batches = [(PREDS[i:i + 2], REFS[i:i + 2]) for i in range(0, len(PREDS), 2)]
        out = with_control(make, batches)
        single = [(p, [r[0] for r in refs]) for p, refs in batches]
        out.update(with_control(make_single, single))
        return out
    return run


def cases(dt):
    return {"classification": classification(dt), "regression": regression(dt), "text": text(dt)}
