#include "meta/validation.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

namespace shepherd::meta::validation {

namespace {

const char* kLabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const char* kSubdomainFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const char* k1035Fmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
const char* kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const char* kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const char* kConfigMapKeyFmt = "[-._a-zA-Z0-9]+";

bool lowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool alnum(char c) {
  return lowerAlnum(c) || (c >= 'A' && c <= 'Z');
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool isLabel(std::string_view v) {
  if (v.empty() || !lowerAlnum(v.front()) || !lowerAlnum(v.back())) return false;
  for (char c : v)
    if (!lowerAlnum(c) && c != '-') return false;
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool isQualifiedName(std::string_view v) {
  if (v.empty() || !alnum(v.front()) || !alnum(v.back())) return false;
  for (char c : v)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// Hand-written matchers for the fixed formats above (std::regex cost more than the rest
// of a pod's validation); each format string stays the one quoted in messages.
bool matches(std::string_view v, const char* fmt) {
  if (fmt == kLabelFmt) return isLabel(v);
  if (fmt == kSubdomainFmt) {
    if (v.empty()) return false;
    size_t start = 0;
    for (;;) {
      size_t dot = v.find('.', start);
      if (!isLabel(v.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start)))
        return false;
      if (dot == std::string_view::npos) return true;
      start = dot + 1;
    }
  }
  if (fmt == k1035Fmt) return isLabel(v) && v.front() >= 'a' && v.front() <= 'z';
  if (fmt == kQualifiedNameFmt) return isQualifiedName(v);
  if (fmt == kLabelValueFmt) return v.empty() || isQualifiedName(v);
  if (fmt == kConfigMapKeyFmt) {
    if (v.empty()) return false;
    for (char c : v)
      if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
    return true;
  }
  return false;
}

std::string maxLen(size_t n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

std::string regexError(const std::string& msg, const char* fmt, std::initializer_list<const char*> examples) {
  if (examples.size() == 0) return msg + " (regex used for validation is '" + fmt + "')";
  std::string s = msg + " (e.g. ";
  bool first = true;
  for (const char* e : examples) {
    if (!first) s += " or ";
    s += "'" + std::string(e) + "', ";
    first = false;
  }
  return s + "regex used for validation is '" + fmt + "')";
}

}  // namespace

std::string quote(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\a':
          out += "\\a";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\v':
          out += "\\v";
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, then continuation bytes.
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    uint32_t cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    bool valid = len != 0 && i + len <= s.size();
    for (size_t k = 1; valid && k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) valid = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (valid && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
                  cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)))
      valid = false;
    if (!valid) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      ++i;
      continue;
    }
    if (cp <= 0x9F || cp == 0xA0 || cp == 0xAD) {  // C1 controls and the non-printing Latin-1 spaces
      out += "\\u00";
      out += hex[(cp >> 4) & 15];
      out += hex[cp & 15];
    } else {
      out.append(s, i, len);
    }
    i += len;
  }
  out += '"';
  return out;
}

std::vector<std::string> dns1123Label(std::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 63) errs.push_back(maxLen(63));
  if (!matches(v, kLabelFmt))
    errs.push_back(
        regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                   "'-', and must start and end with an alphanumeric character",
                   kLabelFmt, {"my-name", "123-abc"}));
  return errs;
}

std::vector<std::string> dns1123Subdomain(std::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 253) errs.push_back(maxLen(253));
  if (!matches(v, kSubdomainFmt))
    errs.push_back(
        regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                   "'-' or '.', and must start and end with an alphanumeric character",
                   kSubdomainFmt, {"example.com"}));
  return errs;
}

std::vector<std::string> dns1035Label(std::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 63) errs.push_back(maxLen(63));
  if (!matches(v, k1035Fmt))
    errs.push_back(
        regexError("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                   "with an alphabetic character, and end with an alphanumeric character",
                   k1035Fmt, {"my-name", "abc-123"}));
  return errs;
}

std::vector<std::string> pathSegmentName(std::string_view v) {
  std::vector<std::string> errs;
  if (v == "." || v == "..") errs.push_back("may not be '" + std::string(v) + "'");
  if (v.find('/') != std::string_view::npos) errs.push_back("may not contain '/'");
  if (v.find('%') != std::string_view::npos) errs.push_back("may not contain '%'");
  return errs;
}

std::vector<std::string> qualifiedName(std::string_view v) {
  std::vector<std::string> errs;
  std::string_view name = v;
  auto slash = v.find('/');
  if (slash != std::string_view::npos) {
    if (v.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back(
          regexError("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
                     "must start and end with an alphanumeric character",
                     kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errs;
    }
    std::string_view prefix = v.substr(0, slash);
    name = v.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      for (auto& e : dns1123Subdomain(prefix)) errs.push_back("prefix part " + e);
    }
  }
  // An empty name part also fails the pattern: upstream reports both.
  if (name.empty())
    errs.push_back("name part must be non-empty");
  else if (name.size() > 63)
    errs.push_back("name part " + maxLen(63));
  if (!matches(name, kQualifiedNameFmt))
    errs.push_back("name part " + regexError("must consist of alphanumeric characters, '-', '_' or '.', and "
                                             "must start and end with an alphanumeric character",
                                             kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}));
  return errs;
}

std::vector<std::string> labelValue(std::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 63) errs.push_back(maxLen(63));
  if (!matches(v, kLabelValueFmt))
    errs.push_back(
        regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                   "'_' or '.', and must start and end with an alphanumeric character",
                   kLabelValueFmt, {"MyValue", "my_value", "12345"}));
  return errs;
}

