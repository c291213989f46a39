#!/usr/bin/python3
"""Unit tests of the benchmark scripts' helpers (benchlib.py, compare.py, ort_time.js's
argument checks); no engine is timed. Run: /usr/bin/python3 -m unittest discover -s bench"""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import compare  # noqa: E402

TERN_BENCH_OUTPUT = """model:   m.onnx
input:   input float32 [1, 3, 240, 320] (uniform [0, 1), seed 20240601)
threads: 1
runs:    3 timed after 2 warm-up (first run, with planning: 73.68 ms)
median:  74.407 ms
min:     74.348 ms
p90:     74.710 ms
peak memory: 16.6 MB (VmHWM)
"""


def write_case(root, case, inputs):
    os.makedirs(os.path.join(root, case))
    with open(os.path.join(root, case, "case.json"), "w") as f:
        json.dump({"inputs": [{"name": n, "shape": list(s), "file": "x.bin"} for n, s in inputs]}, f)


class ModelsDirTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        write_case(self.root, "reference/r/a", [("input", (1, 3, 320, 320))])
        write_case(self.root, "reference/r/b", [("input", (1, 3, 640, 640))])
        write_case(self.root, "reference/r/c", [("input", (1, 3, 320, 320))])
        write_case(self.root, "reference/r/d", [("input", (1, 3, 212, 320))])
        self.model = {"path": "r.onnx", "reference_cases": [f"reference/r/{c}" for c in "abcd"]}
        with open(os.path.join(self.root, "index.json"), "w") as f:
            json.dump({"models": [self.model]}, f)

    def tearDown(self):
        shutil.rmtree(self.root)

    def test_distinct_inputs_keep_index_order_without_repeats(self):
        shapes = [inputs[0][1] for inputs in benchlib.distinct_inputs(self.root, self.model)]
        self.assertEqual(shapes, [(1, 3, 320, 320), (1, 3, 640, 640), (1, 3, 212, 320)])

    def test_largest_inputs(self):
        self.assertEqual(benchlib.largest_inputs(self.root, self.model), (("input", (1, 3, 640, 640)),))

    def test_load_index_and_missing_index(self):
        self.assertEqual(benchlib.load_index(self.root), [self.model])
        with self.assertRaisesRegex(FileNotFoundError, "--models"):
            benchlib.load_index(os.path.join(self.root, "reference"))

    def test_benchmark_rows_filter_by_file_name(self):
        rows = compare.benchmark_rows(self.root, "r.onnx")
        self.assertEqual([r["inputs"][0][1][2:] for r in rows], [(320, 320), (640, 640), (212, 320)])
        self.assertEqual(compare.benchmark_rows(self.root, "no-such-model"), [])


class CompareTest(unittest.TestCase):
    def test_targets(self):
        for name in ("retinaface_mnet025.onnx", "ultraface_slim320.onnx", "fd1mb_rfb_landmark.onnx"):
            self.assertEqual(compare.target_ratio(name), 0.8, name)
        for name in ("squeezenet1.1.onnx", "mobilenetv2_1.0_224.onnx", "resnet18.onnx", "my_ultraface.onnx"):
            self.assertEqual(compare.target_ratio(name), 1.0, name)

    def test_parse_tern_bench(self):
        self.assertEqual(compare.parse_tern_bench(TERN_BENCH_OUTPUT),
                         {"median_ms": 74.407, "min_ms": 74.348, "p90_ms": 74.71})
        with self.assertRaisesRegex(benchlib.CommandError, "p90"):
            compare.parse_tern_bench(TERN_BENCH_OUTPUT.replace("p90:", "p95:"))

    def test_parse_ort_time(self):
        self.assertEqual(compare.parse_ort_time('warning\n{"median_ms": 2.5, "min_ms": 2}\n')["median_ms"], 2.5)
        with self.assertRaises(benchlib.CommandError):
            compare.parse_ort_time("median 2.5 ms\n")

    def test_summarize_takes_the_median_of_per_round_ratios(self):
        rounds = [{"tern": {"median_ms": t}, "ort": {"median_ms": o}}
                  for t, o in ((1.0, 1.0), (4.0, 2.0), (9.0, 10.0))]
        s = compare.summarize(rounds, 0.8)
        self.assertEqual(s["tern_median_ms"], 4.0)
        self.assertEqual(s["ort_median_ms"], 2.0)
        self.assertEqual(s["ratio"], 1.0)  # ratios 1, 2, 0.9 (the ratio of medians would be 2)
        self.assertFalse(s["ok"])
        self.assertTrue(compare.summarize(rounds, 1.0)["ok"])

    def test_thread_speedups_pair_1_and_2_threads_and_target_retinaface_640(self):
        def row(model, dims, threads, ms):
            return {"model": model, "inputs": {"input": dims}, "threads": threads, "tern_median_ms": ms}
        results = [row("retinaface_mnet025.onnx", (1, 3, 320, 320), 1, 3.0),
                   row("retinaface_mnet025.onnx", (1, 3, 320, 320), 2, 2.0),
                   row("retinaface_mnet025.onnx", [1, 3, 640, 640], 1, 12.0),  # lists, as in --json
                   row("retinaface_mnet025.onnx", [1, 3, 640, 640], 2, 6.0),
                   row("squeezenet1.1.onnx", (1, 3, 224, 224), 1, 5.0)]  # no 2-thread row
        s = compare.thread_speedups(results)
        self.assertEqual([(e["dims"], e["speedup"], e["target"]) for e in s],
                         [(((1, 3, 320, 320),), 1.5, None), (((1, 3, 640, 640),), 2.0, 1.7)])

    def test_parse_threads(self):
        self.assertEqual(compare.parse_threads("1,2"), [1, 2])
        for bad in ("", "0", "1,x", "-1"):
            with self.assertRaises(Exception, msg=bad):
                compare.parse_threads(bad)

    def test_round_cpus_rotate_and_cover_every_cpu(self):
        cpus = [0, 1]
        self.assertEqual([compare.round_cpus(i, 1, cpus) for i in range(4)], [{0}, {1}, {0}, {1}])
        self.assertIsNone(compare.round_cpus(0, 2, cpus))  # every CPU: no pinning
        self.assertIsNone(compare.round_cpus(3, 4, cpus))
        four = [2, 3, 5, 7]
        self.assertEqual([compare.round_cpus(i, 2, four) for i in range(3)], [{2, 3}, {5, 7}, {2, 3}])
        self.assertEqual([compare.round_cpus(i, 3, four) for i in range(2)], [{2, 3, 5}, {7, 2, 3}])

    def test_shape_args(self):
        self.assertEqual(benchlib.shape_args((("input", (1, 3, 4, 5)),)), ["--shape", "input=1x3x4x5"])

    def test_resnet18_is_skipped_with_a_hint_without_torchvision(self):
        saved = sys.modules.get("torchvision")
        sys.modules["torchvision"] = None  # makes `import torchvision` raise ImportError
        try:
            with tempfile.TemporaryDirectory() as d, contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertIsNone(compare.ensure_resnet18(os.path.join(d, "resnet18.onnx")))
        finally:
            if saved is None:
                del sys.modules["torchvision"]
            else:
                sys.modules["torchvision"] = saved
        self.assertIn("apt-get install -y python3-torchvision", err.getvalue())

    def test_run_reports_the_failed_command(self):
        with self.assertRaisesRegex(benchlib.CommandError, "exit 3"):
            benchlib.run([sys.executable, "-c", "import sys; sys.exit(3)"])
        with self.assertRaisesRegex(benchlib.CommandError, "cannot run"):
            benchlib.run(["/nonexistent/tern"])


