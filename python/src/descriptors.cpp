// The descriptor layer: DirectML's vocabulary as the C++ API has it (include/opendml/opendml.hpp),
// with the same lifecycle and the same messages.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <vector>

#include "frameworks.h"

namespace opendml::python {
namespace {

using namespace nb::literals;

// A sequence of integer arguments, each as uint32_argument or unsigned_integer reads it.
template <class T>
std::vector<T> integers(nb::handle values, const Name& what) {
  const nb::sequence seq = sequence(values, what);
  std::vector<T> out(nb::len(seq));
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string name = Name{what.prefix, what.base, static_cast<int>(i)}.str();
    if constexpr (sizeof(T) == 4) {
      out[i] = uint32_argument(seq[i], name);
    } else {
      out[i] = unsigned_integer(seq[i], name);
    }
  }
  return out;
}

// Operator keeps its Device private; the Python object needs it for compile's result.
struct PyOperator {
  Operator op;
  Device device;
};

// A compiled operator; after initialize() without regions, the C++ wrapper keeps the regions it
// allocated, and execute binds them where the caller binds none.
struct PyCompiled {
  CompiledOperator op;
  Device device;
  Place place = place_of(device);  // found once: every execute needs it
};

// The arrays one call borrows, held until it returns: in place for a few.
class Borrows {
 public:
  explicit Borrows(size_t most) : arrays_(most) {}
  const Borrowed& add(Borrowed b) { return arrays_[n_++] = std::move(b); }

 private:
  Few<Borrowed, 6> arrays_;
  size_t n_ = 0;
};

// Bindings in their order, in place for a few.
using Regions = Few<odml_buffer_binding, 4>;

// One binding: None (unbound), (address, bytes), or a C-contiguous array on the operator's device,
// which must be writable where the operator writes it (outputs, temporary and persistent regions): a
// region is the bytes from the array's first element on, so a strided view would hand it memory the
// view does not cover.
odml_buffer_binding region_of(nb::handle obj, const Name& what, const Target& target, Borrows& borrowed,
                              bool writable) {
  if (obj.is_none()) return {};
  if (nb::isinstance<nb::tuple>(obj)) {
    const auto t = nb::cast<nb::tuple>(obj);
    if (t.size() != 2) invalid(what + " is a tuple of " + std::to_string(t.size()) + "; a region is (address, bytes)");
    return {reinterpret_cast<void*>(static_cast<uintptr_t>(unsigned_integer(t[0], what.str() + "'s address"))),
            unsigned_integer(t[1], what.str() + "'s byte count")};
  }
  const Borrowed& b = borrowed.add(take(obj, what, target, writable));
  if (b.size() == 0) return {b.data, 0};  // however its producer strides it: a region of no bytes
  if (!b.contiguous()) invalid(what + " is a strided view; a region is a C-contiguous array, or (address, bytes)");
  return {b.data, b.extent_bytes()};
}

Regions regions_of(const std::vector<nb::object>& objs, const char* what, const Target& target, Borrows& borrowed,
                   bool writable) {
  Regions out(objs.size());
  for (size_t i = 0; i < objs.size(); ++i) out[i] = region_of(objs[i], {"", what, int(i)}, target, borrowed, writable);
  return out;
}

void initialize(PyCompiled& c, std::optional<std::vector<nb::object>> inputs, nb::handle persistent,
                nb::handle stream_obj) {
  const Target target{c.place, stream_handle(stream_obj)};
  void* s = reinterpret_cast<void*>(target.stream);
  if (!inputs && persistent.is_none()) return c.op.initialize(s);
  Borrows borrowed((inputs ? inputs->size() : 0) + 1);
  Regions in = inputs ? regions_of(*inputs, "inputs", target, borrowed, false) : Regions(0);
  c.op.initialize(odml_bindings{in.data(),
                                static_cast<uint32_t>(in.size()),
                                nullptr,
                                0,
                                {},
                                region_of(persistent, {"", "persistent"}, target, borrowed, true)},
                  s);
  target.written();
}

void execute(const PyCompiled& c, const std::vector<nb::object>& inputs, const std::vector<nb::object>& outputs,
             nb::handle temporary, nb::handle persistent, nb::handle stream_obj) {
  const Target target{c.place, stream_handle(stream_obj)};
  Borrows borrowed(inputs.size() + outputs.size() + 2);
  Regions in = regions_of(inputs, "inputs", target, borrowed, false);
  Regions out = regions_of(outputs, "outputs", target, borrowed, true);
  // Regions left unbound are the ones initialize() kept (CompiledOperator::execute).
  const odml_buffer_binding t =
      temporary.is_none() ? odml_buffer_binding{} : region_of(temporary, {"", "temporary"}, target, borrowed, true);
  const odml_buffer_binding p =
      persistent.is_none() ? odml_buffer_binding{} : region_of(persistent, {"", "persistent"}, target, borrowed, true);
  c.op.execute(
      odml_bindings{in.data(), static_cast<uint32_t>(in.size()), out.data(), static_cast<uint32_t>(out.size()), t, p},
      reinterpret_cast<void*>(target.stream));
  target.written();
}

}  // namespace