std::vector<std::string> configMapKey(std::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 253) errs.push_back(maxLen(253));
  if (!matches(v, kConfigMapKeyFmt))
    errs.push_back(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                              kConfigMapKeyFmt, {"key.name", "KEY_NAME", "key-name"}));
  if (v == ".")
    errs.push_back("must not be '.'");
  else if (v == "..")
    errs.push_back("must not be '..'");
  else if (v.substr(0, 2) == "..")
    errs.push_back("must not start with '..'");
  return errs;
}

std::vector<std::string> portName(std::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 15) errs.push_back(maxLen(15));
  bool charset = !v.empty(), letter = false;
  for (char c : v) {
    if (!lowerAlnum(c) && c != '-') charset = false;
    if (c >= 'a' && c <= 'z') letter = true;
  }
  if (!charset) errs.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!letter) errs.push_back("must contain at least one letter (a-z)");
  if (v.find("--") != std::string_view::npos) errs.push_back("must not contain consecutive hyphens");
  if (!v.empty() && (v.front() == '-' || v.back() == '-'))
    errs.push_back("must not begin or end with a hyphen");
  return errs;
}

std::vector<std::string> envVarName(std::string_view v) {
  std::vector<std::string> errs;
  bool ok = !v.empty() && !(v.front() >= '0' && v.front() <= '9');
  for (char c : v)
    if (!alnum(c) && c != '-' && c != '.' && c != '_') ok = false;
  if (!ok)
    errs.push_back(
        regexError("a valid environment variable name must consist of alphabetic characters, digits, "
                   "'_', '-', or '.', and must not start with a digit",
                   "[-._a-zA-Z][-._a-zA-Z0-9]*", {"my.env-name", "MY_ENV.NAME", "MyEnvName1"}));
  if (v == ".")
    errs.push_back("must not be '.'");
  else if (v == "..")
    errs.push_back("must not be '..'");
  else if (v.substr(0, 2) == "..")
    errs.push_back("must not start with '..'");
  return errs;
}

std::vector<std::string> httpHeaderName(std::string_view v) {
  bool ok = !v.empty();
  for (char c : v)
    if (!alnum(c) && c != '-') ok = false;
  if (ok) return {};
  return {regexError("a valid HTTP header must consist of alphanumeric characters or '-'", "[-A-Za-z0-9]+",
                     {"X-Header-Name"})};
}

std::string inclusiveRange(int64_t lo, int64_t hi) {
  return "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", inclusive";
}

namespace {

// Dotted decimal with up to 255 per part; leading zeros allowed (ParseIPSloppy).
bool parseIPv4(std::string_view v, unsigned char out[4]) {
  int part = 0;
  size_t i = 0;
  while (part < 4) {
    size_t start = i;
    unsigned n = 0;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') {
      n = n * 10 + static_cast<unsigned>(v[i] - '0');
      if (n > 255) return false;
      ++i;
    }
    if (i == start) return false;
    out[part++] = static_cast<unsigned char>(n);
    if (part < 4) {
      if (i >= v.size() || v[i] != '.') return false;
      ++i;
    }
  }
  return i == v.size();
}

// 16 bytes; IPv4 addresses as IPv4-mapped IPv6, as Go holds them.
bool parseIP(std::string_view v, unsigned char out[16], int& family) {
  unsigned char v4[4];
  if (parseIPv4(v, v4)) {
    std::memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    std::memcpy(out + 12, v4, 4);
    family = 4;
    return true;
  }
  if (v.find(':') == std::string_view::npos || v.size() > 45) return false;
  if (inet_pton(AF_INET6, std::string(v).c_str(), out) != 1) return false;
  family = 6;
  return true;
}

bool isV4Mapped(const unsigned char ip[16]) {
  for (int i = 0; i < 10; ++i)
    if (ip[i]) return false;
  return ip[10] == 0xff && ip[11] == 0xff;
}

}  // namespace

int ipFamily(std::string_view v) {
  unsigned char ip[16];
  int family = 0;
  return parseIP(v, ip, family) ? family : 0;
}

bool isCIDR(std::string_view v) {
  auto slash = v.find('/');
  if (slash == std::string_view::npos) return false;
  int family = ipFamily(v.substr(0, slash));
  std::string_view bits = v.substr(slash + 1);
  if (!family || bits.empty() || bits.size() > 3) return false;
  int n = 0;
  for (char c : bits) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  return n <= (family == 4 ? 32 : 128);
}

std::vector<std::string> nonSpecialIP(std::string_view v) {
  unsigned char ip[16];
  int family = 0;
  if (!parseIP(v, ip, family)) return {"must be a valid IP address"};
  std::vector<std::string> errs;
  bool v4 = isV4Mapped(ip);
  bool zero = true;
  for (int i = v4 ? 12 : 0; i < 16; ++i)
    if (ip[i]) zero = false;
  if (zero) errs.push_back("may not be unspecified (" + std::string(v) + ")");
  bool loopback = v4 ? ip[12] == 127 : [&] {
    for (int i = 0; i < 15; ++i)
      if (ip[i]) return false;
    return ip[15] == 1;
  }();
  if (loopback) errs.push_back("may not be in the loopback range (127.0.0.0/8, ::1/128)");
  bool linkLocal = v4 ? (ip[12] == 169 && ip[13] == 254) : (ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80);
  if (linkLocal) errs.push_back("may not be in the link-local range (169.254.0.0/16, fe80::/10)");
  bool llMulticast =
      v4 ? (ip[12] == 224 && ip[13] == 0 && ip[14] == 0) : (ip[0] == 0xff && (ip[1] & 0x0f) == 0x02);
  if (llMulticast) errs.push_back("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)");
  return errs;
}

}  // namespace shepherd::meta::validation
