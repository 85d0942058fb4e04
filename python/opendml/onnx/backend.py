"""ONNX's backend interface (onnx.backend.base) over opendml: models and nodes made of NonZero,
Concat and Split run on opendml's CPU device. docs/python.md describes it."""

import os

import numpy as np
import onnx
import onnx.backend.base as base
import opendml
from onnx import TensorProto, helper, numpy_helper

from . import ops
from .._shapes import chunk_sizes, equal_parts, normalize_axis

OPERATORS = ("NonZero", "Concat", "Split")
_DEFAULT_DOMAINS = ("", "ai.onnx")


def _split_sizes(node: onnx.NodeProto, inputs: list, opset: int, axis_size: int) -> list:
    """The part sizes of a Split node, by the rules of its opset (2, 11, 13 and 18 differ)."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    count = len(node.output)
    given = None
    if len(inputs) > 1 and inputs[1] is not None:  # opset 13+: the 'split' input, a 1-D int64 tensor
        split = np.asarray(inputs[1])
        if split.dtype != np.int64 or split.ndim != 1:
            raise opendml.Error(f"opendml.onnx: Split: the 'split' input is {split.dtype} of shape {list(split.shape)}; "
                                "ONNX takes a 1-D int64 tensor")
        given = [int(s) for s in split]
    elif "split" in attrs:  # before opset 13: the 'split' attribute
        given = list(attrs["split"])
    if given is not None and "num_outputs" in attrs:
        raise opendml.Error("opendml.onnx: Split takes the 'split' input or the 'num_outputs' attribute, not both")
    if given is not None:
        if len(given) != count:
            raise opendml.Error(f"opendml.onnx: Split: 'split' has {len(given)} sizes but the node has {count} outputs")
        return given
    if opset >= 18:
        if "num_outputs" not in attrs:
            raise opendml.Error("opendml.onnx: Split (opset 18+) needs the 'split' input or the 'num_outputs' attribute")
        count = attrs["num_outputs"]
        if count != len(node.output):
            raise opendml.Error(f"opendml.onnx: Split: num_outputs is {count} but the node has {len(node.output)} outputs")
        sizes = chunk_sizes(axis_size, count)  # parts of ceil(size / count), the last one smaller
        if count > 1 and sizes[-2] < sizes[0]:  # more than the last smaller: 5 in 4 parts would be 2, 2, 1, 0
            raise opendml.Error(f"opendml.onnx: Split: num_outputs {count} does not cut an axis of {axis_size} into "
                                f"parts of {sizes[0]} with only the last one smaller")
        return sizes
    return equal_parts("opendml.onnx: Split", axis_size, count)


def _dense(sparse: onnx.SparseTensorProto) -> np.ndarray:
    """A sparse initializer as the dense array it stands for: its values at its indices (flat, or a
    row of coordinates each), zeros elsewhere."""
    values, indices = numpy_helper.to_array(sparse.values), numpy_helper.to_array(sparse.indices)
    dense = np.zeros(tuple(sparse.dims), values.dtype)
    if indices.ndim == 1:
        dense.reshape(-1)[indices] = values
    else:
        dense[tuple(indices.T)] = values
    return dense


def check_operator(node: onnx.NodeProto) -> None:
    if node.domain not in _DEFAULT_DOMAINS or node.op_type not in OPERATORS:
        raise opendml.UnsupportedError(f"opendml.onnx runs {', '.join(OPERATORS)}, not {node.domain or 'ai.onnx'}.{node.op_type}")


def run_operator(node: onnx.NodeProto, inputs: list, opset: int) -> list:
    """The outputs of one NonZero, Concat or Split node; absent optional inputs are None."""
    check_operator(node)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if any(x is None for x in inputs[:1]) or (node.op_type == "Concat" and any(x is None for x in inputs)):
        raise opendml.Error(f"opendml.onnx: the {node.op_type} node's inputs are missing values")
    if node.op_type == "NonZero":
        return [ops.nonzero(inputs[0])]
    if node.op_type == "Concat":
        return [ops.concat(inputs, attrs.get("axis", 1))]  # optional before opset 4, where it defaults to 1
    x = np.asarray(inputs[0])
    axis = attrs.get("axis", 0)
    axis_size = x.shape[normalize_axis("opendml.onnx: Split", axis, x.ndim)]
    return ops.split(x, _split_sizes(node, inputs, opset, axis_size), axis)


def _opset(opset_import) -> int:
    versions = [o.version for o in opset_import if o.domain in _DEFAULT_DOMAINS]
    return versions[0] if versions else onnx.defs.onnx_opset_version()


class OpenDMLBackendRep(base.BackendRep):
    """A model ready to run: its initializers loaded, its nodes checked."""

    def __init__(self, model: onnx.ModelProto):
        graph = model.graph
        self._opset = _opset(model.opset_import)
        self._nodes = list(graph.node)
        for node in self._nodes:
            check_operator(node)
        for i in graph.input:  # a sequence would reach NumPy as a list, which it stacks into one array
            kind = i.type.WhichOneof("value")
            if kind != "tensor_type":
                raise opendml.UnsupportedError(f"opendml.onnx: graph input '{i.name}' is a {str(kind).removesuffix('_type')}; "
                                               "opendml.onnx takes tensors, as NonZero, Concat and Split do")
        self._constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self._constants.update({t.values.name: _dense(t) for t in graph.sparse_initializer})
        # The inputs run() takes by position; a graph input with an initializer may be given by name.
        self._inputs = [i.name for i in graph.input if i.name not in self._constants]
        self._types = {i.name: i.type.tensor_type.elem_type for i in graph.input}
        # Declared shapes: a dimension's size, or None where it is symbolic; None for no shape at all.
        self._shapes = {i.name: [d.dim_value if d.HasField("dim_value") else None for d in i.type.tensor_type.shape.dim]
                        if i.type.tensor_type.HasField("shape") else None for i in graph.input}
        self._outputs = [o.name for o in graph.output]
        # Outputs no node makes (graph inputs, initializers) are returned as copies, as ONNX Runtime
        # returns them: not the caller's array, nor the constant later runs read.
        made = {n for node in self._nodes for n in node.output}
        self._copied = {n for n in self._outputs if n not in made}

    def run(self, inputs, **kwargs):
        values = dict(self._constants)
        fed = list(self._inputs)  # the names given values, which are checked
        if isinstance(inputs, dict):
            # As ONNX Runtime takes them: graph inputs only, not the constants of other initializers.
            unknown = [n for n in inputs if n not in self._types]
            if unknown:
                raise opendml.Error(f"opendml.onnx: the model has no inputs named {unknown} (its inputs: {list(self._types)})")
            values.update(inputs)
            fed += [n for n in inputs if n not in self._inputs]
        else:
            inputs = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            if len(inputs) != len(self._inputs):
                raise opendml.Error(f"opendml.onnx: the model takes {len(self._inputs)} inputs, not {len(inputs)}")
            values.update(zip(self._inputs, inputs))
        missing = [n for n in self._inputs if n not in values]
        if missing:
            raise opendml.Error(f"opendml.onnx: no value for the model inputs {missing}")
        for name in fed:
            values[name] = np.asarray(values[name])
            declared, given = TensorProto.DataType.Name(self._types[name]), ops.type_name(values[name])
            if self._types[name] and declared != given:
                raise opendml.Error(f"opendml.onnx: input '{name}' is {given} but the model declares {declared}")
            dims, shape = self._shapes[name], values[name].shape
            if dims is not None and (len(dims) != len(shape) or any(d is not None and d != n for d, n in zip(dims, shape))):
                raise opendml.Error(f"opendml.onnx: input '{name}' has shape {list(shape)} but the model declares "
                                    f"{['?' if d is None else d for d in dims]}")
        # ONNX keeps the nodes of a graph in topological order.
        for node in self._nodes:
            try:
                results = run_operator(node, [values[n] if n else None for n in node.input], self._opset)
            except (opendml.Error, opendml.UnsupportedError) as e:  # which of the model's nodes, as ONNX Runtime says
                name = f" '{node.name}'" if node.name else ""
                raise type(e)(f"{e} (in the {node.op_type} node{name} of outputs {list(node.output)})") from e
            values.update(zip(node.output, results))
        return base.namedtupledict("Outputs", self._outputs)(*[np.array(values[n]) if n in self._copied else values[n]
                                                               for n in self._outputs])


class OpenDMLBackend(base.Backend):
    """onnx.backend.base.Backend for opendml. Only the CPU device: the ONNX interface passes NumPy
    arrays; on a GPU, opendml's array layer and opendml.torch take device arrays directly."""

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            return base.Device(device).type == base.DeviceType.CPU
        except (AttributeError, KeyError, TypeError, ValueError):  # a name ONNX has no device for
            return False

    @classmethod
    def _check_device(cls, device: str) -> None:
        if not cls.supports_device(device):
            raise opendml.UnsupportedError(f"opendml.onnx runs on the CPU device, not {device}")

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs) -> OpenDMLBackendRep:
        # A serialized model or a path too, as onnx.checker and ONNX Runtime's backend take them (the
        # checker passed them, then reading the graph raised AttributeError).
        if isinstance(model, (bytes, bytearray, memoryview)):
            model = onnx.load_model_from_string(bytes(model))
        elif isinstance(model, (str, os.PathLike)):
            model = onnx.load(model)
        elif not isinstance(model, onnx.ModelProto):
            raise TypeError(f"opendml.onnx: prepare takes an onnx.ModelProto, its bytes or a path, not {type(model).__name__}")
        super().prepare(model, device, **kwargs)  # onnx.checker
        cls._check_device(device)
        return OpenDMLBackendRep(model)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs, device: str = "CPU", outputs_info=None, **kwargs):
        super().run_node(node, inputs, device, outputs_info, **kwargs)  # onnx.checker
        cls._check_device(device)
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        inputs = list(inputs)
        if len(inputs) != len(node.input):
            raise opendml.Error(f"opendml.onnx: the {node.op_type} node names {len(node.input)} inputs but {len(inputs)} were given")
        results = run_operator(node, inputs, opset)
        return base.namedtupledict("Outputs", list(node.output))(*results)


prepare = OpenDMLBackend.prepare
run_model = OpenDMLBackend.run_model
run_node = OpenDMLBackend.run_node
supports_device = OpenDMLBackend.supports_device
