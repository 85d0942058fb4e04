# example-begin
import numpy as np
import opendml

x = np.array([[1.0, 0.0, 0.0, 2.0], [-0.0, 3.5, 0.0, -5.2]], np.float32)
coords, count = opendml.nonzero(x)  # coords is (x.size, x.ndim); rows past count are unspecified
print(coords[: count[0]].tolist())  # [[0, 0], [0, 3], [1, 1], [1, 3]]

a, b = np.ones((2, 3), np.float32), np.zeros((2, 4), np.float32)
joined = opendml.concat([a.T, b.T], axis=0)  # transposed views go in as DirectML strides, uncopied
print(joined[:, 0].tolist())  # [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
parts = opendml.split(joined, [3, 4], axis=-2)
print([p.shape for p in parts])  # [(3, 2), (4, 2)]
# example-end
