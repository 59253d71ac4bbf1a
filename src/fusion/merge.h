// Fusion mechanics: merging two kernels into one loop nest, with axis embedding when their loop
// axes differ. The policy that decides whether to merge lives in can_fuse.h.
#pragma once
#include "fusion/embed.h"
#include "fusion/fused_graph.h"

namespace af::fusion {

struct StepIndex;

/// The kernel that computes everything steps a and b of `fg` compute (a before b in execution
/// order), iterating over the host's axes (embed_axes): the guest's tensors are rewritten onto
/// them (missing axes inserted with repeat 1 / stride 0, a size-1 guest axis on a bigger host
/// axis gets stride 0; stores keep listing the axes of their value's dims). A producer ->
/// consumer edge disappears: b's data + load of a value a computes become uses of the node a's
/// store reads: an f32 value whose store rounds it to f16/bf16 (b's cast to f32 of the load then
/// is that value itself), or a value in the storage dtype (a cast node rounded it; b's cast to
/// f32 follows). Inputs both read share one data + load. A value
/// still needed outside the merged kernel (another step reads it, it is a graph output, or
/// nothing reads it) keeps its store + output; other stores are dropped along with the nodes only
/// they used. Data and output indices are dense, in Graph IR node order; `inputs`/`outputs` map
/// them to Graph IR nodes. Identical nodes (same op, inputs, attributes and tensor) are shared.
/// The result is named after a (renumber afterwards). Throws CompileError when a or b is not a
/// kernel or their axes do not embed.
FusedNode merge_kernels(const FusedGraph& fg, int a, int b);
/// The same, reusing a StepIndex of `fg`.
FusedNode merge_kernels(const FusedGraph& fg, const StepIndex& index, int a, int b);
/// The same with the embedding already computed (must be ok).
FusedNode merge_kernels(const FusedGraph& fg, const StepIndex& index, int a, int b,
                        const AxisEmbedding& embedding);

}  // namespace af::fusion
