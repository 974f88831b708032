#include "cli/output.h"

#include <google/protobuf/util/json_util.h>
#include <yaml-cpp/yaml.h>

#include <string>

namespace paceline::cli {
namespace {

std::string JsonOf(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(m, &json, options);
  return json;
}

// JSON is YAML in flow style; print every collection in block style instead.
void ToBlock(YAML::Node node) {
  if (node.IsMap() || node.IsSequence()) {
    node.SetStyle(YAML::EmitterStyle::Block);
    for (auto it = node.begin(); it != node.end(); ++it) ToBlock(node.IsMap() ? it->second : *it);
  }
}

void PrintJsonText(const std::string& json, std::ostream& out) {
  out << json;
  if (json.empty() || json.back() != '\n') out << "\n";
}

void PrintYamlOfJson(const std::string& json, std::ostream& out) {
  YAML::Node doc = YAML::Load(json);
  ToBlock(doc);
  YAML::Emitter emitter;
  emitter << doc;
  out << emitter.c_str() << "\n";
}

bool PrintText(const ClientFlags& flags, const std::string& json, std::ostream& out) {
  switch (flags.format()) {
    case OutputFormat::kJson:
      PrintJsonText(json, out);
      return true;
    case OutputFormat::kYaml:
      PrintYamlOfJson(json, out);
      return true;
    case OutputFormat::kTable:
      return false;
  }
  return false;
}

}  // namespace

bool PrintStructured(const ClientFlags& flags, const google::protobuf::Message& m,
                     std::ostream& out) {
  return flags.format() != OutputFormat::kTable && PrintText(flags, JsonOf(m), out);
}

bool PrintStructured(const ClientFlags& flags, const nlohmann::json& doc, std::ostream& out) {
  return flags.format() != OutputFormat::kTable &&
         PrintText(
             // Invalid UTF-8 (a file name, say) is replaced,
             // not thrown.
             flags, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace), out);
}

void PrintProtoJson(const google::protobuf::Message& m, std::ostream& out) {
  PrintJsonText(JsonOf(m), out);
}

void PrintProtoYaml(const google::protobuf::Message& m, std::ostream& out) {
  PrintYamlOfJson(JsonOf(m), out);
}

}  // namespace paceline::cli
