// Printing of attribute values: the text form both IR printers and parsers agree on.
#include "graph/attr.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace af {
namespace {

/// Shortest "%.*g" text that reads back as exactly `v`, marked as a float ('.', 'e' or a word).
std::string float_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

/// A double-quoted string with '"', '\\' and control characters escaped.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

std::string attr_str(const Attr& a) {
  if (auto* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&a)) return float_str(*d);
  if (auto* s = std::get_if<std::string>(&a)) return quote(*s);
  return sym::str(std::get<std::vector<sym::Expr>>(a));
}

}  // namespace af
