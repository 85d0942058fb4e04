#include "frameworks.h"

namespace opendml::python {

// Never destroyed: their Python objects must not be released after the interpreter has finalized.
const Framework& framework_for(nb::handle array) {
  static auto* known = new std::unordered_map<PyTypeObject*, Framework>;
  static auto* framework_of = new nb::object(nb::module_::import_("opendml._frameworks").attr("framework_of"));
  PyTypeObject* type = Py_TYPE(array.ptr());
  auto it = known->find(type);
  if (it == known->end()) {
    nb::object adapter = (*framework_of)(nb::handle(reinterpret_cast<PyObject*>(type)));
    Framework f{adapter.attr("empty"), adapter.attr("current_stream"), nb::cast<bool>(adapter.attr("synchronize")), {}};
    if (nb::hasattr(adapter, "dlpack_types"))
      for (auto [dtype, t] : nb::cast<nb::dict>(adapter.attr("dlpack_types"))) {
        const auto code = nb::cast<nb::tuple>(t);
        f.torch_types[dtype.ptr()] = {nb::cast<uint8_t>(code[0]), nb::cast<uint8_t>(code[1]), 1};
      }
    it = known->emplace(type, std::move(f)).first;
  }
  return it->second;
}

Place place_of_array(nb::handle array, const Name& what) {
  if (!framework_for(array).torch_types.empty())
    if (const std::optional<Place> p = torch_place(array)) return *p;
  return place_of(array, what);
}

Borrowed take(nb::handle array, const Name& what, Place place, intptr_t stream, bool on_current_stream, bool writable) {
  const Framework& f = framework_for(array);
  const Place p = place_of_array(array, what);
  if (!(p == place)) invalid(what + " is on " + p.name() + " but the work runs on " + place.name());
  Borrowed b;
  if (!f.torch_types.empty()) {
    const bool current = !place.cuda || on_current_stream ||
                         nb::cast<intptr_t>(f.current_stream(array, place.id)) == stream;
    if (current && borrow_torch(array, what, f.torch_types, writable, b)) return b;
  }
  return borrow(array, what, place, stream, writable);
}

}  // namespace opendml::python
