// The Ascend C emitter's op table: how each AscIR compute op becomes count-form calls of the
// Ascend C vector API in f32 (docs/ascendc.md "Compute"). Rules as data: a row per op.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ascir/asc_graph.h"
#include "codegen/ascendc/ascend_device.h"
#include "target/target.h"

namespace af::codegen {

/// One row of the op table: the vector API calls (without "AscendC::") computing the op into
/// {d} from operands {0}, {1} over {n} elements, in f32, with `temps` scratch tiles {t0}, {t1},
/// ... (consecutive; with {tmp}, the advanced API's uint8_t temporary buffer, `temps` tiles of a
/// buffer of its own instead: uses_tmp_buffer),
/// {mask} the kernel's Compare bit mask, {one} its tile of ones (for Div) and {compare_scalar} the
/// vector-scalar compare's name in the target's CANN release (compare_scalar_name). bool values are
/// f32 0 / 1. `approximate`: the value of the op's attribute it serves ("" = absent or "none").
struct OpRule {
  std::string_view op;
  std::string_view approximate;
  int temps;
  std::vector<std::string_view> calls;
};

/// The count-form compare of a tensor with a scalar into a bit mask: CompareScalar in CANN 8.x
/// (basic_api/interface/kernel_operator_vec_cmpsel_intf.h, 8.1.RC1 and v8.5.0), renamed Compares
/// in 9.0, which keeps CompareScalar as a deprecated alias; Common takes CompareScalar.
std::string_view compare_scalar_name(CannVersion v);

/// Whether the rule's calls take the advanced API's temporary buffer {tmp} (its `temps` tiles,
/// the whole of which the call may write: a buffer of its own).
bool uses_tmp_buffer(const OpRule& r);

/// Whether the rule's calls read the kernel's tile of ones {one}.
bool uses_ones(const OpRule& r);

/// What a rule's placeholders stand for at one call site.
struct RuleOperands {
  std::string dst;                         // {d}
  std::string count;                       // {n}
  std::vector<std::string> inputs;         // {0}, {1}, ...
  std::vector<std::string> temps;          // {t0}, {t1}, ...
  std::string one;                         // {one}: the tile (or repeat) of ones
  std::string mask = "mask";               // {mask}
  std::string tmp = "tmpbuf";              // {tmp}
  CannVersion cann = CannVersion::Common;  // {compare_scalar}
};

/// The rule's calls with every placeholder replaced, each prefixed "AscendC::".
std::vector<std::string> expand_rule(const OpRule& r, const RuleOperands& ops);

/// Every row.
const std::vector<OpRule>& op_rules();

/// The rule computing node `n` (its op and `approximate` attribute), or nullptr.
const OpRule* find_rule(const ascir::AscNode& n);

}  // namespace af::codegen
