#!/usr/bin/python3
"""Latency of tern vs ONNX Runtime, model by model, against issue 5's targets.

Models: every model in ../shared/models/index.json ($TERN_MODELS_DIR or --models to use
another folder) at each distinct input shape of its reference cases (RetinaFace: 320x320,
640x640 and 212x320), plus a ResNet-18 from Debian's torchvision with random weights
(`torchvision.models.resnet18(weights=None)` after torch.manual_seed(0), exported once at
1x3x224x224, opset 13, into .cache/models/resnet18.onnx; skipped with a hint when
python3-torchvision is not installed).

Engines, for each model, shape and thread count, run alternately in the same time window
(tern, ORT, tern, ORT, ... for --rounds rounds, one process each, --warmup untimed runs then
--runs timed runs of one inference on uniform [0, 1) inputs):
  - tern: `tern bench MODEL --shape NAME=DIMS --threads N --runs R --warmup W` (its median);
  - ONNX Runtime: npm onnxruntime-node 1.30.0 (installed on first use into .cache/ortnode)
    through bench/ort_time.js: CPU EP, graph optimization 'all', intraOpNumThreads = N,
    interOpNumThreads = 1. Models that list their weights among the graph inputs (old
    exporters do; it stops ONNX Runtime from folding constants and batch norms, about 3x
    slower on UltraFace) are given to ORT as a copy without those inputs
    (.cache/models/ort/, needs python3-onnx); tern reads the original file.

CPUs: a row whose thread count is below the CPUs available runs both engines of a round on
the same CPUs (sched_setaffinity), moving on by that many CPUs each round, so each engine
meets every CPU equally often. On this shared host one vCPU ran tern 1.5 times slower than
the other for minutes at a time, and which one an unpinned process landed on decided its
round (per-round ratios from 0.6 to 1.8 for one row). --no-pin turns this off.

Prints a markdown table: tern and ORT median ms (median over rounds of each process's
median), tern/ORT (median over rounds of the per-round ratio) and the target: <= 0.8 for the
face detectors (retinaface*, ultraface*, fd1mb*), <= 1.0 for the rest, "ok" or "MISSED".
With 1 and 2 threads, a second table gives tern's 1 -> 2-thread speed-up per model and
shape, against the >= 1.7 target on RetinaFace at 640x640.
Exits 0 when targets are missed (it is a report), 1 when a command fails.

    /usr/bin/python3 bench/compare.py [--only SUBSTRING] [--threads 1,2] [--rounds 5]
        [--runs 30] [--warmup 5] [--tern PATH] [--models DIR] [--json OUT] [--no-pin]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

import benchlib

FACE_PREFIXES = ("retinaface", "ultraface", "fd1mb")
# Issue 5's thread-scaling target: tern at 2 threads >= 1.7 times faster than at 1 thread on
# RetinaFace at 640x640.
SCALING_TARGET = ("retinaface_mnet025.onnx", (1, 3, 640, 640), 1.7)
RESNET18 = os.path.join(benchlib.CACHE, "models", "resnet18.onnx")


def target_ratio(model_file):
    """Issue 5's bound on tern/ORT latency for MODEL_FILE (a file name): 0.8 for the face
    detectors, 1.0 for every other model."""
    return 0.8 if os.path.basename(model_file).startswith(FACE_PREFIXES) else 1.0


def parse_tern_bench(out):
    """{"median_ms", "min_ms", "p90_ms"} from `tern bench` output. Raises
    benchlib.CommandError when a line is missing."""
    res = {}
    for key in ("median", "min", "p90"):
        m = re.search(rf"^{key}:\s+([0-9.]+) ms$", out, re.MULTILINE)
        if not m:
            raise benchlib.CommandError(f"no '{key}: X ms' line in the output of tern bench:\n{out}")
        res[f"{key}_ms"] = float(m.group(1))
    return res


def parse_ort_time(out):
    """The JSON result line of bench/ort_time.js. Raises benchlib.CommandError when there is
    none."""
    for line in reversed(out.splitlines()):
        if line.startswith("{") and "median_ms" in line:
            return json.loads(line)
    raise benchlib.CommandError(f"no JSON result line in the output of ort_time.js:\n{out}")


def summarize(rounds, target):
    """Aggregates ROUNDS, a list of {"tern": {"median_ms"...}, "ort": {...}}: the median over
    rounds of each engine's median (ms), the median of the per-round tern/ORT ratios, and
    whether that ratio is within TARGET."""
    ratio = statistics.median(r["tern"]["median_ms"] / r["ort"]["median_ms"] for r in rounds)
    return {
        "tern_median_ms": statistics.median(r["tern"]["median_ms"] for r in rounds),
        "ort_median_ms": statistics.median(r["ort"]["median_ms"] for r in rounds),
        "ratio": ratio,
        "target": target,
        "ok": ratio <= target,
    }


def thread_speedups(results):
    """tern's speed-up from 1 to 2 threads (its 1-thread median ms / its 2-thread median ms)
    for every model and shape of RESULTS (compare's rows: "model", "inputs" {name: dims},
    "threads", "tern_median_ms") timed at both, in order: {"model", "dims", "speedup",
    "target"}, target being SCALING_TARGET's bound for its model and shape, else None."""
    by_key = {}
    for r in results:
        key = (r["model"], tuple(tuple(d) for d in r["inputs"].values()))
        by_key.setdefault(key, {})[r["threads"]] = r["tern_median_ms"]
    out = []
    for (model, dims), ms in by_key.items():
        if 1 in ms and 2 in ms:
            model_file, shape, bound = SCALING_TARGET
            target = bound if model == model_file and dims == (shape,) else None
            out.append({"model": model, "dims": dims, "speedup": ms[1] / ms[2], "target": target})
    return out


