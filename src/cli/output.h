#pragma once
// How client commands print what the master answered, in the format the user chose with
// -o/--output: `table` (the default: each command's own table or lines, built with cli/table.h),
// `json` (the response message as indented JSON, field names as in the proto) or `yaml` (the same
// document as block YAML). A command calls PrintStructured first and prints its table only when
// it returns false, so every command supports all three the same way.
//
// Thread-safety: pure functions over the given stream.

#include <iostream>

#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

#include "cli/context.h"

namespace paceline::cli {

// Prints `m` as JSON or YAML when `flags` ask for one and returns true; false for a table.
bool PrintStructured(const ClientFlags& flags, const google::protobuf::Message& m,
                     std::ostream& out = std::cout);
// The same for a document the command composed itself.
bool PrintStructured(const ClientFlags& flags, const nlohmann::json& doc,
                     std::ostream& out = std::cout);
// A protobuf message as indented JSON (snake_case field names, defaults included).
void PrintProtoJson(const google::protobuf::Message& m, std::ostream& out = std::cout);
// The same document as block-style YAML.
void PrintProtoYaml(const google::protobuf::Message& m, std::ostream& out = std::cout);

}  // namespace paceline::cli
