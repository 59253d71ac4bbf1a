// AUTOFUSE_FLAGS: the fusion settings in CANN AutoFuse's syntax, "--key=value;--key=value",
// parsed into fusion::FusionOptions and printed back. The flags (docs/user-guide.md
// "AUTOFUSE_FLAGS"):
//   --enable_autofuse=true|false          FusionOptions::enabled
//   --autofuse_enable_pass=PASS[,PASS]    turns passes on  (elementwise, broadcast, reduce, concat)
//   --autofuse_disable_pass=PASS[,PASS]   turns passes off (reduce, concat); wins over enable
//   --max_fusion_size=N        (N >= 1)   FusionOptions::max_nodes
//   --max_fusion_inputs=N      (N >= 1)   FusionOptions::max_inputs (ours; CANN has no flag)
//   --recomputation_threshold=N (0..255)  FusionOptions::recomputation_threshold
//   --max_reduce_epilogue=N    (N >= 0)   FusionOptions::max_reduce_epilogue (ours)
//   --emulate_precision_casts=true|false  FusionOptions::emulate_precision_casts (ours; Inductor's
//                                         name)
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "fusion/can_fuse.h"

namespace af {

/// The pass names --autofuse_enable_pass / --autofuse_disable_pass accept, in print order.
const std::vector<std::string>& fusion_pass_names();

/// The passes `opts` has on, in fusion_pass_names() order (elementwise and broadcast always).
std::vector<std::string> enabled_passes(const fusion::FusionOptions& opts);

/// Applies the AUTOFUSE_FLAGS text `text` on top of `base` and returns the result. Items are
/// separated by ';' (whitespace around items, names, values and list entries and empty items are
/// ignored); a later item of the same scalar flag wins; pass lists accumulate, and a pass both
/// enabled and disabled ends disabled (CANN's rule). Throws FlagError, its message starting with
/// `source` and naming the flag and the valid flags or values, on an unknown flag (CANN flags we
/// do not implement included), a missing or bad value, an unknown pass, or disabling elementwise
/// or broadcast (always on while fusion is enabled).
fusion::FusionOptions parse_flags(std::string_view text, const fusion::FusionOptions& base = {},
                                  std::string_view source = "AUTOFUSE_FLAGS");

/// Every setting of `opts` as AUTOFUSE_FLAGS text (for logs and dumps):
/// parse_flags(to_flags_string(o)) == o for any valid `o`, whatever the base.
std::string to_flags_string(const fusion::FusionOptions& opts);

}  // namespace af
