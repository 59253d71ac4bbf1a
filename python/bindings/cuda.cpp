// The cuda target's bindings: Program.launch_cuda (a kernel on a CUDA stream), whether this
// process can run cuda kernels, and NVRTC for the tests that compile device code with no GPU.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "program.h"
#include "runtime/cuda/launcher.h"
#include "runtime/cuda/nvrtc.h"
#include "support/error.h"

namespace nb = nanobind;

void launch_cuda(const Program& p, int k, const std::vector<uintptr_t>& ptrs,
                 const std::vector<int64_t>& syms, int device, uintptr_t stream) {
  if (k < 0 || k >= static_cast<int>(p.cuda.size()) || !p.cuda[k])
    throw nb::index_error(("kernel " + std::to_string(k) + " is not a cuda kernel").c_str());
  const af::KernelHandle& h = p.prog.kernels[k];
  if (ptrs.size() != static_cast<size_t>(h.num_inputs + h.num_outputs) ||
      syms.size() != h.symbols.size())
    throw nb::value_error(("kernel " + h.name + " takes " + std::to_string(h.num_inputs) +
                           " inputs, " + std::to_string(h.num_outputs) + " outputs and " +
                           std::to_string(h.symbols.size()) + " size symbols")
                              .c_str());
  std::vector<void*> args(ptrs.size());
  for (size_t i = 0; i < ptrs.size(); ++i) args[i] = reinterpret_cast<void*>(ptrs[i]);
  nb::gil_scoped_release release;
  p.cuda[k]->launch(args.data(), args.size(), syms.data(), device, stream);
}

void add_cuda_kernels(Program& p, const af::CompileOptions& opts) {
  for (const af::KernelHandle& h : p.prog.kernels)
    p.cuda.push_back(h.target == "cuda" ? std::make_shared<af::runtime::cuda::CudaKernel>(
                                              h.module, h.symbol, opts.cache_dir)
                                        : nullptr);
}

void bind_cuda(nb::module_& m) {
  m.def("cuda_unavailable", &af::runtime::cuda::unavailable,
        "Why this process cannot run the cuda target's kernels (no CUDA driver, no device, no "
        "NVRTC), or \"\" when it can.");
  m.def(
      "nvrtc",
      []() -> nb::object {
        std::string why;
        const af::runtime::cuda::Nvrtc* n = af::runtime::cuda::Nvrtc::get(&why);
        if (!n) return nb::str(why.c_str());
        return nb::make_tuple(n->version(), n->path());
      },
      "(version, path) of the NVRTC the cuda target compiles with, or a str saying why there "
      "is none.");
  m.def(
      "nvrtc_compile",
      [](const std::string& source, const std::string& arch) {
        std::string why;
        const af::runtime::cuda::Nvrtc* n = af::runtime::cuda::Nvrtc::get(&why);
        if (!n) throw af::ToolchainError(why);
        af::runtime::cuda::Nvrtc::Result r =
            n->compile(source, arch, af::runtime::cuda::device_headers());
        return std::make_tuple(r.ok, r.ok ? nb::bytes(r.binary.data(), r.binary.size())
                                          : nb::bytes(r.log.data(), r.log.size()));
      },
      nb::arg("source"), nb::arg("arch") = "sm_90",
      "(ok, cubin or log): device code compiled by the launcher's NVRTC for `arch`, with the "
      "runtime headers device code includes. Raises ToolchainError without NVRTC.");
}
