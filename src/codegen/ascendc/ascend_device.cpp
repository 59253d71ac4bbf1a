// The Ascend SoC table and the CANN release names of the ascendc target.
#include "codegen/ascendc/ascend_device.h"

#include "support/error.h"

namespace af::codegen {

std::string_view cann_version_name(CannVersion v) {
  switch (v) {
    case CannVersion::V8: return "8";
    case CannVersion::V9: return "9";
    case CannVersion::Common: break;
  }
  return "common";
}

CannVersion parse_cann_version(std::string_view name) {
  if (name.empty()) return CannVersion::Common;
  for (CannVersion v : {CannVersion::Common, CannVersion::V8, CannVersion::V9})
    if (cann_version_name(v) == name) return v;
  throw CompileError("unknown CANN version '" + std::string(name) +
                     "' (8, 9, or common / \"\": what both accept)");
}

CannVersion cann_version(const target::Target& t) {
  return parse_cann_version(t.device.option("cann"));
}

namespace {

/// Atlas A2 / A3 SoCs (CANN 8.1.RC1 data/platform_config/<soc>.ini: vector_core_cnt; ub_size
/// 196608 for each, of which InitBuffer may hand out 192 KB less the API's 8 KB).
struct AscendSocRow {
  std::string_view name;
  int64_t vector_cores;
};
constexpr AscendSocRow kAscendSocs[] = {
    {"Ascend910B1", 48},    {"Ascend910B2", 48},    {"Ascend910B3", 40},    {"Ascend910B4", 40},
    {"Ascend910_9381", 48}, {"Ascend910_9382", 48}, {"Ascend910_9391", 48}, {"Ascend910_9392", 48},
    {"Ascend910_9362", 40}, {"Ascend910_9372", 40},
};
constexpr int64_t kUbBytes = 184 * 1024;

}  // namespace

std::vector<std::string> ascend_soc_names() {
  std::vector<std::string> out;
  for (const AscendSocRow& r : kAscendSocs) out.emplace_back(r.name);
  return out;
}

target::Device ascend_device(const std::string& soc, const std::string& cann) {
  parse_cann_version(cann);  // a name it does not know throws here, at configuration
  std::string_view want = soc.empty() ? kAscendSocs[0].name : std::string_view(soc);
  std::string known;
  for (const AscendSocRow& r : kAscendSocs) {
    if (r.name == want) {
      target::Device d;
      d.target = "ascendc";
      d.cores = r.vector_cores;
      d.onchip_bytes = kUbBytes;
      if (!soc.empty()) d.options["soc"] = soc;
      if (!cann.empty()) d.options["cann"] = cann;
      return d;
    }
    known += (known.empty() ? "" : ", ") + std::string(r.name);
  }
  throw CompileError("unknown Ascend SoC '" + soc + "' (" + known + ")");
}

}  // namespace af::codegen
