#!/usr/bin/python3
"""Peak resident memory of `tern bench` vs ONNX Runtime, and tern's plan figures.

For every model in ../shared/models/index.json (at the input shape of its largest reference
case: RetinaFace at 640x640) and compare.py's ResNet-18 (when python3-torchvision is
installed), prints the node count before and after tern's pass pipeline,
the arena bytes vs the sum of all intermediate tensor sizes, the packed-weight bytes, and
the peak resident set size (max RSS from /usr/bin/time) of

  - `tern bench MODEL --shape ... --threads T --runs R`
  - `node bench/ort_time.js --model MODEL --shape ... --threads T --runs R` (ONNX Runtime from
    npm onnxruntime-node 1.30, installed with --ignore-scripts into .cache/ortnode, ignored by
    git; see benchlib.py)
  - `node -e require(onnxruntime-node)`: the ONNX Runtime process before any model is loaded,
    so the model's own share can be read as ORT peak - baseline.

ORT reads the same model file as compare.py gives it (compare.ort_model: a copy without the
weights listed among the graph inputs, which ORT could not fold). Each row ends with issue
5's target: tern's peak at or below ORT's, "ok" or "MISSED".

The engines are run alternately (tern, ORT, tern, ORT, ...) and the median of the rounds is
reported. Usage (from the repo root, after `make build`):

    /usr/bin/python3 bench/memory.py [--models DIR] [--threads 1] [--runs 20] [--rounds 3]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

import benchlib
import compare


def max_rss_kb(cmd, env=None):
    """Runs cmd under /usr/bin/time; returns (max RSS in KiB, stdout)."""
    r = subprocess.run(["/usr/bin/time", "-f", "TERN_MAXRSS %M"] + cmd, capture_output=True,
                       text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    m = re.search(r"TERN_MAXRSS (\d+)", r.stderr)
    return int(m.group(1)), r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=benchlib.default_models_dir())
    ap.add_argument("--tern", default=benchlib.default_tern())
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", help="substring of the model file names to run")
    args = ap.parse_args()

    try:
        modules = benchlib.ensure_ort()
        models = [(m["path"], os.path.join(args.models, m["path"]), benchlib.largest_inputs(args.models, m))
                  for m in benchlib.load_index(args.models)]
        resnet18 = compare.resnet18_row(args.only)
        if resnet18:
            models.append((resnet18["model"], resnet18["path"], resnet18["inputs"]))
    except (benchlib.CommandError, FileNotFoundError) as e:
        sys.exit(f"memory.py: {e}")
    env = benchlib.ort_env(modules)

    baseline = statistics.median(
        max_rss_kb(["node", "-e", f"require({json.dumps(os.path.join(modules, 'onnxruntime-node'))})"],
                   env)[0] for _ in range(args.rounds))
    print(f"ONNX Runtime {benchlib.ORT_VERSION} (node {subprocess.check_output(['node', '--version'], text=True).strip()}) "
          f"baseline, no model loaded: {baseline / 1024:.1f} MB")
    print(f"threads {args.threads}, {args.runs} runs per process, median of {args.rounds} alternating rounds\n")
    header = ("model", "shape", "nodes", "arena MB", "sum MB", "packed MB", "tern MB", "ORT MB",
              "ORT-base MB", "tern/ORT", "target")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    worse = 0
    for name, path, inputs in models:
        if args.only and args.only not in name:
            continue
        dims = ", ".join(benchlib.dims_str(shape) for _, shape in inputs)
        common = benchlib.shape_args(inputs) + ["--threads", str(args.threads), "--runs",
                                                str(args.runs), "--warmup", "2"]
        tern_cmd = [args.tern, "bench", path] + common
        try:
            ort_cmd = ["node", benchlib.ORT_TIME_JS, "--model", compare.ort_model(path)] + common
        except benchlib.CommandError as e:
            sys.exit(f"memory.py: {e}")
        tern_rss, ort_rss = [], []
        out = ""
        for _ in range(args.rounds):
            kb, out = max_rss_kb(tern_cmd, env)
            tern_rss.append(kb)
            ort_rss.append(max_rss_kb(ort_cmd, env)[0])
        plan = re.search(r"plan: +(\d+) nodes \((\d+) in the model\), arena ([0-9.]+) MB "
                         r"\(intermediates ([0-9.]+) MB\), weights ([0-9.]+) MB \(packed ([0-9.]+) MB\)", out)
        if not plan:
            sys.exit(f"cannot read the plan line of tern bench:\n{out}")
        t, o = statistics.median(tern_rss) / 1024, statistics.median(ort_rss) / 1024
        worse += t > o
        print(f"| {name} | {dims} | {plan.group(2)} -> {plan.group(1)} | {plan.group(3)} | "
              f"{plan.group(4)} | {plan.group(6)} | {t:.1f} | {o:.1f} | {o - baseline / 1024:.1f} | {t / o:.2f} | <= 1.0 {'ok' if t <= o else 'MISSED'} |")
    print(f"\n{worse} model(s) where tern's peak memory is above ONNX Runtime's")


if __name__ == "__main__":
    main()
