"""GEMM sweep over the matrix shapes of LLM training layers, bf16 and fp8.

Shapes: M (tokens per microbatch) x (N, K) where, for hidden size h and tensor-parallel degree
tp, each projection of width d in {h, 3h, 4h, 8h/3} appears column-parallel (N = d/tp, K = h:
QKV, MLP up/gate) and row-parallel (N = h, K = d/tp: attention out, MLP down). The backward
data-gradient GEMM of one orientation has the other's (N, K), so both cover fwd and dgrad.
The 2048x2048x13312 shape is where the best-case ("MAMF") BF16 throughput was found on
H100/H200 (shared/reference/calibration.md section 1.2), included as a ceiling.

Operands follow nn.Linear: x[M, K] @ W[N, K]^T, i.e. B is column-major, which is also the layout
torch._scaled_mm requires for fp8.
"""

import math

from common import TIMED_FIELDS, TIMED_UNITS, Unsupported, fmt

KIND = "gemm"

M_VALUES = (512, 1024, 2048, 4096, 8192, 16384)
HIDDEN_SIZES = (4096, 8192, 12288)
TP_DEGREES = (1, 8)
QUICK_M_VALUES = (1024, 4096, 16384)
QUICK_HIDDEN_SIZES = (4096, 8192)
MAMF_SHAPE = (2048, 2048, 13312)
DTYPES = ("bf16", "fp8_e4m3")

# cuBLASLt fp8 kernels need every dimension to be a multiple of 16.
FP8_DIM_MULTIPLE = 16

USES_CUDA_TIMER = True  # common.CudaTimer: L2 flush, adaptive iterations, median

UNITS = {
    "m": "elements",
    "n": "elements",
    "k": "elements",
    "flop": "FLOP",
    **TIMED_UNITS,
}
MEASUREMENT_FIELDS = TIMED_FIELDS

METHOD_NOTES = {
    "op": "bf16: torch.mm(x, W.t(), out=y); fp8_e4m3: torch._scaled_mm(x, W.t(), "
    "scale_a=1, scale_b=1, out_dtype=bf16) with per-tensor scales and default accumulation",
    "layout": "x[M,K] row-major @ W[N,K]^T (nn.Linear forward)",
    "flop": "2*m*n*k",
    "tflops": "flop / time_us / 1e6",
}


def swiglu_width(h):
    """8h/3 rounded up to a multiple of 64 (Llama's convention rounds the FFN width up)."""
    return math.ceil(8 * h / 3 / 64) * 64


def projection_widths(h):
    return (("h", h), ("3h", 3 * h), ("4h", 4 * h), ("8h/3", swiglu_width(h)))


def layer_nk_pairs(hidden_sizes):
    """Ordered, de-duplicated (n, k) pairs, each with the layer projections that produce it."""
    origins = {}
    for h in hidden_sizes:
        for tp in TP_DEGREES:
            for name, d in projection_widths(h):
                assert d % tp == 0, (h, name, tp)
                tag = f"h={h} tp={tp} d={name}"
                origins.setdefault((d // tp, h), []).append(f"{tag} column-parallel")
                origins.setdefault((h, d // tp), []).append(f"{tag} row-parallel")
    return list(origins.items())


def shapes(quick):
    m_values = QUICK_M_VALUES if quick else M_VALUES
    hidden_sizes = QUICK_HIDDEN_SIZES if quick else HIDDEN_SIZES
    out = [(m, n, k, origin) for m in m_values for (n, k), origin in layer_nk_pairs(hidden_sizes)]
    out.append((*MAMF_SHAPE, ["MAMF best-case shape (H100/H200 BF16)"]))
    return out


def configs(quick):
    return [
        {"dtype": dtype, "m": m, "n": n, "k": k, "flop": 2 * m * n * k, "origin": origin}
        for m, n, k, origin in shapes(quick)
        for dtype in DTYPES
    ]


def prepare(bench):
    """Probe fp8 once: a missing or failing torch._scaled_mm makes every fp8 row unsupported."""
    return {"fp8_error": _fp8_probe(bench.torch)}


def _fp8_probe(torch):
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        return "this PyTorch has no torch._scaled_mm / float8_e4m3fn"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) < (8, 9):
        return f"fp8 tensor cores need compute capability 8.9+, this GPU is {major}.{minor}"
    try:
        a, b, scale = _fp8_operands(torch, 16, 16, 16)
        _scaled_mm(torch, a, b, scale)
        torch.cuda.synchronize()
    except Exception as exc:  # any failure means fp8 is unusable here, not a bug of ours
        return f"torch._scaled_mm failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return None


def measure(cfg, bench, state):
    torch = bench.torch
    m, n, k = cfg["m"], cfg["n"], cfg["k"]
    if cfg["dtype"] == "bf16":
        run = _bf16_runner(torch, m, n, k)
    else:
        _check_fp8(state, m, n, k)
        a, b, scale = _fp8_operands(torch, m, n, k)
        run = lambda _: _scaled_mm(torch, a, b, scale)  # noqa: E731
    timing = bench.timer.time(run)
    return {
        "time_us": timing.median_us,
        "time_us_min": timing.min_us,
        "iters": timing.iters,
        "tflops": cfg["flop"] / timing.median_us / 1e6,
    }


def _bf16_runner(torch, m, n, k):
    x = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(n, k, dtype=torch.bfloat16, device="cuda")
    y = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    wt = w.t()
    return lambda _: torch.mm(x, wt, out=y)


def _check_fp8(state, m, n, k):
    if state["fp8_error"]:
        raise Unsupported(state["fp8_error"])
    if any(d % FP8_DIM_MULTIPLE for d in (m, n, k)):
        raise Unsupported(f"fp8 GEMM needs m, n, k multiples of {FP8_DIM_MULTIPLE}")


def _fp8_operands(torch, m, n, k):
    x = torch.randn(m, k, dtype=torch.bfloat16, device="cuda").to(torch.float8_e4m3fn)
    w = torch.randn(n, k, dtype=torch.bfloat16, device="cuda").to(torch.float8_e4m3fn)
    scale = torch.ones((), dtype=torch.float32, device="cuda")
    return x, w.t(), scale


def _scaled_mm(torch, a, b, scale):
    out = torch._scaled_mm(a, b, scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)
    # PyTorch <= 2.3 returned (output, amax).
    return out[0] if isinstance(out, tuple) else out


def headline(rows):
    parts = []
    for dtype in DTYPES:
        ok = [r for r in rows if r["dtype"] == dtype and r["tflops"] is not None]
        if not ok:
            continue
        best = max(ok, key=lambda r: r["tflops"])
        mamf = next((r for r in ok if (r["m"], r["n"], r["k"]) == MAMF_SHAPE), None)
        parts.append(
            f"{dtype} best {fmt(best['tflops'])} TFLOP/s at {best['m']}x{best['n']}x{best['k']}"
            f", MAMF shape {fmt(mamf['tflops'] if mamf else None)}"
        )
    return "; ".join(parts)
