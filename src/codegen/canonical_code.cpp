#include "codegen/canonical_code.h"

#include <cctype>

namespace af::codegen {
namespace {

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// `source` with each whole identifier `name`, or `name` followed by '_', spelled `as`.
std::string renamed(const std::string& name, const std::string& as, const std::string& source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    const size_t end = i + name.size();
    if ((i == 0 || !ident_char(source[i - 1])) && source.compare(i, name.size(), name) == 0 &&
        (end >= source.size() || !ident_char(source[end]) || source[end] == '_')) {
      out += as;
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
      if (c == '\\' && i + 1 < source.size())
        out += source[++i];
      else if (c == quote)
        quote = 0;
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

std::string canonical_code(const std::string& source, const std::vector<std::string>& names) {
  std::string out = source;
  for (size_t i = 0; i < names.size(); ++i)
    if (!names[i].empty()) out = renamed(names[i], "@" + std::to_string(i), out);
  return uncommented(out);
}

}  // namespace af::codegen
