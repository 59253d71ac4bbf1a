// Names in the textual IRs: values, axes, graphs and attribute keys share one alphabet.
#pragma once
#include <cctype>
#include <string_view>

namespace af {

/// True for a non-empty name over [A-Za-z0-9_.], the alphabet both IR printers emit.
inline bool is_ir_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

}  // namespace af
