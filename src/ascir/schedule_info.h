// What the Schedule pass decides for one kernel (ScheduleInfo), and the closed sets it is made
// of as types: the schedule family, the TilingCases a tiling function chooses from, the role of
// a tiling parameter. Each has one row per value in schedule_info.cpp (its name in the IR text).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace af::ascir {

/// How a kernel's loop nest is tiled (docs/schedule.md): elementwise (every node on one nest),
/// a reduction over the innermost dim (rows), or over outer dims with the innermost kept.
enum class ScheduleFamily { Elementwise, ReduceInner, ReduceOuter };

/// One loop nest a family's tiling function may pick at run time. A reduce_inner kernel with
/// values worth buffering has two: all_load (key 0, a row's inputs kept in the tile buffer
/// between passes) and split (key 1, every pass reads them again); every other kernel has one,
/// named after its family.
enum class TilingCase {
  Elementwise,
  ReduceInner,
  ReduceInnerAllLoad,
  ReduceInnerSplit,
  ReduceOuter
};

/// What a tiling parameter sizes: the tile of the vectorized dim, or the tiles of a block.
enum class ParamRole { Tile, Block };

/// The names of these values in the IR text ("elementwise", "reduce_inner_split", "tile").
std::string_view name(ScheduleFamily f);
std::string_view name(TilingCase c);
std::string_view name(ParamRole r);
/// The value named `s`, or nullopt for a name no row has.
std::optional<ScheduleFamily> schedule_family_named(std::string_view s);
std::optional<TilingCase> tiling_case_named(std::string_view s);
std::optional<ParamRole> param_role_named(std::string_view s);

/// Whether `f` is a reduction family (rows of a reduced dim; the reduce emitter prints it).
bool is_reduce(ScheduleFamily f);
/// The single TilingCase of a family that has one.
TilingCase single_case(ScheduleFamily f);

/// A tiling parameter of a scheduled graph: a size symbol the tiling function chooses at run
/// time (a tile or block size of `axis`), a multiple of `align` elements.
struct TilingParam {
  std::string name;  // the size symbol, e.g. "z0t_size"
  ParamRole role = ParamRole::Tile;
  int axis = -1;      // the axis it splits
  int64_t align = 1;  // multiple of this many elements
};

/// What the Schedule pass decided: one TilingCase of the kernel.
struct ScheduleInfo {
  int tiling_key = 0;
  ScheduleFamily family = ScheduleFamily::Elementwise;
  /// The TilingCases the tiling function chooses from at run time; index = tiling_key. Empty
  /// means the family's single case.
  std::vector<TilingCase> tiling_cases;
  int block_axis = -1;       // the axis whose index is the launch block index
  int vectorized_axis = -1;  // innermost axis computed in SIMD lanes
  std::vector<TilingParam> params;
  int64_t ub_bytes = 0;           // tile buffer budget the tiling function respects
  int64_t bytes_per_element = 0;  // live buffer bytes per element of the tile axis

  /// tiling_cases, or the family's single case when that is empty.
  std::vector<TilingCase> cases() const;
};

}  // namespace af::ascir
