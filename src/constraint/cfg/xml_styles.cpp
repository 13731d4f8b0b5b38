#include "constraint/cfg/xml_styles.hpp"

namespace nextok::constraint::cfg {

std::optional<XmlStyle> xml_style(std::string_view name) {
  if (name == "qwen_xml") return XmlStyle{"<parameter=", ">", "", "</parameter>", ""};
  if (name == "minimax_xml") return XmlStyle{"<parameter name=\"", "\">", "", "</parameter>", ""};
  if (name == "glm_xml")
    return XmlStyle{"<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", ""};
  // DeepSeek V3.2 and V4 (U+FF5C FULLWIDTH VERTICAL LINE around DSML); V4.1
  // puts a space after the second.
  if (name == "deepseek_xml")
    return XmlStyle{"<\uFF5CDSML\uFF5Cparameter name=\"", "\" string=\"true\">", "",
                    "</\uFF5CDSML\uFF5Cparameter>", "\" string=\"false\">"};
  if (name == "deepseek_v4_1_xml")
    return XmlStyle{"<\uFF5CDSML\uFF5C parameter name=\"", "\" string=\"true\">", "",
                    "</\uFF5CDSML\uFF5C parameter>", "\" string=\"false\">"};
  return std::nullopt;
}

}  // namespace nextok::constraint::cfg