try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    onnx = None


@unittest.skipUnless(onnx, "python3-onnx is not installed")
class OrtModelTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.cache = benchlib.CACHE
        compare.benchlib.CACHE = self.dir  # ort_model() writes under CACHE/models/ort

    def tearDown(self):
        compare.benchlib.CACHE = self.cache
        shutil.rmtree(self.dir)

    def save(self, name, weights_as_inputs):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
        w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [1, 2])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
        graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                                  [x, w] if weights_as_inputs else [x], [y],
                                  [helper.make_tensor("w", TensorProto.FLOAT, [1, 2], [1.0, 2.0])])
        path = os.path.join(self.dir, name)
        onnx.save(helper.make_model(graph), path)
        return path

    def test_weights_listed_as_inputs_are_dropped_from_a_copy(self):
        path = self.save("old.onnx", True)
        out = compare.ort_model(path)
        self.assertNotEqual(out, path)
        self.assertEqual([i.name for i in onnx.load(out).graph.input], ["x"])
        self.assertEqual([i.name for i in onnx.load(path).graph.input], ["x", "w"])

    def test_clean_model_is_used_as_is(self):
        path = self.save("clean.onnx", False)
        self.assertEqual(compare.ort_model(path), path)


class OrtModelWithoutOnnxTest(unittest.TestCase):
    # An "onnx" folder without the module (what Debian's libonnx-testdata installs when
    # python3-onnx is not there) is found first: a CommandError naming the package, not an
    # AttributeError from the namespace package it imports as.
    def test_onnx_folder_without_the_module(self):
        saved = sys.modules.get("onnx")
        sys.modules["onnx"] = types.ModuleType("onnx")  # what such a folder imports as
        try:
            with self.assertRaisesRegex(benchlib.CommandError, "python3-onnx"):
                compare.ort_model("m.onnx")
        finally:
            if saved is None:
                sys.modules.pop("onnx", None)
            else:
                sys.modules["onnx"] = saved


@unittest.skipUnless(shutil.which("node"), "node is not installed")
class OrtTimeArgsTest(unittest.TestCase):
    def run_js(self, *args):
        return subprocess.run(["node", benchlib.ORT_TIME_JS, *args], capture_output=True, text=True)

    def test_bad_arguments_exit_1_with_a_message(self):
        for args, message in ((["--bogus", "1"], "unknown argument '--bogus'"),
                              (["--model", "m.onnx", "--threads", "0"], "--threads expects an integer >= 1"),
                              (["--model", "m.onnx", "--shape", "input=1x3xAx4"], "--shape expects"),
                              (["--runs", "5"], "--model M.onnx is required")):
            r = self.run_js(*args)
            self.assertEqual(r.returncode, 1, args)
            self.assertIn(message, r.stderr, args)


if __name__ == "__main__":
    unittest.main()
