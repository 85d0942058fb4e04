"""The shared helpers: shapes, generated data, case geometry, the NumPy references and comparisons.

    python3 -m unittest bench/peers/test_common.py
"""

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


class CommonTest(unittest.TestCase):
    def test_shape_of_matches_bench_util(self):
        self.assertEqual(common.shape_of(1 << 20, 1), [1 << 20])
        self.assertEqual(common.shape_of(1 << 20, 2), [1024, 1024])
        self.assertEqual(common.shape_of(1 << 10, 4), [4, 4, 8, 8])
        self.assertEqual(common.shape_of(1 << 10, 8), [2, 2, 2, 2, 2, 2, 4, 4])
        self.assertEqual(common.shape_of(1 << 7, 8), [1, 2, 2, 2, 2, 2, 2, 2])

    def test_density_is_honoured_and_values_are_never_zero_bits(self):
        for dtype in ("float32", "float16", "uint8"):
            for density in (0.0, 0.01, 0.5, 1.0):
                case = common.nonzero_case("t", dtype, 1 << 16, 2, density)
                data = common.nonzero_data(case, seed=3)
                self.assertEqual(data.dtype, np.dtype(dtype))
                self.assertEqual(list(data.shape), case.shapes[0])
                count = common.count_nonzero(data, dtype)
                self.assertAlmostEqual(count / data.size, density, delta=0.01)
                self.assertEqual(count, len(np.argwhere(data)))  # random bits: no -0.0 among them

    def test_special_values_hold_signed_zeros_nans_and_denormals(self):
        data = common.nonzero_data(common.nonzero_case("t", "float32", 1 << 12, 1, 0, "special"), seed=1)
        self.assertTrue(np.any(np.signbit(data) & (data == 0)))
        self.assertTrue(np.any(np.isnan(data)))
        self.assertTrue(np.any((data != 0) & (np.abs(data) < np.finfo(np.float32).tiny)))
        self.assertEqual(common.count_nonzero(data, "float32"), len(np.argwhere(data)))

    def test_clustered_runs_are_long(self):
        data = common.nonzero_data(common.nonzero_case("t", "float32", 1 << 20, 2, 0, "clustered"), seed=2)
        flags = (data.reshape(-1) != 0).astype(np.int8)
        runs = np.count_nonzero(np.diff(flags)) + 1
        self.assertGreater(data.size / runs, 1000)
        self.assertAlmostEqual(flags.mean(), 0.5, delta=0.1)

    def test_concat_geometry(self):
        inner = common.concat_case("join", "t", "float16", 1 << 20, 2, 8)
        self.assertEqual(inner.shapes, [[1 << 16, 4], [1 << 16, 4]])
        self.assertEqual((inner.axis, inner.whole_shape, inner.total_bytes), (1, [1 << 16, 8], 1 << 20))
        outer = common.concat_case("split", "t", "float32", 1000 * 4096, 1000)
        self.assertEqual((outer.axis, outer.shapes[0], outer.split_sizes[:2]), (0, [1024], [1024, 1024]))
        self.assertEqual(common.concat_bytes(outer), 2 * 1000 * 4096)

    def test_references_and_compare(self):
        case = common.concat_case("split", "t", "float32", 4096, 4, 16)
        pool = common.random_bytes(case.total_bytes, 1)
        expected = common.reference(case, common.concat_data(case, pool))
        self.assertEqual([list(e.shape) for e in expected], case.shapes)
        self.assertIsNone(common.compare(expected, [e.copy() for e in expected]))
        broken = [e.copy() for e in expected]
        broken[2].view(np.uint8)[0, 0] ^= 1
        self.assertIn("bytes differ", common.compare(expected, broken))
        coordinates = np.array([[0, 1], [2, 3]])
        self.assertIsNone(common.compare([coordinates], [coordinates.astype(np.uint32)], coordinates=True))
        self.assertIn("rows differ", common.compare([coordinates], [coordinates[::-1]], coordinates=True))
        self.assertIn("shape", common.compare([coordinates], [coordinates[:1]], coordinates=True))

    def test_aligned_empty(self):
        for shape, dtype in (((3,), "uint8"), ((5, 7), "float16"), ((1 << 20,), "float32")):
            a = common.aligned_empty(shape, dtype)
            self.assertEqual((a.shape, a.dtype), (shape, np.dtype(dtype)))
            self.assertEqual(a.ctypes.data % 64, 0)


if __name__ == "__main__":
    unittest.main()
