#!/usr/bin/env python3
"""ltbench's gated attention against flash-linear-attention's references.

Runs `ltbench attention` for the delta, gated-delta and gla variants on small
random inputs (with beta at exactly 0 and 1 at some positions and strong
decays), forward and backward, and compares its output and every gradient
(q, k, v, beta, log alpha) with flash-linear-attention's plain PyTorch
recurrences run through autograd on the CPU. The references are loaded from
a checkout of fla-org/flash-linear-attention (--fla-src or FLA_SRC); nothing
of it is copied here.

Exit status: 0 when every difference is within float32 tolerance, 1 when one
is not, 77 (skipped, as meson counts it) without PyTorch or a checkout.
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import types

SKIP = 77
TOLERANCE = 1e-4  # of the largest magnitude of the compared tensor

try:
    import numpy as np
    import torch
except ImportError:
    print("fla_parity: skipped: PyTorch is not installed (Debian: python3-torch)")
    sys.exit(SKIP)

REFERENCES = {
    "delta": ("fla/ops/delta_rule/naive.py", "delta_rule_recurrence"),
    "gated-delta": ("fla/ops/gated_delta_rule/naive.py", "naive_recurrent_gated_delta_rule"),
    "gla": ("fla/ops/gla/naive.py", "naive_recurrent_gla"),
}


def load_reference(root, variant):
    path, name = REFERENCES[variant]
    if "einops" not in sys.modules:
        try:
            import einops  # noqa: F401  (the chunked references use it; ours do not)
        except ImportError:
            stub = types.ModuleType("einops")

            def rearrange(*args, **kwargs):
                raise NotImplementedError("einops is not installed")

            stub.rearrange = rearrange
            sys.modules["einops"] = stub
    spec = importlib.util.spec_from_file_location("fla_" + variant.replace("-", "_"),
                                                  os.path.join(root, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def unit(x):
    """ltbench's delta and gated-delta normalise q and k so, inside the call."""
    return x / torch.sqrt((x * x).sum(-1, keepdim=True) + 1e-6)


def inputs(variant, B, H, N, D, M, seed):
    g = np.random.default_rng(seed)
    x = {
        "q": g.standard_normal((B, H, N, D)),
        "k": g.standard_normal((B, H, N, D)),
        "v": g.standard_normal((B, H, N, M)),
        "dout": g.standard_normal((B, H, N, M)),
    }
    if variant in ("delta", "gated-delta"):
        beta = g.uniform(0.0, 1.0, (B, H, N))
        beta[:, :, ::7] = 0.0
        beta[:, :, 3::7] = 1.0
        x["beta"] = beta
    if variant in ("gated-delta", "gla"):
        shape = (B, H, N) if variant == "gated-delta" else (B, H, N, D)
        alpha = g.uniform(0.3, 1.0, shape)
        alpha[..., 5::11] = 1e-6  # near-total forgetting
        x["log_alpha"] = np.log(alpha)
    return {name: value.astype(np.float32) for name, value in x.items()}


def run_ltbench(ltbench, variant, x, folder):
    files = {}
    for name, value in x.items():
        files[name] = os.path.join(folder, name + ".npy")
        np.save(files[name], value)
    # the output and every gradient the variant has, in one folder
    written = os.path.join(folder, "out")
    out = {name: os.path.join(written, ("out" if name == "o" else name) + ".npy")
           for name in ("o", "dq", "dk", "dv", "dbeta", "dlog_alpha")}
    cmd = [ltbench, "attention", "--variant", variant, "--causal", "causal", "--threads", "1",
           "--overwrite", "--q", files["q"], "--k", files["k"], "--v", files["v"],
           "--dout", files["dout"], "--out", written]
    if "beta" in x:
        cmd += ["--beta", files["beta"]]
    if "log_alpha" in x:
        cmd += ["--log-alpha", files["log_alpha"]]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("fla_parity: %s failed (%d):\n%s" % (" ".join(cmd), done.returncode,
                                                      done.stderr))
    return {name: np.load(path) for name, path in out.items() if os.path.exists(path)}


def run_reference(reference, variant, x):
    t = {name: torch.tensor(value, dtype=torch.float32, requires_grad=name != "dout")
         for name, value in x.items()}
    q, k, v = t["q"], t["k"], t["v"]
    D = q.shape[-1]
    if variant == "delta":
        # its q is scaled by D^-1/2 inside: ours is unit, unscaled
        o, _ = reference(unit(q) * D ** 0.5, unit(k), v, t["beta"])
    elif variant == "gated-delta":
        tr = lambda a: a.transpose(1, 2)  # (B, H, N, .) <-> (B, N, H, .)
        o, _ = reference(tr(unit(q)), tr(unit(k)), tr(v), tr(t["beta"]), tr(t["log_alpha"]),
                         scale=1.0)
        o = tr(o)
    else:
        tr = lambda a: a.transpose(1, 2)
        o, _ = reference(tr(q * D ** 0.5), tr(k), tr(v), tr(t["log_alpha"]))
        o = tr(o)
    (o * t["dout"]).sum().backward()
    got = {"o": o.detach().numpy(), "dq": q.grad.numpy(), "dk": k.grad.numpy(),
           "dv": v.grad.numpy()}
    if "beta" in t:
        got["dbeta"] = t["beta"].grad.numpy()
    if "log_alpha" in t:
        got["dlog_alpha"] = t["log_alpha"].grad.numpy()
    return got


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fla-src", default=os.environ.get("FLA_SRC"),
                        help="a checkout of fla-org/flash-linear-attention (or FLA_SRC)")
    parser.add_argument("--ltbench", default=os.environ.get("LTBENCH", "build/ltbench"),
                        help="the ltbench executable (default build/ltbench, or LTBENCH)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not args.fla_src or not os.path.isdir(os.path.join(args.fla_src, "fla")):
        print("fla_parity: skipped: no flash-linear-attention checkout (--fla-src DIR or "
              "FLA_SRC; git clone https://github.com/fla-org/flash-linear-attention)")
        sys.exit(SKIP)
    torch.set_num_threads(1)
    worst = 0.0
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        for variant in REFERENCES:
            reference = load_reference(args.fla_src, variant)
            for B, H, N, D, M in ((2, 2, 37, 8, 8), (1, 3, 70, 16, 12)):
                x = inputs(variant, B, H, N, D, M, args.seed)
                ours = run_ltbench(args.ltbench, variant, x, folder)
                theirs = run_reference(reference, variant, x)
                for name, want in theirs.items():
                    if name not in ours:
                        print("%s: ltbench wrote no %s" % (variant, name))
                        failed = True
                        continue
                    scale = max(float(np.abs(want).max()), 1e-30)
                    diff = float(np.abs(ours[name] - want).max())
                    worst = max(worst, diff / scale)
                    ok = diff <= TOLERANCE * scale
                    failed |= not ok
                    print("%-11s B=%d H=%d N=%-3d D=%-2d M=%-2d %-10s max |diff| %.3g "
                          "(%.2g of max |value| %.3g)%s"
                          % (variant, B, H, N, D, M, name, diff, diff / scale, scale,
                             "" if ok else "  FAIL"))
    print("fla_parity: largest relative difference %.3g (tolerance %g): %s"
          % (worst, TOLERANCE, "FAIL" if failed else "ok"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
