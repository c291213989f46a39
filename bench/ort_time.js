#!/usr/bin/env node
// ort_time.js - latency of one ONNX model under ONNX Runtime (npm onnxruntime-node, CPU EP),
// timed the way `tern bench` times tern, so bench/compare.py can put the two side by side.
//
// Usage (onnxruntime-node must be found by require(); bench/compare.py installs it into
// .cache/ortnode and sets NODE_PATH to its node_modules):
//   NODE_PATH=.cache/ortnode/node_modules node bench/ort_time.js --model M.onnx
//       [--shape NAME=1x3xHxW ...] [--threads N] [--runs R] [--warmup W]
//
// Session: CPU execution provider, graphOptimizationLevel 'all', intraOpNumThreads = N,
// interOpNumThreads = 1, sequential execution. Inputs: float32, uniform [0, 1) from a fixed
// xorshift32 generator (same values in every process); an input whose dims are not all
// known needs --shape (a `1x3x240x320`-style value without NAME= sets the first input).
// Timing: W untimed session.run() calls, then R calls each timed with process.hrtime
// (wall time, ms; includes the node binding's per-call overhead). Prints one JSON line:
//   {"engine", "version", "model", "threads", "shapes", "runs", "warmup", "load_ms",
//    "median_ms", "min_ms", "p90_ms"}
// where median and p90 are nearest-rank percentiles (the definition `tern bench` uses).
// Exits 1 with a message on stderr on a bad argument or an ONNX Runtime error.
'use strict';

const path = require('path');

// Reads the command line into {model, shapes: Map(name -> dims), threads, runs, warmup};
// throws an Error naming the bad argument and what was expected.
function parseArgs(argv) {
  const a = { model: null, shapes: new Map(), threads: 1, runs: 30, warmup: 5 };
  const positiveInt = (flag, v, min) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) {
      throw new Error(`${flag} expects an integer >= ${min}, got '${v}'`);
    }
    return n;
  };
  for (let i = 2; i < argv.length; i += 2) {
    const flag = argv[i];
    const v = argv[i + 1];
    if (v === undefined) throw new Error(`${flag} expects a value`);
    if (flag === '--model') {
      a.model = v;
    } else if (flag === '--shape') {
      const eq = v.lastIndexOf('=');
      const name = eq >= 0 ? v.slice(0, eq) : '';
      const dims = (eq >= 0 ? v.slice(eq + 1) : v).split('x').map((d) => positiveInt('--shape', d, 1));
      a.shapes.set(name, dims);
    } else if (flag === '--threads') {
      a.threads = positiveInt(flag, v, 1);
    } else if (flag === '--runs') {
      a.runs = positiveInt(flag, v, 1);
    } else if (flag === '--warmup') {
      a.warmup = positiveInt(flag, v, 0);
    } else {
      throw new Error(`unknown argument '${flag}' (expected --model, --shape, --threads, --runs, --warmup)`);
    }
  }
  if (!a.model) throw new Error('--model M.onnx is required');
  return a;
}

// Nearest-rank percentile of ascending `sorted` (p in (0, 100]), as in tern's cmd_bench.cc.
function percentile(sorted, p) {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
}

// Generator of uniform [0, 1) floats: Marsaglia's xorshift32 (13, 17, 5), fixed seed.
function makeUniform(seed) {
  let s = seed >>> 0;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

// One float32 tensor per session input: the --shape dims for it (by name, or the unnamed
// --shape for the first input), else its static model dims. Throws when neither is known.
function makeFeeds(ort, session, shapes) {
  const uniform = makeUniform(20240601);
  const feeds = {};
  const used = {};
  session.inputNames.forEach((name, idx) => {
    const meta = session.inputMetadata ? session.inputMetadata[idx] : undefined;
    let dims = shapes.get(name) || (idx === 0 ? shapes.get('') : undefined);
    if (!dims) {
      const known = meta && Array.isArray(meta.shape) && meta.shape.every((d) => typeof d === 'number' && d > 0);
      if (!known) throw new Error(`input '${name}' has symbolic dims: give --shape ${name}=1x3xHxW`);
      dims = meta.shape;
    }
    if (meta && meta.type && meta.type !== 'float32') {
      throw new Error(`input '${name}' is ${meta.type}; ort_time.js feeds float32 only`);
    }
    const data = new Float32Array(dims.reduce((x, y) => x * y, 1));
    for (let i = 0; i < data.length; i++) data[i] = uniform();
    feeds[name] = new ort.Tensor('float32', data, dims);
    used[name] = dims.join('x');
  });
  for (const name of shapes.keys()) {
    if (name !== '' && !(name in used)) {
      throw new Error(`--shape names '${name}', which is not an input (inputs: ${session.inputNames.join(', ')})`);
    }
  }
  return { feeds, used };
}

async function main() {
  const a = parseArgs(process.argv);
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    throw new Error('cannot load onnxruntime-node: set NODE_PATH to the node_modules holding it ' +
      '(bench/compare.py installs it into .cache/ortnode): ' + e.message);
  }
  const version = require(path.join(path.dirname(require.resolve('onnxruntime-node')), '..', 'package.json')).version;
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(a.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    logSeverityLevel: 3,
  });
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const { feeds, used } = makeFeeds(ort, session, a.shapes);
  for (let i = 0; i < a.warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < a.runs; i++) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((x, y) => x - y);
  const round = (x) => Math.round(x * 1000) / 1000;
  console.log(JSON.stringify({
    engine: 'onnxruntime-node',
    version,
    model: a.model,
    threads: a.threads,
    shapes: used,
    runs: a.runs,
    warmup: a.warmup,
    load_ms: round(loadMs),
    median_ms: round(percentile(times, 50)),
    min_ms: round(times[0]),
    p90_ms: round(percentile(times, 90)),
  }));
}

main().catch((e) => {
  console.error(`ort_time.js: ${e.message}`);
  process.exit(1);
});
