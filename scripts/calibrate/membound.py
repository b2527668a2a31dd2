"""Memory-bound kernels as PyTorch eager runs them: norms, softmax, activations, residual add,
cross-entropy and the fused AdamW step, from 1 MiB to 1 GiB of activations.

bytes_moved is the minimal HBM traffic of each op: every input read once and every output
written once, as a fully fused kernel would do (the convention of shared/reference/
calibration.md section 2.2). Where eager PyTorch materialises intermediates (SwiGLU's silu
output, cross-entropy's log-softmax), it moves more than that and its achieved GB/s comes out
lower: that gap is the point of measuring eager kernels. The cost model must compute bytes
with the same per-op formulas (bytes_formula in each row) to use these bandwidths.
"""

from dataclasses import dataclass

from common import fmt

KIND = "membound"

HIDDEN = 4096  # row width of norms, activations and residual adds (a 7B-class model)
VOCAB = 32768  # logits row width of cross-entropy (Mistral-7B's vocabulary)
SOFTMAX_WIDTH = 4096  # a materialised attention score row, seq = 4096
SIZES_MIB = (1, 4, 16, 64, 256, 1024)
QUICK_SIZES_MIB = (1, 16, 256)
ELEMENT_BYTES = {"bf16": 2, "fp32": 4}
TARGET_BYTES = 8  # int64 class indices
EPS = 1e-5

USES_CUDA_TIMER = True  # common.CudaTimer: L2 flush, adaptive iterations, median

UNITS = {
    "rows": "count",
    "width": "elements",
    "numel": "elements",
    "size_bytes": "B",
    "bytes_moved": "B",
    "time_us": "us",
    "time_us_min": "us",
    "iters": "count",
    "gbps": "GB/s",
}
MEASUREMENT_FIELDS = ("time_us", "time_us_min", "iters", "gbps")

METHOD_NOTES = {
    "size_bytes": "bytes of the op's primary tensor (x, logits, or the fp32 parameters)",
    "bytes_moved": "minimal HBM traffic: inputs read once, outputs written once; per-op formula "
    "in each row's bytes_formula (n = numel, w = width, r = rows, e = element bytes)",
    "gbps": "bytes_moved / time_us / 1e3 (1 GB = 1e9 B)",
}


@dataclass(frozen=True)
class OpSpec:
    width: int  # elements per row; 0 means a flat 1-D tensor (one row of numel elements)
    dtype: str
    bytes_formula: str
    description: str


OPS = {
    "rmsnorm": OpSpec(HIDDEN, "bf16", "2*n*e + w*e", "F.rms_norm(x, (w,), weight): read x, "
                      "weight; write y"),
    "layernorm": OpSpec(HIDDEN, "bf16", "2*n*e + 2*w*e", "F.layer_norm(x, (w,), weight, bias)"),
    "softmax": OpSpec(SOFTMAX_WIDTH, "bf16", "2*n*e", "torch.softmax(x, dim=-1)"),
    "gelu": OpSpec(HIDDEN, "bf16", "2*n*e", "F.gelu(x)"),
    "swiglu": OpSpec(HIDDEN, "bf16", "3*n*e", "F.silu(gate) * up: read gate, up; write out"),
    "residual_add": OpSpec(HIDDEN, "bf16", "3*n*e", "torch.add(x, residual, out=y)"),
    "cross_entropy": OpSpec(VOCAB, "bf16", "n*e + 8*r", "F.cross_entropy(logits, targets), "
                            "mean reduction: read logits and int64 targets"),
    "adamw": OpSpec(0, "fp32", "28*n", "torch.optim.AdamW(fused=True).step() on one fp32 "
                    "parameter: read param, grad, exp_avg, exp_avg_sq; write param, exp_avg, "
                    "exp_avg_sq"),
}


def bytes_moved(op, numel, width, rows):
    """Evaluate the op's formula; kept as text in the row so readers see the convention."""
    spec = OPS[op]
    env = {"n": numel, "w": width, "r": rows, "e": ELEMENT_BYTES[spec.dtype]}
    return int(eval(spec.bytes_formula, {"__builtins__": {}}, env))  # formulas are constants above


def configs(quick):
    sizes = QUICK_SIZES_MIB if quick else SIZES_MIB
    return [_config(op, size_mib) for op in OPS for size_mib in sizes]


