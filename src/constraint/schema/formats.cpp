#include "constraint/schema/formats.hpp"

#include <string>
#include <vector>

namespace nextok::constraint {

namespace {

std::string group(const std::vector<std::string>& alts) {
  std::string out = "(?:";
  for (size_t k = 0; k < alts.size(); ++k) out += (k ? "|" : "") + alts[k];
  return out + ")";
}

std::string count(int lo, int hi) {
  std::string out = "{";
  out += std::to_string(lo);
  out += ',';
  out += std::to_string(hi);
  out += '}';
  return out;
}

// --- Dates and times (RFC 3339 section 5.6) ---------------------------------

std::string date() {
  // Year 0000 does not exist (Python's date rejects it).
  const std::string year = "(?:\\d{3}[1-9]|\\d\\d[1-9]0|\\d[1-9]00|[1-9]000)";
  // Divisible by 4 and not by 100, or by 400.
  const std::string by4 = "(?:0[48]|[2468][048]|[13579][26])";
  const std::string leap = "(?:\\d\\d" + by4 + "|" + by4 + "00)";
  const std::string month_day =
      group({"(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])", "(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)",
             "02-(?:0[1-9]|1\\d|2[0-8])"});
  return group({year + "-" + month_day, leap + "-02-29"});
}

std::string time() {
  // Seconds stop at 59: a leap second is valid only at the end of some UTC
  // days, which a pattern cannot know.
  const std::string hour = "(?:[01]\\d|2[0-3])";
  return hour + ":[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:[Zz]|[+-]" + hour + ":[0-5]\\d)";
}

// --- IP addresses -----------------------------------------------------------

std::string ipv4() {
  const std::string octet = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
  return octet + "(?:\\." + octet + "){3}";
}

// RFC 4291 section 2.2: eight groups, "::" standing for one or more zero
// groups, and the last two groups optionally written as an IPv4 address.
std::string ipv6() {
  const std::string h = "[0-9A-Fa-f]{1,4}";
  const std::string v4 = ipv4();
  // n groups joined by ':' (n >= 1).
  auto groups = [&](int n) {
    return n == 1 ? h : h + "(?::" + h + "){" + std::to_string(n - 1) + "}";
  };
  std::vector<std::string> alts = {"(?:" + h + ":){7}" + h, "(?:" + h + ":){6}" + v4};
  for (int before = 0; before <= 7; ++before) {
    const std::string head = (before ? groups(before) : "") + "::";
    const int after = 7 - before;  // groups "::" leaves room for
    alts.push_back(after ? head + "(?:" + h + "(?::" + h + ")" + count(0, after - 1) + ")?" : head);
    if (before <= 5) alts.push_back(head + "(?:" + h + ":)" + count(0, 5 - before) + v4);
  }
  return group(alts);
}

// --- Host names -------------------------------------------------------------

// One RFC 1123 label of 1..max_len (>= 5) characters: letters, digits and
// inner hyphens, and not "--" at positions 3-4 (reserved for A-labels).
std::string label(int max_len) {
  const std::string a = "[A-Za-z0-9]", d = "[A-Za-z0-9-]";
  return a + "(?:" + d + "{0,2}" + a + "|" + d + "(?:" + a + d + "|-" + a + ")" + d +
         count(0, max_len - 5) + a + ")?";
}

// Dot-separated labels totalling at most max_total characters, through
// schedules (labels of at most 63, 30 or 14 characters, as many as fit).
std::string hostname(int max_total) {
  std::vector<std::string> alts;
  for (int len : {63, 30, 14}) {
    const int n = (max_total + 1) / (len + 1);
    const std::string l = label(len);
    alts.push_back(l + "(?:\\." + l + ")" + count(0, n - 1));
  }
  return group(alts);
}

// --- Email (RFC 5321 Mailbox, dot-atom local part) --------------------------

// idn: RFC 6531's local part, where every non-ASCII character is text too
// (the domain stays an ASCII host name or an address literal).
std::string email(bool idn) {
  const std::string wide = idn ? "|[^\\x00-\\x7F]" : "";
  const std::string atext = "(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]" + wide + ")";
  // A dot-string, or a quoted string (section 4.1.2: printable ASCII, '"'
  // and '\\' only as quoted pairs); 64 octets at most either way. A pair
  // is two octets: up to 62 plain ones, or 31 characters when pairs occur
  // (a longer quoted part with pairs is refused rather than miscounted).
  const std::string qtext = "(?:[ !#-\\[\\]-~]" + wide + ")";
  const std::string quoted =
      group({"\"" + qtext + "{0,62}\"", "\"(?:" + qtext + "|\\\\[ -~]){0,31}\""});
  const std::string local =
      group({atext + "{1,64}", atext + "(?:\\.?" + atext + "){0,31}", quoted});
  // A domain, or an address literal (section 4.1.3): [IPv4] or [IPv6:...].
  // 254 characters in all: 64 + "@" + 189.
  const std::string domain =
      group({hostname(189), "\\[" + ipv4() + "\\]", "\\[IPv6:" + ipv6() + "\\]"});
  return local + "@" + domain;
}

// --- URI (RFC 3986 section 3, absolute with optional fragment) --------------

// RFC 3986 pieces shared by uri and uri-reference.
struct Rfc3986 {
  std::string pct = "%[0-9A-Fa-f]{2}";
  // unreserved and sub-delims; each class below ends with '-'.
  std::string unreserved_sub = "A-Za-z0-9._~!$&'()*+,;=";
  std::string pchar = "(?:[" + unreserved_sub + ":@-]|" + pct + ")";
  std::string pchar_nc = "(?:[" + unreserved_sub + "@-]|" + pct + ")";  // no ':'
  std::string scheme = "[A-Za-z][A-Za-z0-9+.-]*";
  std::string userinfo = "(?:[" + unreserved_sub + ":-]|" + pct + ")*";
  std::string reg_name = "(?:[" + unreserved_sub + "-]|" + pct + ")*";
  std::string segment = pchar + "*", segment_nz = pchar + "+";
  std::string query = "(?:" + pchar + "|[/?])*";

