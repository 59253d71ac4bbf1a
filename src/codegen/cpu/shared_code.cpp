#include "codegen/cpu/shared_code.h"

#include <cctype>

namespace af::codegen {
namespace {

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// `source` with each whole identifier `name`, or `name` followed by '_' (K_kernel,
/// K_TilingData), spelled "@", also inside string literals (a static_assert's message).
std::string renamed(const std::string& name, const std::string& source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    const size_t end = i + name.size();
    if ((i == 0 || !ident_char(source[i - 1])) && source.compare(i, name.size(), name) == 0 &&
        (end >= source.size() || !ident_char(source[end]) || source[end] == '_')) {
      out += '@';
      i = end - 1;
    } else {
      out += source[i];
    }
  }
  return out;
}

/// `source` without its // comments (those outside string and character literals).
std::string uncommented(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  char quote = 0;
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (quote) {
      out += c;
      if (c == '\\' && i + 1 < source.size()) out += source[++i];
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
      out += c;
    } else if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      while (i + 1 < source.size() && source[i + 1] != '\n') ++i;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string SharedCode::same_as(const std::string& name, const std::string& source) {
  auto [it, added] = first_.emplace(uncommented(renamed(name, source)), name);
  return added ? std::string() : it->second;
}

std::string forward_kernel(const std::string& name, const std::string& first) {
  return "using " + name + "_TilingData = " + first + "_TilingData;\n\n" +  //
         "AF_EXPORT void " + name +
         "_tiling(const int64_t* symbols, const af_target* target, void* tiling_data) {\n" +
         "  " + first + "_tiling(symbols, target, tiling_data);\n}\n\n" +  //
         "AF_EXPORT void " + name +
         "_kernel(void* const* args, const void* tiling_data, int64_t block_idx) {\n" + "  " +
         first + "_kernel(args, tiling_data, block_idx);\n}\n";
}

}  // namespace af::codegen