def ort_model(path):
    """PATH itself when no graph input is also an initializer; otherwise a copy without such
    inputs in .cache/models/ort/ (rewritten when PATH is newer), so that ONNX Runtime treats
    the weights as constants. Raises benchlib.CommandError when python3-onnx is missing."""
    try:
        import onnx
        # Debian's libonnx-testdata alone leaves an "onnx" folder (test data) that imports
        # as an empty namespace package: no load().
        onnx.load
    except (ImportError, AttributeError) as e:
        raise benchlib.CommandError(
            "python3-onnx is needed to check the models' graph inputs: apt-get install -y python3-onnx") from e
    out = os.path.join(benchlib.CACHE, "models", "ort", os.path.basename(path))
    if os.path.isfile(out) and os.path.getmtime(out) >= os.path.getmtime(path):
        return out
    model = onnx.load(path)
    weights = {init.name for init in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in weights]
    if len(inputs) == len(model.graph.input):
        return path
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    onnx.save(model, out + ".tmp")
    os.replace(out + ".tmp", out)
    return out


def ensure_resnet18(path=RESNET18):
    """Exports torchvision's ResNet-18 with random weights (torch.manual_seed(0)) to PATH
    (1x3x224x224 input "input", opset 13) unless it is there; returns PATH, or None (after
    printing how to install it) when torchvision is not installed."""
    if os.path.isfile(path):
        return path
    try:
        import torch
        import torchvision
    except ImportError:
        print("ResNet-18 skipped: it is exported from Debian's torchvision, which is not installed "
              "(apt-get install -y python3-torchvision)", file=sys.stderr)
        return None
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(model, torch.rand(1, 3, 224, 224), path + ".tmp", opset_version=13,
                          input_names=["input"], output_names=["logits"], do_constant_folding=True)
    os.replace(path + ".tmp", path)
    return path


def benchmark_rows(models_dir, only):
    """The rows to time: {"model" (file name), "path", "inputs"} for every index model at each
    distinct reference-case shape, then ResNet-18; only those whose file name contains ONLY."""
    rows = []
    for model in benchlib.load_index(models_dir):
        if only and only not in model["path"]:
            continue
        path = os.path.join(models_dir, model["path"])
        for inputs in benchlib.distinct_inputs(models_dir, model):
            rows.append({"model": model["path"], "path": path, "inputs": inputs})
    resnet18 = resnet18_row(only)
    if resnet18:
        rows.append(resnet18)
    return rows


def resnet18_row(only):
    """ResNet-18's row ({"model", "path", "inputs"}, at 1x3x224x224), exported on first use;
    None when its file name does not contain ONLY or python3-torchvision is missing."""
    if only and only not in os.path.basename(RESNET18):
        return None
    path = ensure_resnet18()
    if not path:
        return None
    return {"model": os.path.basename(path), "path": path, "inputs": (("input", (1, 3, 224, 224)),)}


def round_cpus(round_index, threads, cpus):
    """The CPUs both engines of round ROUND_INDEX use with THREADS threads, out of CPUS (a
    sorted list): THREADS consecutive ones, starting THREADS further each round (wrapping
    around); None (no pinning) when THREADS is not below len(CPUS)."""
    if threads >= len(cpus):
        return None
    start = round_index * threads
    return {cpus[(start + i) % len(cpus)] for i in range(threads)}


