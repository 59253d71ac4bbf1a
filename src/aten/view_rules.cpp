#include "aten/view_rules.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace af::aten {
namespace {

constexpr const char* kNotAView = "view not expressible as a Graph IR view";

/// Whether `d` names a dim of a rank-`rank` tensor (negative from the end).
bool in_range(int64_t d, int64_t rank) {
  return d >= -rank && d < rank;
}

/// A size that is a plain int ("4"), or nullopt (a symbolic size: "s0 + 1").
std::optional<int64_t> int_size(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

const Arg* find(const Call& c, std::string_view name) {
  auto it = c.args.find(name);
  return it == c.args.end() ? nullptr : &it->second;
}

/// An int argument's value (nullopt for another kind; `fallback` where it is None or absent).
std::optional<int64_t> int_arg(const Call& c, std::string_view name,
                               std::optional<int64_t> fallback = {}) {
  const Arg* a = find(c, name);
  if (a == nullptr || a->kind == ArgKind::None) return fallback;
  if (a->kind != ArgKind::Int) return std::nullopt;
  return a->i;
}

Plan view(std::string_view kind) {
  return Plan{std::string(kind), {{"self", -1, ""}}, {}, false};
}

PlanOrReason result_shape(std::string_view kind) {
  Plan p = view(kind);
  p.result_shape = true;
  return p;
}

PlanOrReason permute(const Call& c, int64_t rank) {
  const Arg* dims = find(c, "dims");
  if (dims == nullptr || dims->kind != ArgKind::List) return std::string(kNotAView);
  std::vector<int64_t> order;
  for (const Arg& d : dims->items) {
    if (d.kind != ArgKind::Int) return std::string(kNotAView);
    order.push_back(norm_dim(d.i, rank));
  }
  Plan p = view("permute");
  p.attrs["dims"] = order;
  return p;
}

PlanOrReason transpose(const Call& c, int64_t rank) {
  const auto d0 = int_arg(c, "dim0");
  const auto d1 = int_arg(c, "dim1");
  if (!d0 || !d1 || !in_range(*d0, rank) || !in_range(*d1, rank)) return std::string(kNotAView);
  std::vector<int64_t> order(rank);
  for (int64_t i = 0; i < rank; ++i) order[i] = i;
  std::swap(order[norm_dim(*d0, rank)], order[norm_dim(*d1, rank)]);
  Plan p = view("permute");
  p.attrs["dims"] = order;
  return p;
}

PlanOrReason squeeze_dim(const Call& c, const std::vector<std::string>& sizes) {
  const auto rank = static_cast<int64_t>(sizes.size());
  const auto dim = int_arg(c, "dim");
  if (!dim || !in_range(*dim, rank)) return std::string(kNotAView);
  const int64_t d = norm_dim(*dim, rank);
  if (sizes[d] != "1") return std::string(kNotAView);  // a no-op squeeze: left to ATen (an alias)
  Plan p = view("squeeze");
  p.attrs["dim"] = d;
  return p;
}

/// squeeze.dims as the reshape to its result (BatchNorm's saved mean drops N, H and W).
PlanOrReason squeeze_dims(const Call& c, const std::vector<std::string>& sizes) {
  const Arg* dims = find(c, "dim");
  const auto rank = static_cast<int64_t>(sizes.size());
  bool any = false;
  for (const Arg& d : dims == nullptr ? std::vector<Arg>{} : dims->items)
    any =
        any || (d.kind == ArgKind::Int && in_range(d.i, rank) && sizes[norm_dim(d.i, rank)] == "1");
  if (!any) return std::string(kNotAView);  // a no-op squeeze: left to ATen (an alias)
  return result_shape("reshape");
}

PlanOrReason slice(const Call& c, const std::vector<std::string>& sizes) {
  const auto rank = static_cast<int64_t>(sizes.size());
  const auto dim = int_arg(c, "dim");
  if (!dim || !in_range(*dim, rank)) return std::string(kNotAView);
  const int64_t d = norm_dim(*dim, rank);
  const auto size = int_size(sizes[d]);
  const auto step = int_arg(c, "step", 1);
  auto start = int_arg(c, "start", 0);
  auto end = int_arg(c, "end", size);
  if (!size || !start || !end || !step) return std::string(kNotAView);
  const int64_t s = std::max<int64_t>(0, std::min(*size, *start < 0 ? *start + *size : *start));
  const int64_t e = std::max(s, std::min(*size, *end < 0 ? *end + *size : *end));
  Plan p = view("slice");
  p.attrs["dim"] = d;
  p.attrs["start"] = s;
  p.attrs["end"] = e;
  p.attrs["step"] = *step;
  return p;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& view_rows() {
  static const std::vector<std::pair<std::string, std::string>> rows{
      {"aten.view.default", "reshape"},    {"aten._unsafe_view.default", "reshape"},
      {"aten.reshape.default", "reshape"}, {"aten.squeeze.default", "reshape"},
      {"aten.permute.default", "permute"}, {"aten.transpose.int", "permute"},
      {"aten.t.default", "permute"},       {"aten.unsqueeze.default", "unsqueeze"},
      {"aten.squeeze.dim", "squeeze"},     {"aten.squeeze.dims", "reshape"},
      {"aten.slice.Tensor", "slice"},      {"aten.expand.default", "expand"},
  };
  return rows;
}

PlanOrReason plan_view(std::string_view op, const Call& c) {
  const Arg* self = find(c, "self");
  if (self == nullptr || self->kind != ArgKind::Tensor) return "operand is not a tensor";
  const std::vector<std::string>& sizes = self->sizes;
  const auto rank = static_cast<int64_t>(sizes.size());
  if (op == "aten.permute.default") return permute(c, rank);
  if (op == "aten.transpose.int") return transpose(c, rank);
  if (op == "aten.t.default") {
    std::vector<int64_t> order(rank);
    for (int64_t i = 0; i < rank; ++i) order[i] = rank - 1 - i;
    Plan p = view("permute");
    p.attrs["dims"] = order;
    return p;
  }
  if (op == "aten.unsqueeze.default") {
    const auto dim = int_arg(c, "dim");
    if (!dim) return std::string(kNotAView);
    Plan p = view("unsqueeze");
    p.attrs["dim"] = norm_dim(*dim, static_cast<int64_t>(c.out.sizes.size()));
    return p;
  }
  if (op == "aten.squeeze.dim") return squeeze_dim(c, sizes);
  if (op == "aten.squeeze.dims") return squeeze_dims(c, sizes);
  if (op == "aten.slice.Tensor") return slice(c, sizes);
  for (const auto& [name, kind] : view_rows())
    if (name == op) return result_shape(kind);
  return std::string(kNotAView);
}

}  // namespace af::aten
