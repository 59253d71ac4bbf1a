// AUTOFUSE_FLAGS parsing and printing (see flags.h). Names and syntax follow CANN AutoFuse's
// AUTOFUSE_FLAGS; unlike CANN, which skips what it cannot read with a warning, every unknown
// flag, pass or bad value is a FlagError naming it.
#include "pipeline/flags.h"

#include <charconv>
#include <climits>
#include <string>

#include "support/error.h"

namespace af {
namespace {

using fusion::FusionOptions;

constexpr std::string_view kEnablePass = "--autofuse_enable_pass";
constexpr std::string_view kDisablePass = "--autofuse_disable_pass";

/// The valid flags with their values, for error messages.
constexpr const char* kValidFlags =
    "--enable_autofuse=true|false, --emulate_precision_casts=true|false, "
    "--autofuse_enable_pass=PASS[,PASS...], "
    "--autofuse_disable_pass=PASS[,PASS...], --max_fusion_size=N (N >= 1), "
    "--max_fusion_inputs=N (N >= 1), --recomputation_threshold=N (0..255), "
    "--max_reduce_epilogue=N (N >= 0)";

/// A true|false flag: its name and the field it sets.
struct BoolFlag {
  std::string_view name;
  bool FusionOptions::*field;
};

const BoolFlag kBoolFlags[] = {
    {"--enable_autofuse", &FusionOptions::enabled},
    {"--emulate_precision_casts", &FusionOptions::emulate_precision_casts},
};

/// An integer flag: its name, the field it sets and its inclusive range.
struct IntFlag {
  std::string_view name;
  int FusionOptions::*field;
  long long min;
  long long max;
  const char* range;  // the valid values, for error messages
};

const IntFlag kIntFlags[] = {
    {"--max_fusion_size", &FusionOptions::max_nodes, 1, INT_MAX, "an integer >= 1"},
    {"--max_fusion_inputs", &FusionOptions::max_inputs, 1, INT_MAX, "an integer >= 1"},
    {"--recomputation_threshold", &FusionOptions::recomputation_threshold, 0, 255,
     "an integer from 0 to 255"},
    {"--max_reduce_epilogue", &FusionOptions::max_reduce_epilogue, 0, INT_MAX, "an integer >= 0"},
};

/// A pass name and the switch it sets (nullptr: always on while fusion is enabled).
struct Pass {
  std::string_view name;
  bool FusionOptions::*field;
};

const Pass kPasses[] = {
    {"elementwise", nullptr},
    {"broadcast", nullptr},
    {"reduce", &FusionOptions::reduce},
    {"concat", &FusionOptions::concat},
};

/// CANN AutoFuse flags and passes autofuse does not implement (named as such in errors).
const std::string_view kCannOnlyFlags[] = {"--autofuse_enable_pgo",
                                           "--autofuse_enhance_precision_blacklist",
                                           "--experimental_enable_jit_executor_v2",
                                           "--disable_lifting",
                                           "--skip_node_names_cfg",
                                           "--subgraph_recover"};
const std::string_view kCannOnlyPasses[] = {"matmul", "conv",   "slice",
                                            "split",  "gather", "transpose"};

/// Whether `list` holds `s`.
template <typename List>
bool contains(const List& list, std::string_view s) {
  for (std::string_view x : list)
    if (x == s) return true;
  return false;
}

/// `s` without leading and trailing whitespace.
std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

/// Calls f(piece) for each trimmed, non-empty piece of `s` between separators `sep`.
template <typename F>
void for_each_piece(std::string_view s, char sep, F f) {
  while (true) {
    size_t at = s.find(sep);
    std::string_view piece = trim(s.substr(0, at));
    if (!piece.empty()) f(piece);
    if (at == std::string_view::npos) return;
    s.remove_prefix(at + 1);
  }
}

/// The parser of one AUTOFUSE_FLAGS text: errors start with `source`.
class FlagParser {
 public:
  FlagParser(std::string_view source, const FusionOptions& base) : source_(source), out_(base) {}

  /// Applies one `--name=value` item.
  void item(std::string_view item) {
    if (item.substr(0, 2) != "--")
      fail("\"" + std::string(item) +
           "\" is not a flag (items are --name=value, separated by ';'); valid flags: " +
           kValidFlags);
    size_t eq = item.find('=');
    std::string_view name = trim(item.substr(0, eq));
    if (!known(name)) unknown_flag(name);
    if (eq == std::string_view::npos)
      fail(std::string(name) + " needs a value (" + usage(name) + ")");
    std::string_view value = trim(item.substr(eq + 1));
    if (const BoolFlag* f = find_bool(name)) {
      out_.*f->field = parse_bool(name, value);
    } else if (name == kEnablePass) {
      for_each_piece(value, ',', [&](std::string_view p) {
        if (const Pass* pass = find_pass(name, p); pass->field) enable_.push_back(pass->field);
      });
    } else if (name == kDisablePass) {
      for_each_piece(value, ',', [&](std::string_view p) {
        const Pass* pass = find_pass(name, p);
        if (!pass->field)
          fail("pass \"" + std::string(p) + "\" cannot be disabled in " + std::string(name) +
               ": elementwise and broadcast fusion are always on while --enable_autofuse=true "
               "(--enable_autofuse=false turns fusion off); passes that can be disabled: "
               "reduce, concat");
        disable_.push_back(pass->field);
      });
    } else {
      for (const IntFlag& f : kIntFlags)
        if (name == f.name) out_.*f.field = static_cast<int>(parse_int(f, value));
    }
  }

