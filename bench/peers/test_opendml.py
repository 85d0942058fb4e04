"""The ctypes binding against NumPy on the CPU device: JOIN, SPLIT and NONZERO_COORDINATES must equal
np.concatenate, np.split and np.argwhere bit for bit, and errors must carry opendml's message.

    OPENDML_LIBRARY=build/src/libopendml.so python3 -m unittest bench/peers/test_opendml.py
"""

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import opendml  # noqa: E402

LIBRARY = os.environ.get("OPENDML_LIBRARY", "build/src/libopendml.so")


def run(device, descriptor, inputs, outputs):
    op = device.compile(descriptor)
    op.initialize()
    op.execute(op.bind(inputs, outputs))
    return op


def aligned_copy(array):
    out = common.aligned_empty(array.shape, array.dtype)
    out[...] = array
    return out


class BindingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lib = opendml.load(LIBRARY)
        cls.device = opendml.Device(cls.lib, "cpu")

    def test_device_name(self):
        self.assertTrue(self.device.name.startswith("cpu"))

    def test_join_equals_concatenate(self):
        rng = np.random.default_rng(1)
        for dtype in ("float32", "float16", "uint8", "int32", "int8", "float64"):
            for shapes, axis in [([(3, 5), (4, 5)], 0), ([(3, 5), (3, 2), (3, 1)], 1), ([(2, 3, 4)] * 3, 2),
                                 ([(7,)], 0), ([(1, 1, 2, 3), (1, 1, 2, 4)], 3), ([(5,)] * 9, 0)]:
                with self.subTest(dtype=dtype, shapes=shapes, axis=axis):
                    inputs = [aligned_copy(common.random_bytes(int(np.prod(s)) * np.dtype(dtype).itemsize,
                                                               int(rng.integers(1 << 30))).view(dtype).reshape(s))
                              for s in shapes]
                    expected = np.concatenate(inputs, axis=axis)
                    out = common.aligned_empty(expected.shape, dtype)
                    run(self.device, opendml.join(dtype, shapes, expected.shape, axis), inputs, [out])
                    self.assertIsNone(common.compare([expected], [out]))

    def test_split_equals_numpy_split(self):
        for dtype in ("float32", "float16", "uint8"):
            for shape, sizes, axis in [((6, 2), [2, 1, 3], 0), ((1, 1, 6, 2), [1, 1], 3), ((4, 9), [3, 3, 3], 1),
                                       ((11,), [11], 0), ((2, 64, 3), [1, 63], 1)]:
                with self.subTest(dtype=dtype, shape=shape, sizes=sizes):
                    source = aligned_copy(common.random_bytes(int(np.prod(shape)) * np.dtype(dtype).itemsize, 5)
                                          .view(dtype).reshape(shape))
                    expected = np.split(source, np.cumsum(sizes)[:-1], axis=axis)
                    outputs = [common.aligned_empty(e.shape, dtype) for e in expected]
                    run(self.device, opendml.split(dtype, shape, [e.shape for e in expected], axis), [source], outputs)
                    self.assertIsNone(common.compare(expected, outputs))

    def test_nonzero_equals_argwhere(self):
        for dtype in ("float32", "float16", "uint8"):
            for n, rank in [(1 << 10, 1), (1 << 12, 2), (1 << 14, 4), (1 << 10, 8)]:
                for density, pattern in [(0.0, "random"), (0.01, "random"), (0.5, "random"), (1.0, "random"),
                                         (0.0, "clustered"), (0.0, "special")]:
                    if pattern == "special" and dtype == "uint8":
                        continue
                    with self.subTest(dtype=dtype, n=n, rank=rank, density=density, pattern=pattern):
                        case = common.nonzero_case("test", dtype, n, rank, density, pattern)
                        data = aligned_copy(common.nonzero_data(case, seed=n + rank))
                        count = common.aligned_empty((1,), "uint32")
                        coordinates = common.aligned_empty((n, rank), "uint32")
                        run(self.device, opendml.nonzero_coordinates(dtype, data.shape), [data], [count, coordinates])
                        expected = np.argwhere(data)
                        self.assertEqual(int(count[0]), len(expected))
                        self.assertEqual(int(count[0]), common.count_nonzero(data, dtype))
                        self.assertTrue(np.array_equal(coordinates[:len(expected)], expected.astype(np.uint32)))

    def test_nonzero_trailing_columns(self):
        data = aligned_copy(np.array([[[0, 1, 0], [2, 0, 3]]], dtype=np.float32))  # [1, 2, 3]
        count, coordinates = common.aligned_empty((1,), "uint32"), common.aligned_empty((6, 2), "uint32")
        run(self.device, opendml.nonzero_coordinates("float32", data.shape, columns=2), [data], [count, coordinates])
        self.assertEqual(count[0], 3)
        self.assertEqual(coordinates[:3].tolist(), [[0, 1], [1, 0], [1, 2]])

    def test_bindings_can_be_reused(self):
        a, b = aligned_copy(np.arange(8, dtype=np.float32)), aligned_copy(np.arange(8, 16, dtype=np.float32))
        out = common.aligned_empty((16,), "float32")
        op = self.device.compile(opendml.join("float32", [(8,), (8,)], (16,), 0))
        op.initialize()
        bindings = op.bind([a, b], [out])
        for i in range(3):
            a[0] = i
            op.execute(bindings)
            self.assertEqual(out[0], i)
        self.assertTrue(op.implementation.startswith("cpu"))

    def test_invalid_descriptor_raises_with_message(self):
        with self.assertRaises(opendml.OpendmlError) as caught:
            self.device.compile(opendml.join("float32", [(2, 3), (2, 4)], (2, 8), axis=1))
        self.assertEqual(caught.exception.status, "INVALID_ARGUMENT")
        self.assertIn("JOIN", str(caught.exception))

    def test_invalid_binding_raises_with_message(self):
        op = self.device.compile(opendml.join("float32", [(4,), (4,)], (8,), 0))
        op.initialize()
        a, out = common.aligned_empty((4,), "float32"), common.aligned_empty((8,), "float32")
        with self.assertRaises(opendml.OpendmlError) as caught:
            op.execute(op.bind([a, (a.ctypes.data, 8)], [out]))  # the second input is too short
        self.assertEqual(caught.exception.status, "INVALID_ARGUMENT")

    def test_unknown_device_raises(self):
        with self.assertRaises(opendml.OpendmlError):
            opendml.Device(self.lib, "tpu")


if __name__ == "__main__":
    unittest.main()
