#include "support/runner.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "support/guarded_buffer.h"
#include "support/test_env.h"

namespace odml_test {
namespace {

using Region = std::unique_ptr<GuardedBuffer>;

Region make_region(uint64_t size) {
  if (size == 0) return nullptr;
  return std::make_unique<GuardedBuffer>(test_device(), size, DML_TEMPORARY_BUFFER_ALIGNMENT);
}

odml_buffer_binding binding(const Region& r) { return r ? r->binding() : odml_buffer_binding{}; }

std::string check_guards(const Region& r, const std::string& name) {
  if (!r) return "";
  const ::testing::AssertionResult ok = r->guards_intact(name);
  return ok ? "" : std::string(ok.message()) + "\n";
}

bool owned(const TensorSpec& t) { return (t.flags & DML_TENSOR_FLAG_OWNED_BY_DML) != 0; }

}  // namespace

RunOutputs run_operator(const OpDesc& desc, const std::vector<Bytes>& inputs, const RunOptions& options) {
  const opendml::Device& device = test_device();
  const std::vector<TensorSpec> in_specs = desc.inputs(), out_specs = desc.outputs();
  try {
    const odml_operator_options create{options.extensions, static_cast<uint32_t>(options.coordinate_offsets.size()),
                                       options.coordinate_offsets.empty() ? nullptr : options.coordinate_offsets.data(),
                                       static_cast<uint32_t>(options.fill_values.size()),
                                       options.fill_values.empty() ? nullptr : options.fill_values.data()};
    const opendml::CompiledOperator op = opendml::Operator(device, desc.get(), options.feature_level, create).compile();
    const odml_binding_properties props = op.binding_properties();
    EXPECT_EQ(props.input_count, in_specs.size());
    EXPECT_EQ(props.output_count, out_specs.size());

    std::vector<Region> in;
    for (size_t i = 0; i < in_specs.size(); ++i) {
      in.push_back(std::make_unique<GuardedBuffer>(device, in_specs[i]));
      in[i]->upload(inputs[i]);
    }
    const Region persistent = make_region(props.persistent_size_in_bytes);

    // Initialize binds exactly the OWNED_BY_DML inputs (docs/contract.md section 2).
    bool any_owned = false;
    std::vector<odml_buffer_binding> init_inputs(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      if (owned(in_specs[i])) {
        init_inputs[i] = in[i]->binding();
        any_owned = true;
      }
    const Region init_temporary = make_region(props.temporary_size_in_bytes);
    const odml_bindings init{
        init_inputs.data(), any_owned ? static_cast<uint32_t>(in.size()) : 0, nullptr, 0, binding(init_temporary),
        binding(persistent)};
    op.initialize(init);
    device.synchronize();
    // From here on the operator must read its owned inputs from the persistent region.
    for (size_t i = 0; i < in.size(); ++i)
      if (owned(in_specs[i])) in[i]->poison();

    RunOutputs results(options.threads);
    std::vector<std::string> errors(options.threads);
    const auto work = [&](int thread) {
      try {
        std::vector<Region> out;
        std::vector<odml_buffer_binding> in_bindings(in.size()), out_bindings;
        for (size_t i = 0; i < in.size(); ++i)
          if (!owned(in_specs[i])) in_bindings[i] = in[i]->binding();
        for (const TensorSpec& t : out_specs) {
          out.push_back(std::make_unique<GuardedBuffer>(device, t));
          out_bindings.push_back(out.back()->binding());
        }
        const Region temporary = make_region(props.temporary_size_in_bytes);
        const odml_bindings bindings{in_bindings.data(),  static_cast<uint32_t>(in_bindings.size()),
                                     out_bindings.data(), static_cast<uint32_t>(out_bindings.size()),
                                     binding(temporary),  binding(persistent)};
        for (int e = 0; e < options.executions; ++e) {
          for (const Region& o : out) o->poison();
          op.execute(bindings);
          device.synchronize();
        }
        for (size_t o = 0; o < out.size(); ++o) {
          errors[thread] += check_guards(out[o], "output " + std::to_string(o));
          results[thread].push_back(out[o]->download());
        }
        errors[thread] += check_guards(temporary, "temporary region");
      } catch (const opendml::Error& e) {
        errors[thread] += std::string("execute: ") + odml_status_name(e.status()) + ": " + e.what() + "\n";
      }
    };
    if (options.threads == 1) {
      work(0);
    } else {
      std::vector<std::thread> threads;
      for (int t = 0; t < options.threads; ++t) threads.emplace_back(work, t);
      for (std::thread& t : threads) t.join();
    }

    bool ok = props.input_count == in_specs.size() && props.output_count == out_specs.size();
    for (int t = 0; t < options.threads; ++t)
      if (!errors[t].empty()) {
        ADD_FAILURE() << "thread " << t << " of " << options.threads << ":\n" << errors[t];
        ok = false;
      }
    std::string damage =
        check_guards(init_temporary, "temporary region at initialize") + check_guards(persistent, "persistent region");
    for (size_t i = 0; i < in.size(); ++i) {
      damage += check_guards(in[i], "input " + std::to_string(i));
      if (!owned(in_specs[i]) && in[i]->download() != inputs[i])
        damage += "input " + std::to_string(i) + " was changed by the operator\n";
    }
    if (!damage.empty()) {
      ADD_FAILURE() << damage;
      ok = false;
    }
    if (!ok) return {};
    return results;
  } catch (const opendml::Error& e) {
    ADD_FAILURE() << odml_status_name(e.status()) << ": " << e.what();
    return {};
  }
}

}  // namespace odml_test
