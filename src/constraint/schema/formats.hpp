// Regular expressions for JSON Schema `format` values (draft 2020-12), for
// full-match use with Dfa::compile over the decoded string. Each pattern is
// sound: every string it matches is valid for the format under the draft
// 2020-12 definitions and under Python jsonschema's FormatChecker with its
// format extras. Where exactness would cost too many DFA states or needs
// more than syntax, the pattern is a conservative subset:
//
// - date-time, time: no leap second (seconds 00-59); "T"/"Z" in either case.
//   date and date-time know leap years exactly (Feb 29 only in leap years).
// - hostname (RFC 1123): ASCII labels of letters, digits and inner hyphens
//   without "--" at positions 3-4 (so no punycode "xn--" labels, whose
//   validity is not syntactic), and no trailing dot. The 253-character limit
//   is kept by label-count schedules: up to 3 labels of up to 63 characters,
//   up to 8 labels of up to 30, or up to 16 labels of up to 14.
// - email: a dot-atom local part (up to 64 characters without dots; with
//   dots, up to 32 non-dot characters) or a quoted string (up to 62 plain
//   characters, or 31 with quoted pairs) "@" a hostname-like domain, kept
//   within RFC 5321's 254-character mailbox (domain schedules 2×63, 6×30 or
//   12×14), or an address literal ([IPv4], [IPv6:...]).
// - uri: RFC 3986 absolute URI (scheme, optional authority with userinfo,
//   reg-name, [IPv6] or [IPvFuture] host and port, path, query, fragment),
//   ASCII with percent-encoding. uri-reference: such a URI or an RFC 3986
//   relative reference.
// - json-pointer: RFC 6901; relative-json-pointer: a non-negative integer
//   with no digit after a 0 (Python jsonschema's reading), then nothing, "#"
//   or a JSON pointer (no index manipulation).
// - uri-template: RFC 6570 level 4 in ASCII (no reserved operators = , ! @ |).
// - ipv4: dotted decimal without leading zeros; ipv6: exactly the RFC 4291
//   text forms (1-4 hex digits per group, "::", embedded IPv4), no zone id.
// - idn-hostname: the ASCII pattern above (a sound subset); idn-email: the
//   e-mail pattern with any non-ASCII character as local-part text (RFC
//   6531), the domain still ASCII.
// - uuid: 8-4-4-4-12 hex digits in either case.
// - duration: exactly the RFC 3339 appendix A grammar (no fractions, parts
//   in order, upper case), which ISO 8601 readers accept too.
// - regex: ECMA-262 syntax valid with and without the u flag and for
//   Python's re, groups nested at most 3 deep (regex_format.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nextok::constraint {

// The pattern for a `format` value; nullopt for formats without one (the
// caller then leaves the string unconstrained or reports it, by policy).
std::optional<std::string> format_regex(std::string_view format);

// OpenAPI formats that validators do not check (byte: base64, binary: any
// octets, password: a UI hint): they constrain nothing, so a Kubernetes
// `byte` field takes what any validator takes.
bool format_without_syntax(std::string_view format);

// Formats some JSON Schema draft defines. Validators check only these (and
// may decline even those); any other name is an annotation that no
// validator enforces, so it constrains nothing.
bool format_is_standard(std::string_view format);

// The pattern of the `regex` format.
std::string regex_syntax();

}  // namespace nextok::constraint
