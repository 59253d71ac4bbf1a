// The emulation's ABI adaptor of an Ascend C kernel (kernel.h emu_adaptor): the runtime launches
// K_kernel(args, tiling_data, block) as it launches a CPU kernel; under AF_ASCENDC_EMU it runs
// block `block` of the __aicore__ kernel K as the emulation's block of that index.
#include "codegen/ascendc/kernel.h"

namespace af::codegen {

std::string emu_adaptor(const std::string& name, int num_args) {
  std::string s = "\n#ifdef AF_ASCENDC_EMU\n";
  s += "AF_EXPORT void " + name +
       "_kernel(void* const* args, const void* tiling_data, int64_t block_idx) {\n";
  s += "  const af_tiling_header* h = static_cast<const af_tiling_header*>(tiling_data);\n";
  s += "  AscendC::emu::begin_block(\"" + name + "\", block_idx, h->block_dim);\n";
  s += "  " + name + "(";
  for (int i = 0; i < num_args; ++i)
    s += "AscendC::emu::gm_addr(args[" + std::to_string(i) + "]), ";
  s += "nullptr, AscendC::emu::gm_addr(tiling_data));\n";
  s += "  AscendC::emu::end_block();\n}\n#endif\n";
  return s;
}

}  // namespace af::codegen