def _config(op, size_mib):
    spec = OPS[op]
    size_bytes = size_mib << 20
    numel = size_bytes // ELEMENT_BYTES[spec.dtype]
    width = spec.width or numel
    rows = numel // width
    return {
        "op": op,
        "dtype": spec.dtype,
        "rows": rows,
        "width": width,
        "numel": numel,
        "size_bytes": size_bytes,
        "bytes_moved": bytes_moved(op, numel, width, rows),
        "bytes_formula": spec.bytes_formula,
    }


def prepare(bench):
    return None


def measure(cfg, bench, state):
    run, note = BUILDERS[cfg["op"]](bench.torch, cfg["rows"], cfg["width"])
    timing = bench.timer.time(run)
    return {
        "time_us": timing.median_us,
        "time_us_min": timing.min_us,
        "iters": timing.iters,
        "gbps": cfg["bytes_moved"] / timing.median_us / 1e3,
        "note": note,
    }


# Each builder allocates its inputs and returns (callable to time, note or None).


def _bf16(torch, *shape):
    return torch.randn(*shape, dtype=torch.bfloat16, device="cuda")


def _build_rmsnorm(torch, rows, width):
    F = torch.nn.functional
    x, weight = _bf16(torch, rows, width), _bf16(torch, width)
    if hasattr(F, "rms_norm"):
        return (lambda _: F.rms_norm(x, (width,), weight, EPS)), None

    def composite(_):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + EPS).to(x.dtype) * weight

    return composite, "composite RMSNorm: this PyTorch has no F.rms_norm"


def _build_layernorm(torch, rows, width):
    x, weight, bias = _bf16(torch, rows, width), _bf16(torch, width), _bf16(torch, width)
    return (lambda _: torch.nn.functional.layer_norm(x, (width,), weight, bias, EPS)), None


def _build_softmax(torch, rows, width):
    x = _bf16(torch, rows, width)
    return (lambda _: torch.softmax(x, dim=-1)), None


def _build_gelu(torch, rows, width):
    x = _bf16(torch, rows, width)
    return (lambda _: torch.nn.functional.gelu(x)), None


def _build_swiglu(torch, rows, width):
    gate, up = _bf16(torch, rows, width), _bf16(torch, rows, width)
    return (lambda _: torch.nn.functional.silu(gate) * up), None


def _build_residual_add(torch, rows, width):
    x, residual, y = _bf16(torch, rows, width), _bf16(torch, rows, width), _bf16(torch, rows, width)
    return (lambda _: torch.add(x, residual, out=y)), None


def _build_cross_entropy(torch, rows, width):
    logits = _bf16(torch, rows, width)
    targets = torch.randint(0, width, (rows,), device="cuda")
    return (lambda _: torch.nn.functional.cross_entropy(logits, targets)), None


def _build_adamw(torch, rows, width):
    numel = rows * width
    param = torch.randn(numel, dtype=torch.float32, device="cuda", requires_grad=True)
    param.grad = torch.randn_like(param)
    optimizer = torch.optim.AdamW([param], lr=1e-4, fused=True)
    # The timer's first untimed call creates exp_avg/exp_avg_sq; later steps update them.
    # Small sizes are bound by the Python side of step(), which eager training pays too.
    return (lambda _: optimizer.step()), None


BUILDERS = {
    "rmsnorm": _build_rmsnorm,
    "layernorm": _build_layernorm,
    "softmax": _build_softmax,
    "gelu": _build_gelu,
    "swiglu": _build_swiglu,
    "residual_add": _build_residual_add,
    "cross_entropy": _build_cross_entropy,
    "adamw": _build_adamw,
}
assert BUILDERS.keys() == OPS.keys()


def headline(rows):
    ok = [r for r in rows if r["gbps"] is not None]
    if not ok:
        return ""
    best = max(ok, key=lambda r: r["gbps"])
    largest = max(r["size_bytes"] for r in ok)
    at_largest = ", ".join(
        f"{r['op']} {fmt(r['gbps'], '.0f')}" for r in ok if r["size_bytes"] == largest
    )
    return (f"peak {fmt(best['gbps'], '.0f')} GB/s ({best['op']}, {best['size_bytes'] >> 20} MiB); "
            f"GB/s at {largest >> 20} MiB: {at_largest}")
