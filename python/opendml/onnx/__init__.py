"""ONNX's NonZero, Concat and Split mapped onto opendml's NONZERO_COORDINATES, JOIN and SPLIT,
behind ONNX's backend interface (onnx.backend.base.Backend). docs/python.md describes it."""

from .backend import OpenDMLBackend, OpenDMLBackendRep, prepare, run_model, run_node, supports_device

__all__ = ["OpenDMLBackend", "OpenDMLBackendRep", "prepare", "run_model", "run_node", "supports_device"]
