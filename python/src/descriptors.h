// The descriptor layer's Python objects that the array layer shares.
#pragma once

#include <memory>

#include "dlpack.h"

namespace opendml::python {

}  // namespace opendml::python
