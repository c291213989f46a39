"""Helpers shared by tern's benchmark scripts (bench/memory.py, bench/compare.py).

- where things are: the repo, the default `tern` binary, the models folder (../shared/models
  or $TERN_MODELS_DIR) and its index.json;
- the input shapes of each model's reference cases (reference/<case>/case.json);
- ONNX Runtime from npm (onnxruntime-node, installed on first use with --ignore-scripts into
  the git-ignored .cache/ortnode) and bench/ort_time.js, which times a model under it;
- running a command and failing with a clear message when it fails.

Standard library only, so it runs under Debian's /usr/bin/python3.
"""
import json
import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(REPO, ".cache")
ORT_VERSION = "1.30.0"
ORT_TIME_JS = os.path.join(REPO, "bench", "ort_time.js")


class CommandError(RuntimeError):
    """A benchmark command exited non-zero or printed something unreadable."""


def default_models_dir():
    """$TERN_MODELS_DIR if set, else ../shared/models beside the repo."""
    return os.environ.get("TERN_MODELS_DIR", os.path.join(REPO, "..", "shared", "models"))


def default_tern():
    """The release build's CLI: build/release/tools/tern/tern in the repo."""
    return os.path.join(REPO, "build", "release", "tools", "tern", "tern")


def load_index(models_dir):
    """The "models" list of MODELS_DIR/index.json (each entry has "path" and
    "reference_cases"). Raises FileNotFoundError naming the missing file."""
    index = os.path.join(models_dir, "index.json")
    if not os.path.isfile(index):
        raise FileNotFoundError(f"no {index}: give the models folder with --models or $TERN_MODELS_DIR")
    with open(index) as f:
        return json.load(f)["models"]


def case_inputs(models_dir, case):
    """The inputs of one reference case as a tuple of (name, shape tuple), read from
    MODELS_DIR/CASE/case.json."""
    with open(os.path.join(models_dir, case, "case.json")) as f:
        c = json.load(f)
    return tuple((i["name"], tuple(i["shape"])) for i in c["inputs"])


def distinct_inputs(models_dir, model):
    """The distinct input shapes of MODEL's reference cases, in index order (one entry per
    distinct tuple of (name, shape) pairs)."""
    seen = []
    for case in model["reference_cases"]:
        inputs = case_inputs(models_dir, case)
        if inputs not in seen:
            seen.append(inputs)
    return seen


def largest_inputs(models_dir, model):
    """The inputs of MODEL's reference case with the most input elements."""
    def numel(inputs):
        total = 0
        for _, shape in inputs:
            n = 1
            for d in shape:
                n *= d
            total += n
        return total
    return max(distinct_inputs(models_dir, model), key=numel)


def dims_str(shape):
    """(1, 3, 240, 320) -> '1x3x240x320'."""
    return "x".join(str(d) for d in shape)


def shape_args(inputs):
    """--shape NAME=DIMS arguments for every input, as `tern bench` and ort_time.js take them."""
    args = []
    for name, shape in inputs:
        args += ["--shape", f"{name}={dims_str(shape)}"]
    return args


def ensure_ort(cache=os.path.join(CACHE, "ortnode")):
    """Installs npm onnxruntime-node ORT_VERSION into CACHE (with --ignore-scripts: its
    install script would download GPU parts; the linux-x64 CPU library is in the package)
    unless that version is there already; returns CACHE/node_modules. Raises CommandError
    when npm fails."""
    modules = os.path.join(cache, "node_modules")
    package = os.path.join(modules, "onnxruntime-node", "package.json")
    if os.path.isfile(package):
        with open(package) as f:
            if json.load(f).get("version") == ORT_VERSION:
                return modules
    os.makedirs(cache, exist_ok=True)
    if not os.path.isfile(os.path.join(cache, "package.json")):
        run(["npm", "init", "-y"], cwd=cache)
    run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund",
         f"onnxruntime-node@{ORT_VERSION}"], cwd=cache)
    return modules


def ort_env(modules):
    """The environment for bench/ort_time.js (and any `node` that requires onnxruntime-node):
    NODE_PATH = MODULES."""
    return dict(os.environ, NODE_PATH=modules)


def run(cmd, env=None, cwd=None, cpus=None):
    """Runs CMD (a list); returns its stdout. CPUS, a set of CPU numbers, restricts the
    process to them (sched_setaffinity) when given. Raises CommandError with the command
    line, exit code and output when it exits non-zero or cannot start."""
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, preexec_fn=pin)
    except OSError as e:
        raise CommandError(f"cannot run {' '.join(cmd)}: {e}") from e
    if r.returncode != 0:
        raise CommandError(f"failed (exit {r.returncode}): {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r.stdout