def time_row(tern, row, threads, args, env):
    """Runs tern and ORT alternately for args.rounds rounds on ROW with THREADS threads
    (pinned per round_cpus unless args.no_pin); returns the per-round results plus
    summarize()'s figures."""
    shapes = benchlib.shape_args(row["inputs"])
    common = ["--threads", str(threads), "--runs", str(args.runs), "--warmup", str(args.warmup)]
    tern_cmd = [tern, "bench", row["path"]] + shapes + common
    ort_cmd = ["node", benchlib.ORT_TIME_JS, "--model", ort_model(row["path"])] + shapes + common
    available = sorted(os.sched_getaffinity(0))
    rounds = []
    for i in range(args.rounds):
        cpus = None if args.no_pin else round_cpus(i, threads, available)
        t = parse_tern_bench(benchlib.run(tern_cmd, cpus=cpus))
        o = parse_ort_time(benchlib.run(ort_cmd, env, cpus=cpus))
        rounds.append({"tern": t, "ort": o, "cpus": sorted(cpus) if cpus else None})
    return dict(summarize(rounds, target_ratio(row["model"])), rounds=rounds)


def parse_threads(text):
    """'1,2' -> [1, 2]; raises argparse.ArgumentTypeError unless every item is an integer >= 1."""
    try:
        threads = [int(t) for t in text.split(",")]
    except ValueError:
        threads = []
    if not threads or min(threads) < 1:
        raise argparse.ArgumentTypeError(f"expected thread counts >= 1 separated by commas, got '{text}'")
    return threads


def positive(text):
    """argparse type: an integer >= 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got '{text}'")
    return int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=benchlib.default_models_dir(),
                    help="folder with index.json (default: $TERN_MODELS_DIR or ../shared/models)")
    ap.add_argument("--tern", default=benchlib.default_tern(), help="tern CLI binary")
    ap.add_argument("--only", help="only models whose file name contains this")
    ap.add_argument("--threads", type=parse_threads, default=[1, 2], help="e.g. 1,2 (default)")
    ap.add_argument("--rounds", type=positive, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--runs", type=positive, default=30, help="timed runs per process (default 30)")
    ap.add_argument("--warmup", type=positive, default=5, help="untimed runs per process (default 5)")
    ap.add_argument("--json", metavar="OUT", help="write every round's raw results to OUT")
    ap.add_argument("--no-pin", action="store_true",
                    help="do not pin rows with fewer threads than CPUs (see CPUs above)")
    args = ap.parse_args()

    if not os.path.isfile(args.tern):
        sys.exit(f"no tern binary at {args.tern}: build it (make build) or give --tern PATH")
    try:
        env = benchlib.ort_env(benchlib.ensure_ort())
        rows = benchmark_rows(args.models, args.only)
        if not rows:
            sys.exit(f"no model file name contains '{args.only}'")
        node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        print(f"tern {args.tern} vs ONNX Runtime {benchlib.ORT_VERSION} (onnxruntime-node, node {node}); "
              f"{args.runs} timed runs after {args.warmup} warm-up per process, median of "
              f"{args.rounds} alternating rounds\n")
        header = ("model", "shape", "threads", "tern ms", "ORT ms", "tern/ORT", "target")
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header), flush=True)
        results = []
        for row in rows:
            dims = ", ".join(benchlib.dims_str(shape) for _, shape in row["inputs"])
            for threads in args.threads:
                r = time_row(args.tern, row, threads, args, env)
                results.append({"model": row["model"], "inputs": dict(row["inputs"]), "threads": threads, **r})
                print(f"| {row['model']} | {dims} | {threads} | {r['tern_median_ms']:.2f} | "
                      f"{r['ort_median_ms']:.2f} | {r['ratio']:.2f} | <= {r['target']:.1f} "
                      f"{'ok' if r['ok'] else 'MISSED'} |", flush=True)
    except (benchlib.CommandError, FileNotFoundError) as e:
        sys.exit(f"compare.py: {e}")
    missed = sum(not r["ok"] for r in results)
    print(f"\n{len(results) - missed} of {len(results)} rows within the target, {missed} missed")
    speedups = thread_speedups(results)
    if speedups:
        print("\ntern, 1 -> 2 threads (1-thread ms / 2-thread ms):\n")
        print("| model | shape | speed-up | target |\n|---|---|---|---|")
        for s in speedups:
            dims = ", ".join(benchlib.dims_str(d) for d in s["dims"])
            target = (f">= {s['target']:.1f} {'ok' if s['speedup'] >= s['target'] else 'MISSED'}"
                      if s["target"] else "")
            print(f"| {s['model']} | {dims} | {s['speedup']:.2f}x | {target} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ort_version": benchlib.ORT_VERSION, "rounds": args.rounds, "runs": args.runs,
                       "warmup": args.warmup, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
