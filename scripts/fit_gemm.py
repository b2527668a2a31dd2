#!/usr/bin/env python3
"""Grid search that fitted the Hopper GEMM parameters of kernels_db/gemm.json.

The model is the one in host/cost/gemm_model.cpp (tiles with wave quantization, stream-K,
K/(K+k_half) efficiency, memory floor, 3 us kernel floor); the points are the published figures
in kernels_db/gemm.json (calibration.md §1.2). Ampere and Blackwell have one or two published
points each; their peak_fraction and k_half were solved from those points directly (see the
"source" fields). Run: python3 scripts/fit_gemm.py
"""
import itertools
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DB = os.path.join(HERE, "..", "kernels_db")


def load():
    with open(os.path.join(DB, "gpus.json")) as f:
        gpus = {g["name"]: g for g in json.load(f)["gpus"]}
    with open(os.path.join(DB, "gemm.json")) as f:
        gemm = json.load(f)
    return gpus, gemm


def tflops(gpu, dtype, m, n, k, emax, k_half, tiles, sk, sk_fix, batch=1):
    peak = gpu["peak_tflops"][dtype]["value"]
    sms = gpu["sms"]["value"]
    hbm = gpu["hbm_gbps"]["value"]
    eb = 1 if dtype == "fp8" else 2
    k_eff = k / (k + k_half)
    per_sm = peak * 1e6 / sms  # FLOP per us per SM
    best = math.inf
    for tm, tn, rel in tiles:
        waves = math.ceil(math.ceil(m / tm) * math.ceil(n / tn) * batch / sms)
        best = min(best, waves * 2 * tm * tn * k / (per_sm * emax * rel * k_eff))
    tm, tn, _ = tiles[0]
    work = 2 * math.ceil(m / tm) * tm * math.ceil(n / tn) * tn * k * batch
    best = min(best, work / (per_sm * sms * emax * sk * k_eff) + sk_fix)
    mem = (m * k + k * n + m * n) * eb * batch / (hbm * 1e3 * 0.9)
    t = max(best, mem) + 3.0
    return 2 * m * n * k * batch / (t * 1e6)


def main():
    gpus, gemm = load()
    pts = [p for p in gemm["points"] if gpus[p["gpu"]]["arch"] == "hopper"]
    best = None
    for emb, em8, kh, rel3, sk, skf in itertools.product(
            [0.86, 0.88, 0.9, 0.92], [0.74, 0.76, 0.78, 0.8, 0.82], [256, 512, 768, 1024],
            [0.3, 0.4, 0.5], [0.85, 0.9, 0.95], [0, 5, 10]):
        tiles = [(128, 256, 1.0), (128, 128, 1.0), (64, 128, rel3)]
        errs = []
        for p in pts:
            emax = emb if p["dtype"] == "bf16" else em8
            model = tflops(gpus[p["gpu"]], p["dtype"], p["m"], p["n"], p["k"], emax, kh, tiles, sk, skf)
            errs.append(model / p["tflops"] - 1)
        score = sum(e * e for e in errs)
        if best is None or score < best[0]:
            best = (score, dict(bf16=emb, fp8=em8, k_half=kh, small_tile=rel3, streamk=sk, fixup_us=skf), errs)
    print("best Hopper parameters:", best[1])
    for p, e in zip(pts, best[2]):
        print(f"  {p['gpu']} {p['dtype']} {p['m']}x{p['n']}x{p['k']}: {100 * e:+.1f}%")
    fit_ampere(gpus, gemm)


def fit_ampere(gpus, gemm):
    """Ampere: peak_fraction and k_half over the A100 points, the Hopper tiles and stream-K kept."""
    pts = [p for p in gemm["points"] if gpus[p["gpu"]]["arch"] == "ampere"]
    tiles = [(t["tm"], t["tn"], t["efficiency"]) for t in gemm["tiles"]]
    sk, skf = gemm["streamk_efficiency"], gemm["streamk_fixup_us"]
    best = None
    for em in [x / 100 for x in range(78, 96)]:
        for kh in range(0, 1025, 32):
            errs = [tflops(gpus[p["gpu"]], p["dtype"], p["m"], p["n"], p["k"], em, kh, tiles, sk, skf,
                           p.get("batch", 1)) / p["tflops"] - 1 for p in pts]
            score = sum(e * e for e in errs)
            if best is None or score < best[0]:
                best = (score, dict(peak_fraction=em, k_half=kh), errs)
    print("best Ampere parameters:", best[1])
    for p, e in zip(pts, best[2]):
        print(f"  {p['gpu']} {p['dtype']} {p['m']}x{p['n']}x{p['k']} x{p.get('batch', 1)}: {100 * e:+.1f}%")


if __name__ == "__main__":
    main()