  /// The options after every item: enabled passes on, then disabled passes off.
  FusionOptions finish() {
    for (bool FusionOptions::*p : enable_) out_.*p = true;
    for (bool FusionOptions::*p : disable_) out_.*p = false;
    return out_;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw FlagError(std::string(source_) + ": " + what);
  }

  static const BoolFlag* find_bool(std::string_view name) {
    for (const BoolFlag& f : kBoolFlags)
      if (name == f.name) return &f;
    return nullptr;
  }

  static bool known(std::string_view name) {
    if (find_bool(name) || name == kEnablePass || name == kDisablePass) return true;
    for (const IntFlag& f : kIntFlags)
      if (name == f.name) return true;
    return false;
  }

  [[noreturn]] void unknown_flag(std::string_view name) const {
    if (contains(kCannOnlyFlags, name))
      fail(std::string(name) +
           " is a CANN AutoFuse flag autofuse does not implement; valid flags: " + kValidFlags);
    fail("unknown flag \"" + std::string(name) + "\"; valid flags: " + kValidFlags);
  }

  /// `--name=VALUES` of a known flag.
  static std::string usage(std::string_view name) {
    if (find_bool(name)) return std::string(name) + "=true|false";
    if (name == kEnablePass || name == kDisablePass) return std::string(name) + "=PASS[,PASS...]";
    for (const IntFlag& f : kIntFlags)
      if (name == f.name) return std::string(name) + "=N, N " + f.range;
    return std::string(name);
  }

  [[noreturn]] void bad_value(std::string_view name, std::string_view value,
                              const std::string& valid) const {
    fail("bad value \"" + std::string(value) + "\" for " + std::string(name) +
         "; valid values: " + valid);
  }

  bool parse_bool(std::string_view name, std::string_view value) const {
    if (value == "true") return true;
    if (value == "false") return false;
    bad_value(name, value, "true, false");
  }

  long long parse_int(const IntFlag& f, std::string_view value) const {
    long long v = 0;
    const char* end = value.data() + value.size();
    auto [ptr, ec] = std::from_chars(value.data(), end, v);
    if (value.empty() || ec != std::errc() || ptr != end || v < f.min || v > f.max)
      bad_value(f.name, value, f.range);
    return v;
  }

  const Pass* find_pass(std::string_view flag, std::string_view name) const {
    for (const Pass& p : kPasses)
      if (p.name == name) return &p;
    std::string cann = contains(kCannOnlyPasses, name)
                           ? " (a CANN AutoFuse pass autofuse does not implement)"
                           : "";
    fail("unknown pass \"" + std::string(name) + "\" in " + std::string(flag) + cann +
         "; valid passes: elementwise, broadcast, reduce, concat");
  }

  std::string_view source_;
  FusionOptions out_;
  std::vector<bool FusionOptions::*> enable_, disable_;
};

}  // namespace

const std::vector<std::string>& fusion_pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Pass& p : kPasses) v.emplace_back(p.name);
    return v;
  }();
  return names;
}

std::vector<std::string> enabled_passes(const fusion::FusionOptions& opts) {
  std::vector<std::string> on;
  for (const Pass& p : kPasses)
    if (!p.field || opts.*p.field) on.emplace_back(p.name);
  return on;
}

fusion::FusionOptions parse_flags(std::string_view text, const fusion::FusionOptions& base,
                                  std::string_view source) {
  FlagParser parser(source, base);
  for_each_piece(text, ';', [&](std::string_view item) { parser.item(item); });
  return parser.finish();
}

std::string to_flags_string(const fusion::FusionOptions& opts) {
  std::string on, off;
  for (const Pass& p : kPasses) {
    std::string& list = !p.field || opts.*p.field ? on : off;
    list += (list.empty() ? "" : ",") + std::string(p.name);
  }
  std::string s = "--enable_autofuse=" + std::string(opts.enabled ? "true" : "false");
  s += ";" + std::string(kEnablePass) + "=" + on;
  if (!off.empty()) s += ";" + std::string(kDisablePass) + "=" + off;
  for (const IntFlag& f : kIntFlags)
    s += ";" + std::string(f.name) + "=" + std::to_string(opts.*f.field);
  s += ";--emulate_precision_casts=" + std::string(opts.emulate_precision_casts ? "true" : "false");
  return s;
}

}  // namespace af