  // IP-literal: an IPv6 address or IPvFuture ("v" 1*HEXDIG "." 1*( unreserved
  // / sub-delims / ":" )) in brackets.
  std::string ip_future = "v[0-9A-Fa-f]+\\.[" + unreserved_sub + ":-]+";
  std::string authority() const {
    const std::string host = group({"\\[" + group({ipv6(), ip_future}) + "\\]", reg_name});
    return "(?:" + userinfo + "@)?" + host + "(?::\\d*)?";
  }
  std::string tail() const { return "(?:\\?" + query + ")?(?:#" + query + ")?"; }
  // "//" authority path-abempty, path-absolute, and the empty path.
  std::vector<std::string> shared_paths() const {
    return {"//" + authority() + "(?:/" + segment + ")*",
            "/(?:" + segment_nz + "(?:/" + segment + ")*)?", ""};
  }
};

std::string uri() {
  const Rfc3986 r;
  std::vector<std::string> hier = r.shared_paths();
  hier.push_back(r.segment_nz + "(?:/" + r.segment + ")*");  // path-rootless
  return r.scheme + ":" + group(hier) + r.tail();
}

// A URI or a relative reference, whose first segment has no ':' (it would
// read as a scheme).
std::string uri_reference() {
  const Rfc3986 r;
  std::vector<std::string> rel = r.shared_paths();
  rel.push_back(r.pchar_nc + "+(?:/" + r.segment + ")*");  // path-noscheme
  return group({uri(), group(rel) + r.tail()});
}

// RFC 6901: "" or "/"-separated tokens where "~" only starts "~0" or "~1".
std::string json_pointer() {
  return "(?:/(?:[^/~]|~[01])*)*";
}

// A non-negative integer, then "#" or a non-empty JSON pointer (a bare
// integer is left out: validators disagree). No digit after a 0 in the
// integer: Python jsonschema refuses such prefixes (it reads "100/a" as
// having a leading zero).
std::string relative_json_pointer() {
  return "(?:0|[1-9]+0?)(?:#|(?:/(?:[^/~]|~[01])*)*)";
}

// RFC 6570 (level 4) in ASCII: literals outside the excluded characters,
// percent-encodings, and expressions with the operators + # . / ; ? & over
// variable names with a prefix (:1-9999) or explode (*) modifier.
std::string uri_template() {
  const std::string pct = "%[0-9A-Fa-f]{2}";
  const std::string literal = "(?:[!#$&()*+,./0-9:;=?@A-Z\\[\\]_a-z~-]|" + pct + ")";
  const std::string varchar = "(?:[A-Za-z0-9_]|" + pct + ")";
  const std::string varspec = varchar + "(?:\\.?" + varchar + ")*(?::[1-9][0-9]{0,3}|\\*)?";
  const std::string expression = "\\{[+#./;?&]?" + varspec + "(?:," + varspec + ")*\\}";
  return "(?:" + literal + "|" + expression + ")*";
}

// RFC 3339 appendix A: P, then a week count, or date parts in Y M D order
// (each optional part continues the one before) and/or T with H M S.
std::string duration() {
  // Built by appending: GCC 12 warns (-Wrestrict) on "literal" + temporary.
  const std::string n = "\\d+";
  const std::string second = n + "S";
  const std::string minute = n + "M(?:" + second + ")?";
  const std::string hour = n + "H(?:" + minute + ")?";
  std::string time = "T";
  time += group({hour, minute, second});
  const std::string day = n + "D";
  const std::string month = n + "M(?:" + day + ")?";
  const std::string year = n + "Y(?:" + month + ")?";
  std::string date = group({day, month, year});
  date += "(?:" + time + ")?";
  std::string out = "P";
  out += group({date, time, n + "W"});
  return out;
}

std::string uuid() {
  const std::string x = "[0-9A-Fa-f]";
  return x + "{8}-" + x + "{4}-" + x + "{4}-" + x + "{4}-" + x + "{12}";
}

}  // namespace

std::optional<std::string> format_regex(std::string_view format) {
  if (format == "date-time") return date() + "[Tt]" + time();
  if (format == "date") return date();
  if (format == "time") return time();
  if (format == "email" || format == "idn-email") return email(format == "idn-email");
  if (format == "hostname" || format == "idn-hostname") return hostname(253);
  if (format == "ipv4") return ipv4();
  if (format == "ipv6") return ipv6();
  if (format == "uri") return uri();
  if (format == "uri-reference") return uri_reference();
  if (format == "json-pointer") return json_pointer();
  if (format == "relative-json-pointer") return relative_json_pointer();
  if (format == "uri-template") return uri_template();
  if (format == "uuid") return uuid();
  if (format == "duration") return duration();
  if (format == "regex") return regex_syntax();
  return std::nullopt;
}

bool format_without_syntax(std::string_view format) {
  return format == "byte" || format == "binary" || format == "password";
}

bool format_is_standard(std::string_view format) {
  static constexpr std::string_view kDefined[] = {
      // draft 2020-12 / 2019-09 (drafts 4-7 define subsets of these)
      "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
      "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
      "json-pointer", "relative-json-pointer", "regex",
      // draft 3
      "utc-millisec", "color", "style", "phone", "ip-address", "host-name"};
  for (std::string_view f : kDefined)
    if (f == format) return true;
  return false;
}

}  // namespace nextok::constraint