void bind_descriptors(nb::module_& m) {
  nb::enum_<DML_TENSOR_DATA_TYPE>(m, "DataType", nb::is_arithmetic(), "DML_TENSOR_DATA_TYPE")
      .value("UNKNOWN", DML_TENSOR_DATA_TYPE_UNKNOWN)
      .value("FLOAT32", DML_TENSOR_DATA_TYPE_FLOAT32)
      .value("FLOAT16", DML_TENSOR_DATA_TYPE_FLOAT16)
      .value("UINT32", DML_TENSOR_DATA_TYPE_UINT32)
      .value("UINT16", DML_TENSOR_DATA_TYPE_UINT16)
      .value("UINT8", DML_TENSOR_DATA_TYPE_UINT8)
      .value("INT32", DML_TENSOR_DATA_TYPE_INT32)
      .value("INT16", DML_TENSOR_DATA_TYPE_INT16)
      .value("INT8", DML_TENSOR_DATA_TYPE_INT8)
      .value("FLOAT64", DML_TENSOR_DATA_TYPE_FLOAT64)
      .value("UINT64", DML_TENSOR_DATA_TYPE_UINT64)
      .value("INT64", DML_TENSOR_DATA_TYPE_INT64)
      .value("UINT4", DML_TENSOR_DATA_TYPE_UINT4)
      .value("INT4", DML_TENSOR_DATA_TYPE_INT4);
  nb::enum_<DML_TENSOR_FLAGS>(m, "TensorFlags", nb::is_arithmetic(), "DML_TENSOR_FLAGS")
      .value("NONE", DML_TENSOR_FLAG_NONE)
      .value("OWNED_BY_DML", DML_TENSOR_FLAG_OWNED_BY_DML);
  nb::enum_<DML_FEATURE_LEVEL>(m, "FeatureLevel", nb::is_arithmetic(), "DML_FEATURE_LEVEL")
      .value("LEVEL_1_0", DML_FEATURE_LEVEL_1_0)
      .value("LEVEL_2_0", DML_FEATURE_LEVEL_2_0)
      .value("LEVEL_2_1", DML_FEATURE_LEVEL_2_1)
      .value("LEVEL_3_0", DML_FEATURE_LEVEL_3_0)
      .value("LEVEL_3_1", DML_FEATURE_LEVEL_3_1)
      .value("LEVEL_4_0", DML_FEATURE_LEVEL_4_0)
      .value("LEVEL_4_1", DML_FEATURE_LEVEL_4_1)
      .value("LEVEL_5_0", DML_FEATURE_LEVEL_5_0)
      .value("LEVEL_5_1", DML_FEATURE_LEVEL_5_1)
      .value("LEVEL_5_2", DML_FEATURE_LEVEL_5_2)
      .value("LEVEL_6_0", DML_FEATURE_LEVEL_6_0)
      .value("LEVEL_6_1", DML_FEATURE_LEVEL_6_1)
      .value("LEVEL_6_2", DML_FEATURE_LEVEL_6_2)
      .value("LEVEL_6_3", DML_FEATURE_LEVEL_6_3)
      .value("LEVEL_6_4", DML_FEATURE_LEVEL_6_4);
  m.attr("EXTENSION_64BIT_INDICES") = uint32_t(ODML_EXTENSION_64BIT_INDICES);
  m.attr("EXTENSION_COORDINATE_OFFSETS") = uint32_t(ODML_EXTENSION_COORDINATE_OFFSETS);
  m.attr("EXTENSION_FILL_ROWS") = uint32_t(ODML_EXTENSION_FILL_ROWS);

  nb::class_<Device>(m, "Device", "A CPU or CUDA device: Device(\"cpu\" | \"cuda\" | \"cuda:N\").")
      .def(nb::init<const std::string&>(), "name"_a = "cpu")
      .def_prop_ro("name", &Device::name)
      .def(
          "synchronize",
          [](const Device& d, nb::handle stream) { d.synchronize(reinterpret_cast<void*>(stream_handle(stream))); },
          "stream"_a = nb::none(), "Waits for the work queued on stream (None: the default stream).")
      .def("__repr__", [](const Device& d) { return "<opendml.Device " + d.name() + ">"; });

  nb::class_<TensorDesc>(m, "TensorDesc", "A DML_BUFFER_TENSOR_DESC that owns its arrays.")
      .def(
          "__init__",
          [](TensorDesc* self, DML_TENSOR_DATA_TYPE type, nb::handle sizes, nb::handle strides, DML_TENSOR_FLAGS flags,
             nb::handle total_size, nb::handle alignment) {
            // Every argument read before the object is made: nanobind destroys no object whose
            // __init__ raised after making it.
            std::vector<uint32_t> dims = integers<uint32_t>(sizes, {"TensorDesc: ", "sizes"});
            std::optional<std::vector<uint32_t>> s;
            if (!strides.is_none()) s = integers<uint32_t>(strides, {"TensorDesc: ", "strides"});
            std::optional<uint64_t> total;
            if (!total_size.is_none()) total = unsigned_integer(total_size, "TensorDesc: total_size");
            const uint32_t align = uint32_argument(alignment, "TensorDesc: alignment");
            TensorDesc t(type, std::move(dims), std::move(s), flags);  // may raise: the strides' count
            if (total) t.total_size(*total);
            t.alignment(align);
            new (self) TensorDesc(std::move(t));
          },
          "dtype"_a, "sizes"_a, "strides"_a = nb::none(), "flags"_a = DML_TENSOR_FLAG_NONE, "total_size"_a = nb::none(),
          "alignment"_a = 0,
          nb::sig("def __init__(self, dtype: DataType, sizes: collections.abc.Sequence[int], strides: "
                  "collections.abc.Sequence[int] | None = None, flags: TensorFlags = TensorFlags.NONE, total_size: "
                  "int | None = None, alignment: int = 0) -> None"))
      .def_prop_ro("dtype", [](const TensorDesc& t) { return t.buffer().DataType; })
      .def_prop_ro("sizes", [](const TensorDesc& t) { return t.sizes(); })
      .def_prop_ro("strides",
                   [](const TensorDesc& t) -> std::optional<std::vector<uint32_t>> {
                     const DML_BUFFER_TENSOR_DESC& b = t.buffer();
                     if (b.Strides == nullptr) return std::nullopt;
                     return std::vector<uint32_t>(b.Strides, b.Strides + b.DimensionCount);
                   })
      .def_prop_ro("flags", [](const TensorDesc& t) { return t.buffer().Flags; })
      .def_prop_ro("total_size", [](const TensorDesc& t) { return t.total_size(); })
      .def_prop_ro("alignment", [](const TensorDesc& t) { return t.buffer().GuaranteedBaseOffsetAlignment; });

  nb::class_<OperatorDesc>(m, "OperatorDesc", "A DML_OPERATOR_DESC: JoinDesc, SplitDesc or NonzeroCoordinatesDesc.");
  nb::class_<JoinDesc, OperatorDesc>(m, "JoinDesc", "DML_JOIN_OPERATOR_DESC")
      .def(
          "__init__",
          [](JoinDesc* self, std::vector<TensorDesc> inputs, TensorDesc output, nb::handle axis) {
            new (self) JoinDesc(std::move(inputs), std::move(output), uint32_argument(axis, "JoinDesc: axis"));
          },
          "inputs"_a, "output"_a, "axis"_a,
          nb::sig("def __init__(self, inputs: collections.abc.Sequence[TensorDesc], output: TensorDesc, axis: int) "
                  "-> None"));
  nb::class_<SplitDesc, OperatorDesc>(m, "SplitDesc", "DML_SPLIT_OPERATOR_DESC")
      .def(
          "__init__",
          [](SplitDesc* self, TensorDesc input, std::vector<TensorDesc> outputs, nb::handle axis) {
            new (self) SplitDesc(std::move(input), std::move(outputs), uint32_argument(axis, "SplitDesc: axis"));
          },
          "input"_a, "outputs"_a, "axis"_a,
          nb::sig("def __init__(self, input: TensorDesc, outputs: collections.abc.Sequence[TensorDesc], axis: int) "
                  "-> None"));
  nb::class_<NonzeroCoordinatesDesc, OperatorDesc>(m, "NonzeroCoordinatesDesc", "DML_NONZERO_COORDINATES_OPERATOR_DESC")
      .def(nb::init<TensorDesc, TensorDesc, TensorDesc>(), "input"_a, "count"_a, "coordinates"_a);

  nb::class_<odml_binding_properties>(m, "BindingProperties")
      .def_ro("input_count", &odml_binding_properties::input_count)
      .def_ro("output_count", &odml_binding_properties::output_count)
      .def_ro("temporary_size_in_bytes", &odml_binding_properties::temporary_size_in_bytes)
      .def_ro("persistent_size_in_bytes", &odml_binding_properties::persistent_size_in_bytes)
      .def("__repr__", [](const odml_binding_properties& p) {
        return "BindingProperties(input_count=" + std::to_string(p.input_count) +
               ", output_count=" + std::to_string(p.output_count) +
               ", temporary_size_in_bytes=" + std::to_string(p.temporary_size_in_bytes) +
               ", persistent_size_in_bytes=" + std::to_string(p.persistent_size_in_bytes) + ")";
      });

  nb::class_<PyCompiled>(m, "CompiledOperator")
      .def("binding_properties", [](const PyCompiled& c) { return c.op.binding_properties(); })
      .def("implementation", [](const PyCompiled& c) { return c.op.implementation(); })
      .def("initialize", &initialize, "inputs"_a = nb::none(), "persistent"_a = nb::none(), "stream"_a = nb::none(),
           "Once before executing. Without regions, allocates the persistent and temporary regions compile asked "
           "for and keeps them for execute; or binds the OWNED_BY_DML inputs (None for the others) and the "
           "persistent region given. Regions are arrays on the operator's device or (address, bytes).")
      .def("execute", &execute, "inputs"_a, "outputs"_a, "temporary"_a = nb::none(), "persistent"_a = nb::none(),
           "stream"_a = nb::none(),
           "Binds inputs and outputs in DirectML's binding order and runs; an unbound temporary or persistent "
           "region is the one initialize() kept. Asynchronous on stream for a CUDA device.");

  nb::class_<PyOperator>(m, "Operator")
      .def(
          "__init__",
          [](PyOperator* self, const Device& device, const OperatorDesc& desc, nb::handle feature_level,
             nb::handle extensions, nb::handle coordinate_offsets, nb::handle fill_values) {
            const auto level = DML_FEATURE_LEVEL(uint32_argument(feature_level, "Operator: feature_level"));
            const uint32_t bits = uint32_argument(extensions, "Operator: extensions");
            const std::vector<uint64_t> offsets = integers<uint64_t>(coordinate_offsets,
                                                                     {"Operator: ", "coordinate_offsets"}),
                                        fill = integers<uint64_t>(fill_values, {"Operator: ", "fill_values"});
            new (self) PyOperator{Operator(device, desc, level, operator_options(bits, {offsets, fill})), device};
          },
          "device"_a, "desc"_a, "feature_level"_a = 0, "extensions"_a = 0, "coordinate_offsets"_a = nb::make_tuple(),
          "fill_values"_a = nb::make_tuple(),
          nb::sig("def __init__(self, device: Device, desc: OperatorDesc, feature_level: int = 0, extensions: int = 0, "
                  "coordinate_offsets: collections.abc.Sequence[int] = (), fill_values: collections.abc.Sequence[int] "
                  "= ()) -> None"),
          "Validates desc against feature_level (0: the highest). extensions: EXTENSION_* bits; "
          "coordinate_offsets: with EXTENSION_COORDINATE_OFFSETS, an offset per NONZERO coordinate column; "
          "fill_values: with EXTENSION_FILL_ROWS, the bits of each column in the rows past the count.")
      .def("compile", [](const PyOperator& o) {
        return PyCompiled{o.op.compile(), o.device};
      });
}

}  // namespace opendml::python
