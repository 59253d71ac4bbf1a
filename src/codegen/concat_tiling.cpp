// A concat kernel's TilingData and tiling function, shared by the emitters (concat_tiling.h).
#include "codegen/concat_tiling.h"

#include <algorithm>
#include <set>

#include "codegen/loop_nest.h"
#include "codegen/tiling_data.h"

namespace af::codegen {

std::string pick(const std::string& a, const std::vector<int>& idx, int base) {
  std::string s = "{";
  for (size_t i = 0; i < idx.size(); ++i)
    s += (i ? ", " : "") + a + "[" + std::to_string(base + idx[i]) + "]";
  return s + "}";
}

EmittedKernel concat_kernel(const KernelUnit& u, const std::vector<EmittedKernel>& segs) {
  EmittedKernel out{kernel_c_name(u.name), {}, u.num_inputs, u.num_outputs};
  std::set<std::string> symbols;
  for (const EmittedKernel& s : segs) symbols.insert(s.symbols.begin(), s.symbols.end());
  out.symbols.assign(symbols.begin(), symbols.end());
  return out;
}

std::string concat_tiling_data(const EmittedKernel& k, const std::vector<EmittedKernel>& segs) {
  const std::string& K = k.name;
  std::vector<TilingField> fields;
  for (size_t i = 0; i < segs.size(); ++i)
    fields.push_back({segs[i].name + "_TilingData", "s" + std::to_string(i), ""});
  return tiling_data_struct(K, fields);
}

std::string concat_tiling_function(const EmittedKernel& k, const std::vector<EmittedKernel>& segs) {
  const std::string& K = k.name;
  std::string c = tiling_function_head(K, {});
  c += "  td->header.block_dim = 0;\n  td->header.tiling_key = 0;\n";
  for (size_t i = 0; i < segs.size(); ++i) {
    std::vector<int> at;
    for (const auto& name : segs[i].symbols)
      at.push_back(static_cast<int>(std::find(k.symbols.begin(), k.symbols.end(), name) -
                                    k.symbols.begin()));
    const std::string si = "s" + std::to_string(i);
    c += "  {\n";
    c += at.empty() ? "    const int64_t* syms = symbols;\n"
                    : "    const int64_t syms[] = " + pick("symbols", at) + ";\n";
    c += "    " + segs[i].name + "_tiling(syms, target, &td->" + si + ");\n";
    c += "    td->header.block_dim += td->" + si + ".header.block_dim;\n  }\n";
  }
  return c + "}\n\n";
}

}  // namespace af::codegen
