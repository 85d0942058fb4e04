#include "frameworks.h"

#include <nanobind/stl/string.h>

namespace opendml::python {

// Never destroyed: their Python objects must not be released after the interpreter has finalized.
const Framework& framework_for(nb::handle array) {
  static auto* known = new std::unordered_map<PyTypeObject*, Framework>;
  static auto* framework_of = new nb::object(nb::module_::import_("opendml._frameworks").attr("framework_of"));
  PyTypeObject* type = Py_TYPE(array.ptr());
  auto it = known->find(type);
  if (it == known->end()) {
    Framework f;
    f.adapter = (*framework_of)(nb::handle(reinterpret_cast<PyObject*>(type)));
    f.synchronize = nb::cast<bool>(f.adapter.attr("synchronize"));
    if (nb::hasattr(f.adapter, "dlpack_types")) {
      for (auto [dtype, t] : nb::cast<nb::dict>(f.adapter.attr("dlpack_types"))) {
        const auto code = nb::cast<nb::tuple>(t);
        f.torch_types[dtype.ptr()] = {nb::cast<uint8_t>(code[0]), nb::cast<uint8_t>(code[1]), 1};
      }
      for (auto [name, dtype] : nb::cast<nb::dict>(f.adapter.attr("dtypes")))
        f.torch_dtypes[nb::cast<std::string>(name)] = nb::borrow(dtype);
      if (!f.adapter.attr("raw_current_stream").is_none()) f.torch_raw_stream = f.adapter.attr("raw_current_stream");
    }
    it = known->emplace(type, std::move(f)).first;
  }
  return it->second;
}

nb::object Framework::empty(nb::handle like, nb::handle shape, const char* dtype) const {
  if (torch_types.empty()) return adapter.attr("empty")(like, shape, dtype ? nb::object(nb::str(dtype)) : nb::none());
  // like.new_empty(shape[, dtype=...])
  static PyObject* const new_empty = PyUnicode_InternFromString("new_empty");
  static PyObject* const kw_dtype = nb::make_tuple("dtype").release().ptr();
  PyObject* args[3] = {like.ptr(), shape.ptr(), nullptr};
  PyObject* kwnames = nullptr;
  if (dtype) {
    const auto it = torch_dtypes.find(dtype);
    if (it == torch_dtypes.end()) invalid(std::string("no PyTorch dtype for '") + dtype + "'");
    args[2] = it->second.ptr();
    kwnames = kw_dtype;
  }
  PyObject* result = PyObject_VectorcallMethod(new_empty, args, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

intptr_t Framework::current_stream(nb::handle like, int device) const {
  if (torch_raw_stream.is_valid()) return nb::cast<intptr_t>(torch_raw_stream(device));
  return nb::cast<intptr_t>(adapter.attr("current_stream")(like, device));
}

Place place_of_array(nb::handle array, const Name& what) {
  if (!framework_for(array).torch_types.empty())
    if (const std::optional<Place> p = torch_place(array)) return *p;
  return place_of(array, what);
}

Borrowed take(nb::handle array, const Name& what, Place place, intptr_t stream, bool on_current_stream, bool writable) {
  const Framework& f = framework_for(array);
  const std::optional<Place> torch = f.torch_types.empty() ? std::nullopt : torch_place(array);
  const Place p = torch ? *torch : place_of(array, what);
  if (!(p == place)) invalid(what + " is on " + p.name() + " but the work runs on " + place.name());
  Borrowed b;
  if (torch && (!place.cuda || on_current_stream || f.current_stream(array, place.id) == stream)) {
    b.place = place;
    if (borrow_torch(array, what, f.torch_types, writable, b)) return b;
  }
  return borrow(array, what, place, stream, writable);
}

}  // namespace opendml::python
