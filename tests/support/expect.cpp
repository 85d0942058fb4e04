#include "support/expect.h"

#include "support/test_env.h"

namespace odml_test {

::testing::AssertionResult status_is(odml_status got, odml_status want, const std::vector<std::string>& parts) {
  const std::string message = odml_last_error_message();
  if (got != want)
    return ::testing::AssertionFailure() << "status " << odml_status_name(got) << " but expected "
                                         << odml_status_name(want) << "; message: \"" << message << "\"";
  if (want == ODML_STATUS_SUCCESS && !message.empty())
    return ::testing::AssertionFailure() << "success, but the last error message is \"" << message << "\"";
  for (const std::string& part : parts)
    if (message.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "the message \"" << message << "\" does not contain \"" << part << "\"";
  return ::testing::AssertionSuccess() << message;
}

::testing::AssertionResult create_fails(const DML_OPERATOR_DESC* desc, odml_status want,
                                        const std::vector<std::string>& parts, DML_FEATURE_LEVEL level,
                                        uint32_t extensions) {
  odml_operator op = reinterpret_cast<odml_operator>(uintptr_t{0x5A5A});  // must stay untouched
  const odml_status got = odml_operator_create_ex(cpu_device().get(), desc, level, extensions, &op);
  ::testing::AssertionResult result = status_is(got, want, parts);
  if (got == ODML_STATUS_SUCCESS) odml_operator_destroy(op);
  if (result && op != reinterpret_cast<odml_operator>(uintptr_t{0x5A5A}))
    return ::testing::AssertionFailure() << "a failed create wrote the handle";
  return result;
}

::testing::AssertionResult create_succeeds(const OpDesc& desc, DML_FEATURE_LEVEL level, uint32_t extensions) {
  odml_operator op = nullptr;
  ::testing::AssertionResult result =
      status_is(odml_operator_create_ex(cpu_device().get(), &desc.get(), level, extensions, &op), ODML_STATUS_SUCCESS);
  if (!result) return result << " (" << desc.to_string() << ")";
  odml_compiled_operator compiled = nullptr;
  result = status_is(odml_operator_compile(op, &compiled), ODML_STATUS_SUCCESS);
  odml_compiled_operator_destroy(compiled);
  odml_operator_destroy(op);
  return result;
}

}  // namespace odml_test
