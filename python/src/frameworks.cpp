#include "frameworks.h"

#include <nanobind/stl/string.h>

namespace opendml::python {

namespace {

// The exchange API that `type` publishes, if its layout is one this file knows (major version 1,
// or one a later table chains to): a capsule named "dlpack_exchange_api" or the table's address as
// an int, under DLPack's name for it or its earlier one (which tvm-ffi, for one, sets on PyTorch
// releases without their own).
const DLPackExchangeAPI* exchange_api(nb::handle type) {
  PyObject* attr = PyObject_GetAttrString(type.ptr(), "__dlpack_c_exchange_api__");
  if (attr == nullptr) {
    PyErr_Clear();
    attr = PyObject_GetAttrString(type.ptr(), "__c_dlpack_exchange_api__");
  }
  if (attr == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  const nb::object owner = nb::steal(attr);  // the table itself lives as long as the library
  void* table = PyCapsule_CheckExact(attr) ? PyCapsule_GetPointer(attr, "dlpack_exchange_api")
                : PyLong_Check(attr)       ? PyLong_AsVoidPtr(attr)
                                           : nullptr;
  if (table == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  const auto* api = static_cast<const DLPackExchangeAPI*>(table);
  while (api != nullptr && api->header.version.major > 1)
    api = reinterpret_cast<const DLPackExchangeAPI*>(api->header.prev_api);
  if (api == nullptr || api->header.version.major != 1 || api->dltensor_from_py_object_no_sync == nullptr ||
      api->current_work_stream == nullptr)
    return nullptr;
  return api;
}

}  // namespace

// Never destroyed: their Python objects must not be released after the interpreter has finalized.
const Framework& framework_for(nb::handle array) {
  static auto* known = new std::unordered_map<PyTypeObject*, Framework>;
  static PyObject* framework_of_slot = nullptr;
  const nb::handle framework_of =
      kept_object(framework_of_slot, [] { return nb::module_::import_("opendml._frameworks").attr("framework_of"); });
  PyTypeObject* type = Py_TYPE(array.ptr());
  // Most calls pass arrays of one type, often the type of the call before.
  static thread_local std::pair<PyTypeObject*, const Framework*> last{nullptr, nullptr};
  if (last.first == type) return *last.second;
  auto it = known->find(type);
  if (it == known->end()) {
    Framework f;
    f.adapter = framework_of(nb::handle(reinterpret_cast<PyObject*>(type)));
    f.synchronize = nb::cast<bool>(f.adapter.attr("synchronize"));
    f.immutable = nb::cast<bool>(f.adapter.attr("immutable"));
    f.masked = nb::cast<bool>(f.adapter.attr("masked"));
    if (nb::hasattr(f.adapter, "to_dlpack")) {
      f.torch_to_dlpack = f.adapter.attr("to_dlpack");
      for (auto [name, dtype] : nb::cast<nb::dict>(f.adapter.attr("dtypes")))
        f.torch_dtypes[nb::cast<std::string>(name)] = nb::borrow(dtype);
      if (!f.adapter.attr("raw_current_stream").is_none()) f.torch_raw_stream = f.adapter.attr("raw_current_stream");
      if (!f.adapter.attr("increment_version").is_none())
        f.torch_increment_version = f.adapter.attr("increment_version");
      f.torch_grad_enabled = f.adapter.attr("grad_enabled");
      f.torch_inference_mode = f.adapter.attr("inference_mode");
      f.torch_forward_ad = f.adapter.attr("forward_ad");
      f.torch_tangent_of = f.adapter.attr("tangent_of");
      f.torch_transformed = f.adapter.attr("transformed");
      // Only for torch.Tensor itself: a subclass may publish a table of its own (a read-only one,
      // say), and its new_empty may make tensors of its own type.
      if (f.adapter.attr("tensor_type").ptr() == reinterpret_cast<PyObject*>(type)) {
        f.exchange = exchange_api(f.adapter.attr("tensor_type"));
        const nb::object fast = f.adapter.attr("fast_empty");
        if (!fast.is_none()) {
          f.torch_empty = reinterpret_cast<TorchEmpty>(PyCapsule_GetPointer(fast.ptr(), kTorchEmptyCapsule));
          if (f.torch_empty == nullptr) PyErr_Clear();  // not our capsule: new_empty serves
        }
      }
    }
    it = known->emplace(type, std::move(f)).first;
  }
  last = {type, &it->second};  // unordered_map never moves its elements
  return it->second;
}

static nb::tuple shape_tuple(std::span<const int64_t> shape) {
  nb::tuple t = nb::borrow<nb::tuple>(checked(PyTuple_New(static_cast<Py_ssize_t>(shape.size()))));
  for (size_t i = 0; i < shape.size(); ++i)
    PyTuple_SET_ITEM(t.ptr(), i, checked(PyLong_FromLongLong(shape[i])).release().ptr());
  return t;
}

nb::object Framework::empty(nb::handle like, std::span<const int64_t> shape, const char* dtype) const {
  if (!is_torch())
    return adapter.attr("empty")(like, shape_tuple(shape), dtype ? nb::object(nb::str(dtype)) : nb::none());
  const auto it = dtype ? torch_dtypes.find(dtype) : torch_dtypes.end();
  if (dtype && it == torch_dtypes.end()) invalid(std::string("no PyTorch dtype for '") + dtype + "'");
  if (torch_empty)
    return checked(torch_empty(like.ptr(), shape.data(), shape.size(), dtype ? it->second.ptr() : nullptr));
  // like.new_empty(*shape[, dtype=...]): PyTorch parses sizes given one by one faster than a tuple
  // of them (a 0-d shape goes as the empty tuple, the one form new_empty takes for it).
  static PyObject* const new_empty = PyUnicode_InternFromString("new_empty");
  static PyObject* kw_dtype_slot = nullptr;
  PyObject* const kw_dtype = kept_object(kw_dtype_slot, [] { return nb::make_tuple("dtype"); });
  constexpr size_t kMaxArgs = 2 + kMaxDims;
  PyObject* args[kMaxArgs] = {like.ptr()};
  nb::object sizes[kMaxDims];  // owns the size objects for the call
  size_t n = 1;
  if (shape.empty() || shape.size() > kMaxDims) {
    sizes[0] = shape_tuple(shape);
    args[n++] = sizes[0].ptr();
  } else {
    for (size_t i = 0; i < shape.size(); ++i) {
      sizes[i] = checked(PyLong_FromLongLong(shape[i]));
      args[n++] = sizes[i].ptr();
    }
  }
  const size_t positional = n;
  PyObject* kwnames = nullptr;
  if (dtype) {
    args[n++] = it->second.ptr();
    kwnames = kw_dtype;
  }
  return checked(PyObject_VectorcallMethod(new_empty, args, positional | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames));
}

intptr_t Framework::current_stream(nb::handle like, int device) const {
  if (exchange) {
    void* stream = nullptr;
    if (exchange->current_work_stream(kDLCUDA, device, &stream) != 0) throw nb::python_error();
    return reinterpret_cast<intptr_t>(stream);
  }
  if (torch_raw_stream.is_valid()) return nb::cast<intptr_t>(torch_raw_stream(device));
  return nb::cast<intptr_t>(adapter.attr("current_stream")(like, device));
}

namespace {

// tensor.requires_grad, for the two checks below.
bool requires_grad(nb::handle tensor) {
  static PyObject* const name = PyUnicode_InternFromString("requires_grad");
  return PyObject_IsTrue(checked(PyObject_GetAttr(tensor.ptr(), name)).ptr()) == 1;
}

// What a PyTorch tensor must be for the array layer, whichever way it is borrowed (DLPack carries
// none of it), checked before it is: a lazily negated view (Tensor.is_neg(): the imaginary part of a
// conjugated tensor, say) hands over the bits of the values it negates; conjugated views are complex,
// a type the array layer does not take. A tensor written (out=) must not require grad, nor be an
// inference tensor outside inference mode, which PyTorch's own in-place operations refuse.
void check_torch(const Framework& f, nb::handle array, const Name& what, bool writable, bool fresh) {
  static PyObject* const is_neg = PyUnicode_InternFromString("is_neg");
  if (PyObject_IsTrue(checked(PyObject_CallMethodNoArgs(array.ptr(), is_neg)).ptr()) == 1)
    invalid(what + " is a lazily negated view (Tensor.is_neg()); pass tensor.resolve_neg()");
  if (!writable || fresh) return;
  if (requires_grad(array))
    invalid(what + " requires grad; opendml cannot write into it (pass a tensor that does not, or detach it)");
  static PyObject* const is_inference = PyUnicode_InternFromString("is_inference");
  if (PyObject_IsTrue(checked(PyObject_CallMethodNoArgs(array.ptr(), is_inference)).ptr()) == 1 &&
      PyObject_IsTrue(checked(PyObject_CallNoArgs(f.torch_inference_mode.ptr())).ptr()) != 1)
    invalid(what +
            " is an inference tensor, which PyTorch updates in place only inside torch.inference_mode(); "
            "write into a tensor made outside it, or call under inference mode");
}

// After borrowing: PyTorch's integer types of 1 to 7 bits (torch.uint4, ...) travel as bytes, as
// uint8 or int8 would.
void check_torch_type(const Framework& f, nb::handle array, const Borrowed& b, const Name& what) {
  if (b.element_bytes != 1 || b.code == kDLBool) return;
  static PyObject* const dtype_name = PyUnicode_InternFromString("dtype");
  const nb::object dtype = checked(PyObject_GetAttr(array.ptr(), dtype_name));
  if (!dtype.is(f.torch_dtypes.at("uint8")) && !dtype.is(f.torch_dtypes.at("int8")))
    unsupported(what + " is " + nb::cast<std::string>(nb::str(dtype)) +
                ", whose values PyTorch hands over as whole bytes; no DirectML type has fewer than 8 bits");
}

// Where a PyTorch tensor could not be borrowed: a tensor of a torch.func transform has no storage
// of its own for DLPack to hand over, which DLPack says in words that name neither the transform
// nor the way out. Asked only on failure.
void refuse_transformed(const Framework& f, nb::handle array, const Name& what) {
  if (!f.torch_transformed.is_none() &&
      PyObject_IsTrue(checked(PyObject_CallOneArg(f.torch_transformed.ptr(), array.ptr())).ptr()) == 1)
    invalid(what +
            " is a tensor of a torch.func transform (vmap, grad, jvp, ...), whose memory the array layer "
            "cannot read; call it outside the transform");
}

}  // namespace

void check_gradient_kept(nb::handle array, const Name& what) {
  const Framework& f = framework_for(array);
  if (!f.is_torch()) return;
  if (requires_grad(array) && PyObject_IsTrue(checked(PyObject_CallNoArgs(f.torch_grad_enabled.ptr())).ptr()) == 1)
    invalid(what +
            " requires grad, and the array layer records no gradients; use opendml.torch.join or "
            "opendml.torch.split, which do, or pass tensor.detach() (or call under torch.no_grad())");
  // A tangent of torch.autograd.forward_ad would be dropped as silently, inside dual_level() only.
  static PyObject* const level = PyUnicode_InternFromString("_current_level");
  if (!f.torch_forward_ad.is_none() &&
      nb::cast<int64_t>(checked(PyObject_GetAttr(f.torch_forward_ad.ptr(), level))) >= 0 &&
      !checked(PyObject_CallOneArg(f.torch_tangent_of.ptr(), array.ptr())).is_none())
    invalid(what +
            " carries a forward-mode tangent (torch.autograd.forward_ad), and the array layer carries no "
            "tangents; pass forward_ad.unpack_dual(tensor).primal");
}

Borrowed take_torch(const Framework& f, nb::handle array, const Name& what, std::optional<Place> place, bool writable,
                    bool fresh) {
  Borrowed b;
  DLTensor view;
  if (f.exchange && f.exchange->dltensor_from_py_object_no_sync(array.ptr(), &view) == 0 && on_cpu_or_cuda(view)) {
    describe(view, what, b);  // the caller holds the tensor for the length of the call
  } else {
    // No exchange API, or it failed: to_dlpack, which reports any failure in the words it always has.
    if (f.exchange) PyErr_Clear();
    PyObject* capsule = PyObject_CallOneArg(f.torch_to_dlpack.ptr(), array.ptr());
    if (capsule == nullptr) {
      const nb::python_error e;
      refuse_transformed(f, array, what);
      invalid(what + ": torch.utils.dlpack.to_dlpack failed: " + error_line(e));
    }
    borrow_capsule(nb::steal(capsule), what, writable, b);
  }
  if (place && !(b.place == *place))
    invalid(what + " is on " + b.place.name() + " but the work runs on " + place->name());
  check_torch(f, array, what, writable, fresh);
  check_torch_type(f, array, b, what);
  return b;
}

Place place_of_array(nb::handle array, const Name& what) {
  if (framework_for(array).torch_to_dlpack.is_valid())
    if (const std::optional<Place> p = torch_place(array)) return *p;
  return place_of(array, what);
}

bool Target::no_handshake(const Framework& f, nb::handle array) const {
  if (!place.cuda || (current_of != nullptr && current_of->adapter.ptr() == f.adapter.ptr())) return true;
  if (!f.is_torch()) return false;
  if (torch_current < 0) torch_current = f.current_stream(array, place.id) == stream;
  return torch_current == 1;
}

Borrowed take(nb::handle array, const Name& what, const Target& target, bool writable, bool fresh) {
  const Framework& f = framework_for(array);
  if (writable && !fresh && f.immutable)
    invalid(what +
            " is an array of a library whose arrays are immutable (JAX); leave out= out for a new one, or "
            "pass a NumPy, PyTorch or CuPy array");
  Borrowed b;
  if (f.is_torch() && target.no_handshake(f, array)) {
    b = take_torch(f, array, what, target.place, writable, fresh);
  } else {
    const Place p = place_of_array(array, what);
    if (!(p == target.place)) invalid(what + " is on " + p.name() + " but the work runs on " + target.place.name());
    if (f.is_torch()) check_torch(f, array, what, writable, fresh);  // borrowed with the stream handshake
    try {
      b = borrow(array, what, target.place, target.stream, writable);
    } catch (const Error&) {
      if (f.is_torch()) refuse_transformed(f, array, what);
      throw;
    }
    if (f.is_torch()) check_torch_type(f, array, b, what);
  }
  if (writable && !fresh && f.torch_increment_version.is_valid()) {
    target.versioned.push_back(array);
    target.versioned_by = &f;
  }
  return b;
}

void Target::written() const {
  if (versioned.empty()) return;
  nb::tuple tensors = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(versioned.size())));
  for (size_t i = 0; i < versioned.size(); ++i)
    PyTuple_SET_ITEM(tensors.ptr(), static_cast<Py_ssize_t>(i), nb::borrow(versioned[i]).release().ptr());
  versioned.clear();
  versioned_by->torch_increment_version(tensors);
}

}  // namespace opendml::python
