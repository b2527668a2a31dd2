"""Tests of scripts/calibrate without a GPU and without PyTorch.

The dry run must enumerate every configuration and write the same JSON schema as a measured
run; it runs here in a subprocess whose `import torch` fails, which proves the suite imports
PyTorch lazily. The configuration tests pin the conventions the cost model relies on (shapes,
FLOP and byte formulas).

Run from the repository root:  python3 -m unittest discover -s tests/calibrate -v
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "calibrate" / "calibrate.py"
KINDS = ("gemm", "attention", "membound", "launch")
PROVENANCE_KEYS = ("gpu", "driver", "cuda", "torch", "date", "host", "script", "command")
GPU_PROVENANCE_KEYS = ("gpu", "driver", "cuda", "torch")
TOP_LEVEL_KEYS = ("schema_version", "kind", "measured", "provenance", "units", "rows")

# Importing the suite modules below must not leave __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, str(SCRIPT.parent))
import attention  # noqa: E402
import gemm  # noqa: E402
import membound  # noqa: E402

BLOCKER = 'raise ImportError("torch is blocked: the calibration dry run must not need it")\n'


def torchless_env(blocker_dir):
    """The current environment with a torch.py first on PYTHONPATH that refuses to import."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocker_dir), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def config_key(row, *ignored):
    """A row's configuration as a comparable string, without its provenance-only fields."""
    skip = {"origin", *ignored}
    return json.dumps({k: v for k, v in row.items() if k not in skip}, sort_keys=True)


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class DryRunTest(unittest.TestCase):
    """One full dry run and one quick dry run, shared by the checks below."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls._tmp.name)
        (tmp / "blocker").mkdir()
        (tmp / "blocker" / "torch.py").write_text(BLOCKER)
        cls.env = torchless_env(tmp / "blocker")
        cls.out = tmp / "full"
        cls.quick_out = tmp / "quick"
        cls.result = cls.run_script("--out", str(cls.out), "--dry-run")
        cls.quick_result = cls.run_script("--out", str(cls.quick_out), "--dry-run", "--quick")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    @classmethod
    def run_script(cls, *args):
        return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, env=cls.env,
                              capture_output=True, text=True, timeout=120)

    def load(self, kind, out=None):
        with open((out or self.out) / f"{kind}.json", encoding="utf-8") as f:
            return json.load(f)

    def test_torch_is_really_blocked(self):
        probe = subprocess.run([sys.executable, "-c", "import torch"], env=self.env,
                               capture_output=True, text=True, timeout=60)
        self.assertNotEqual(probe.returncode, 0)
        self.assertIn("torch is blocked", probe.stderr)

    def test_dry_run_exits_zero_and_prints_a_table(self):
        for result in (self.result, self.quick_result):
            self.assertEqual(result.returncode, 0, result.stderr)
            for kind in KINDS:
                self.assertRegex(result.stdout, rf"(?m)^{kind}\s+\d+\s")
            self.assertIn("dry run", result.stdout)

    def test_every_file_has_the_schema(self):
        for kind in KINDS:
            with self.subTest(kind=kind):
                doc = self.load(kind)
                for key in TOP_LEVEL_KEYS:
                    self.assertIn(key, doc)
                self.assertEqual(doc["schema_version"], 1)
                self.assertEqual(doc["kind"], kind)
                self.assertIs(doc["measured"], False)
                self.assertIsInstance(doc["rows"], list)
                self.assertGreater(len(doc["rows"]), 0)

    def test_provenance_names_the_run_but_no_gpu(self):
        for kind in KINDS:
            with self.subTest(kind=kind):
                prov = self.load(kind)["provenance"]
                for key in PROVENANCE_KEYS:
                    self.assertIn(key, prov)
                for key in GPU_PROVENANCE_KEYS:
                    self.assertIsNone(prov[key], key)
                self.assertEqual(prov["script"], "scripts/calibrate/calibrate.py")
                self.assertIn("--dry-run", prov["command"])
                self.assertRegex(prov["date"], r"^\d{4}-\d{2}-\d{2}T")

    def test_measurements_are_null_and_every_numeric_field_has_a_unit(self):
        for kind in KINDS:
            with self.subTest(kind=kind):
                doc = self.load(kind)
                units = doc["units"]
                fields = doc["measurement_fields"]
                self.assertTrue(fields)
                for field in fields:
                    self.assertIn(field, units, f"measurement field {field} has no unit")
                for row in doc["rows"]:
                    self.assertEqual(row["status"], "dry_run")
                    for field in fields:
                        self.assertIn(field, row)
                        self.assertIsNone(row[field], field)
                    for key, value in row.items():
                        if is_number(value):
                            self.assertIn(key, units, f"numeric field {key} has no unit")
                self.assertEqual(set(units) - set(doc["rows"][0]), set(),
                                 "units name fields that rows do not have")

    def test_rows_of_a_file_share_one_set_of_keys(self):
        for kind in KINDS:
            with self.subTest(kind=kind):
                rows = self.load(kind)["rows"]
                self.assertEqual({tuple(sorted(r)) for r in rows}, {tuple(sorted(rows[0]))})

    def test_configurations_are_unique(self):
        for kind in KINDS:
            with self.subTest(kind=kind):
                rows = self.load(kind)["rows"]
                keys = [config_key(r) for r in rows]
                self.assertEqual(len(keys), len(set(keys)))

    def test_quick_is_a_smaller_subset_with_the_same_schema(self):
        for kind in KINDS:
            with self.subTest(kind=kind):
                full, quick = self.load(kind), self.load(kind, self.quick_out)
                self.assertEqual(full["units"], quick["units"])
                self.assertTrue(quick["method"]["quick"])
                self.assertLessEqual(len(quick["rows"]), len(full["rows"]))
                # origin lists only the hidden sizes swept, repeats shrinks in quick mode
                self.assertLessEqual({config_key(r, "repeats") for r in quick["rows"]},
                                     {config_key(r, "repeats") for r in full["rows"]})


class CommandLineTest(unittest.TestCase):
    def run_script(self, *args, env=None):
        return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120)

    def test_only_writes_the_selected_suites(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = self.run_script("--out", tmp, "--dry-run", "--only", "launch,gemm")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(sorted(os.listdir(tmp)), ["gemm.json", "launch.json"])

    def test_unknown_suite_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = self.run_script("--out", tmp, "--dry-run", "--only", "gemm,nccl")
            self.assertEqual(result.returncode, 2)
            self.assertIn("nccl", result.stderr)

    def test_real_run_without_torch_fails_with_one_clear_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            blocker = Path(tmp) / "blocker"
            blocker.mkdir()
            (blocker / "torch.py").write_text(BLOCKER)
            result = self.run_script("--out", str(Path(tmp) / "out"), env=torchless_env(blocker))
            self.assertEqual(result.returncode, 1)
            self.assertIn("--dry-run", result.stderr)
            self.assertNotIn("Traceback", result.stderr)


class ConfigurationTest(unittest.TestCase):
    """The sweeps and conventions the brief and the cost model fix."""

    def test_swiglu_width_rounds_8h_over_3_up_to_64(self):
        self.assertEqual(gemm.swiglu_width(4096), 10944)
        self.assertEqual(gemm.swiglu_width(8192), 21888)
        self.assertEqual(gemm.swiglu_width(12288), 32768)

    def test_gemm_sweep_covers_layer_shapes_and_mamf(self):
        shapes = {(c["m"], c["n"], c["k"]) for c in gemm.configs(quick=False)}
        self.assertIn(gemm.MAMF_SHAPE, shapes)
        self.assertEqual({c["dtype"] for c in gemm.configs(quick=False)}, {"bf16", "fp8_e4m3"})
        for m in gemm.M_VALUES:
            self.assertIn((m, 3 * 4096, 4096), shapes)  # QKV, tp=1
            self.assertIn((m, 8192, 4 * 8192 // 8), shapes)  # MLP down, tp=8
            self.assertIn((m, 10944 // 8, 4096), shapes)  # SwiGLU up, tp=8
        for c in gemm.configs(quick=False):
            self.assertEqual(c["flop"], 2 * c["m"] * c["n"] * c["k"])

    def test_attention_follows_the_fa3_setup_and_flop_convention(self):
        rows = attention.configs(quick=False)
        self.assertEqual(len(rows), 2 * 2 * 2 * 2 * 6)  # pass x backend x causal x d x seq
        for c in rows:
            self.assertEqual(c["batch"] * c["seq"], 16384)
            self.assertEqual(c["heads"] * c["head_dim"], 2048)
            fwd = 4 * c["batch"] * c["seq"] ** 2 * c["heads"] * c["head_dim"]
            fwd = fwd // 2 if c["causal"] else fwd
            self.assertEqual(c["flop"], fwd if c["pass"] == "fwd" else int(2.5 * fwd))

    def test_membound_sizes_and_bytes(self):
        rows = membound.configs(quick=False)
        self.assertEqual(min(c["size_bytes"] for c in rows), 1 << 20)
        self.assertEqual(max(c["size_bytes"] for c in rows), 1 << 30)
        self.assertEqual({c["op"] for c in rows}, set(membound.OPS))
        for c in rows:
            self.assertEqual(c["rows"] * c["width"], c["numel"])
            if c["op"] == "residual_add":
                self.assertEqual(c["bytes_moved"], 3 * c["numel"] * 2)
            if c["op"] == "adamw":
                self.assertEqual(c["bytes_moved"], 28 * c["numel"])


if __name__ == "__main__":
    unittest.main()
