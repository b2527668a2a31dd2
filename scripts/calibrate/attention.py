"""Attention forward and backward with torch.nn.functional.scaled_dot_product_attention, bf16.

The setup of the FlashAttention-3 paper, so the numbers compare with the published bars in
shared/reference/calibration.md section 2.1: batch * seq = 16384 tokens and heads * head_dim =
2048, head_dim in {64, 128}, causal and non-causal. Each configuration runs on PyTorch's
FlashAttention-2 kernel and on cuDNN's fused attention, selected explicitly so that the table
says which kernel the number belongs to (PyTorch's automatic choice differs between versions).

FLOP convention (Megatron's, the paper's): forward = 4 * b * s^2 * heads * head_dim, halved when
causal; backward = 2.5 x forward (2x for the gradient GEMMs plus the recomputed QK^T).
"""

from common import TIMED_FIELDS, TIMED_UNITS, Unsupported, fmt

KIND = "attention"

TOKENS = 16384
MODEL_WIDTH = 2048  # heads * head_dim
SEQ_LENS = (512, 1024, 2048, 4096, 8192, 16384)
HEAD_DIMS = (64, 128)
QUICK_SEQ_LENS = (512, 2048, 8192)
QUICK_HEAD_DIMS = (128,)
BACKENDS = ("flash", "cudnn")
PASSES = ("fwd", "bwd")
BACKWARD_FLOP_FACTOR = 2.5
# What SDPA raises when the selected backend cannot take the inputs (CUDA and CPU wording).
NO_KERNEL_MESSAGES = ("No available kernel", "No viable backend")

USES_CUDA_TIMER = True  # common.CudaTimer: L2 flush, adaptive iterations, median

UNITS = {
    "batch": "sequences",
    "seq": "tokens",
    "heads": "count",
    "head_dim": "elements",
    "flop": "FLOP",
    **TIMED_UNITS,
}
MEASUREMENT_FIELDS = TIMED_FIELDS

METHOD_NOTES = {
    "op": "F.scaled_dot_product_attention(q, k, v, is_causal=causal) under "
    "torch.nn.attention.sdpa_kernel(backend); q, k, v are [batch, heads, seq, head_dim] bf16",
    "flop": "fwd: 4*batch*seq^2*heads*head_dim, x0.5 if causal; bwd: 2.5 x fwd",
    "bwd_timing": "torch.autograd.grad of the output w.r.t. q, k, v; the forward that builds "
    "the graph runs before the L2 flush and is not timed",
    "tflops": "flop / time_us / 1e6",
}


def forward_flop(batch, seq, heads, head_dim, causal):
    flop = 4 * batch * seq * seq * heads * head_dim
    return flop // 2 if causal else flop


def configs(quick):
    seq_lens = QUICK_SEQ_LENS if quick else SEQ_LENS
    head_dims = QUICK_HEAD_DIMS if quick else HEAD_DIMS
    rows = []
    for pass_ in PASSES:
        for backend in BACKENDS:
            for causal in (False, True):
                for head_dim in head_dims:
                    for seq in seq_lens:
                        rows.append(_config(pass_, backend, causal, head_dim, seq))
    return rows


def _config(pass_, backend, causal, head_dim, seq):
    batch, heads = TOKENS // seq, MODEL_WIDTH // head_dim
    flop = forward_flop(batch, seq, heads, head_dim, causal)
    if pass_ == "bwd":
        flop = int(flop * BACKWARD_FLOP_FACTOR)
    return {
        "pass": pass_,
        "backend": backend,
        "causal": causal,
        "dtype": "bf16",
        "batch": batch,
        "seq": seq,
        "heads": heads,
        "head_dim": head_dim,
        "flop": flop,
    }


def prepare(bench):
    """Map backend names to SDPBackend members; an older PyTorch lacks the selector entirely."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return {"sdpa_kernel": None, "backends": {}}
    backends = {"flash": getattr(SDPBackend, "FLASH_ATTENTION", None),
                "cudnn": getattr(SDPBackend, "CUDNN_ATTENTION", None)}
    return {"sdpa_kernel": sdpa_kernel, "backends": backends}


def measure(cfg, bench, state):
    backend = state["backends"].get(cfg["backend"])
    if state["sdpa_kernel"] is None or backend is None:
        raise Unsupported(f"this PyTorch cannot select the {cfg['backend']} SDPA backend")
    run, prepare_iteration = _runner(bench.torch, cfg)
    try:
        with state["sdpa_kernel"]([backend]):
            timing = bench.timer.time(run, prepare_iteration)
    except RuntimeError as exc:
        # Restricted to one backend, SDPA raises this when that backend cannot take the inputs
        # (head_dim, causal mask, GPU); it names no bug, so the row is "unsupported".
        if any(message in str(exc) for message in NO_KERNEL_MESSAGES):
            raise Unsupported(f"the {cfg['backend']} SDPA backend rejects this configuration")
        raise
    return {
        "time_us": timing.median_us,
        "time_us_min": timing.min_us,
        "iters": timing.iters,
        "tflops": cfg["flop"] / timing.median_us / 1e6,
    }


def _runner(torch, cfg):
    """The callable to time and, for the backward, the untimed forward that precedes it."""
    F = torch.nn.functional
    backward = cfg["pass"] == "bwd"
    shape = (cfg["batch"], cfg["heads"], cfg["seq"], cfg["head_dim"])
    q, k, v = (torch.randn(shape, dtype=torch.bfloat16, device="cuda", requires_grad=backward)
               for _ in range(3))
    causal = cfg["causal"]
    if not backward:
        return (lambda _: F.scaled_dot_product_attention(q, k, v, is_causal=causal)), None
    grad_out = torch.randn(shape, dtype=torch.bfloat16, device="cuda")

    def forward():
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def backward_pass(out):
        return torch.autograd.grad(out, (q, k, v), grad_out)

    return backward_pass, forward


def headline(rows):
    parts = []
    for pass_ in PASSES:
        ok = [r for r in rows if r["pass"] == pass_ and r["tflops"] is not None]
        if ok:
            best = max(ok, key=lambda r: r["tflops"])
            parts.append(
                f"{pass_} best {fmt(best['tflops'])} TFLOP/s ({best['backend']}, "
                f"{'causal' if best['causal'] else 'non-causal'}, d={best['head_dim']}, "
                f"s={best['seq']})"
            )
    return "; ".join(parts)
