#include "store/row_codec.h"

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "spec/yaml_spec.h"

namespace paceline::store {
namespace {

using Json = nlohmann::json;

int64_t Micros(absl::Time t) {
  return t == absl::InfinitePast() ? INT64_MIN : absl::ToUnixMicros(t);
}
absl::Time FromMicros(int64_t us) {
  return us == INT64_MIN ? absl::InfinitePast() : absl::FromUnixMicros(us);
}

absl::Status Bad(const std::string& what) {
  return absl::DataLossError(absl::StrCat("stored job updates: ", what));
}

}  // namespace

std::string EncodeOldSpecs(const std::map<uint64_t, JobSpec>& specs) {
  Json j = Json::object();
  for (const auto& [version, spec] : specs) j[absl::StrCat(version)] = PrintJobSpec(spec);
  return j.dump();
}

absl::StatusOr<std::map<uint64_t, JobSpec>> DecodeOldSpecs(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::DataLossError("stored job versions: not a JSON object");
  }
  std::map<uint64_t, JobSpec> out;
  for (const auto& [key, value] : j.items()) {
    uint64_t version = 0;
    if (!absl::SimpleAtoi(key, &version) || !value.is_string()) {
      return absl::DataLossError(absl::StrCat("stored job versions: bad entry '", key, "'"));
    }
    absl::StatusOr<JobSpec> spec =
        ParseJobSpec(value.get<std::string>(), absl::StrCat("stored job version ", key));
    if (!spec.ok()) return absl::DataLossError(spec.status().message());
    out.emplace(version, *std::move(spec));
  }
  return out;
}

std::string EncodeUpdates(const std::vector<records::UpdateRecord>& updates) {
  Json out = Json::array();
  for (const records::UpdateRecord& u : updates) {
    out.push_back({{"id", u.id},
                   {"from", u.from_version},
                   {"to", u.to_version},
                   {"state", static_cast<int>(u.state)},
                   {"paused", u.paused},
                   {"batch_size", u.options.batch_size},
                   {"max_failures", u.options.max_failures},
                   {"rollback_on_failure", u.options.rollback_on_failure},
                   {"in_place", u.options.in_place},
                   {"min_healthy_us", absl::ToInt64Microseconds(u.options.min_healthy_time)},
                   {"instances", u.instances},
                   {"progress", records::ProgressCodes(u.progress)},
                   {"from_instances", u.from_instances},
                   {"to_instances", u.to_instances},
                   {"started_us", Micros(u.started_at)},
                   {"finished_us", Micros(u.finished_at)},
                   {"message", u.message}});
  }
  return out.dump();
}

absl::StatusOr<std::vector<records::UpdateRecord>> DecodeUpdates(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return Bad("not a JSON array");
  std::vector<records::UpdateRecord> out;
  for (const Json& e : j) {
    try {
      records::UpdateRecord u;
      u.id = e.at("id").get<uint64_t>();
      u.from_version = e.at("from").get<uint64_t>();
      u.to_version = e.at("to").get<uint64_t>();
      int state = e.at("state").get<int>();
      if (state < 0 || state > static_cast<int>(records::UpdateState::kAborted)) {
        return Bad(absl::StrCat("update ", u.id, ": unknown state ", state));
      }
      u.state = static_cast<records::UpdateState>(state);
      u.paused = e.at("paused").get<bool>();
      u.options.batch_size = e.at("batch_size").get<uint32_t>();
      u.options.max_failures = e.at("max_failures").get<uint32_t>();
      u.options.rollback_on_failure = e.at("rollback_on_failure").get<bool>();
      u.options.in_place = e.at("in_place").get<bool>();
      u.options.min_healthy_time = absl::Microseconds(e.at("min_healthy_us").get<int64_t>());
      u.instances = e.at("instances").get<std::vector<uint32_t>>();
      for (char c : e.at("progress").get<std::string>()) {
        std::optional<records::EntryProgress> p = records::EntryProgressFromCode(c);
        if (!p) {
          return Bad(absl::StrCat("update ", u.id, ": progress code '", std::string(1, c),
                                  "' is not one of .>DF"));
        }
        u.progress.push_back(*p);
      }
      u.from_instances = e.at("from_instances").get<uint32_t>();
      u.to_instances = e.at("to_instances").get<uint32_t>();
      u.started_at = FromMicros(e.at("started_us").get<int64_t>());
      u.finished_at = FromMicros(e.at("finished_us").get<int64_t>());
      u.message = e.at("message").get<std::string>();
      if (u.progress.size() != u.instances.size()) {
        return Bad(absl::StrCat("update ", u.id, ": progress does not match its instances"));
      }
      out.push_back(std::move(u));
    } catch (const Json::exception& ex) {
      return Bad(ex.what());
    }
  }
  return out;
}

std::string EncodeLabels(const std::map<std::string, std::string>& labels) {
  return Json(labels).dump();
}

absl::StatusOr<std::map<std::string, std::string>> DecodeLabels(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (!j.is_object()) return absl::DataLossError("labels are not a JSON object");
  std::map<std::string, std::string> labels;
  for (auto& [k, v] : j.items()) {
    if (!v.is_string()) return absl::DataLossError(absl::StrCat("label ", k, " is not a string"));
    labels[k] = v.get<std::string>();
  }
  return labels;
}

}  // namespace paceline::store
