// The argument styles of XGrammar's structural tags (json_schema's
// `style`): how a tool call's parameters are written when not as a JSON
// object. %json reads them as its x-nextok `style` (json_embed.cpp).
#pragma once

#include <optional>
#include <string_view>

namespace nextok::constraint::cfg {

// before + name + after, then value_open (after whitespace), the value,
// close. A style that marks strings apart (after_other not empty) writes a
// string value as after + raw text + close, any other as after_other +
// whitespace + JSON + whitespace + close.
struct XmlStyle {
  std::string_view before, after, value_open, close, after_other;
};

// Every style name that is read, for errors.
inline constexpr std::string_view kJsonStyleNames =
    "json, qwen_xml, minimax_xml, glm_xml, deepseek_xml, deepseek_v4_1_xml";

// The XML style called `name`; nullopt for "json" and unknown names.
std::optional<XmlStyle> xml_style(std::string_view name);

// "json" or an XML style.
inline bool is_json_style(std::string_view name) {
  return name == "json" || xml_style(name).has_value();
}

}  // namespace nextok::constraint::cfg
