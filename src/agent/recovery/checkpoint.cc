#include "agent/recovery/checkpoint.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/base/agent_json.h"
#include "common/status.h"

namespace paceline::agent {

absl::StatusOr<std::unique_ptr<Checkpoint>> Checkpoint::Open(const std::string& dir) {
  RETURN_IF_ERROR(MakeDirs(dir, 0700));
  std::vector<std::string> lines;
  ASSIGN_OR_RETURN(std::unique_ptr<AppendLog> log, AppendLog::Open(dir + "/runs", &lines));
  std::unique_ptr<Checkpoint> cp(new Checkpoint(std::move(log)));
  for (std::string& line : lines) {
    if (absl::StartsWith(line, "P ")) {
      absl::StatusOr<RunContext> ctx = RunContextFromJson(absl::string_view(line).substr(2));
      if (!ctx.ok()) {
        ++cp->skipped_;
        continue;
      }
      cp->live_[ctx->key] = std::move(line);
    } else if (absl::StartsWith(line, "D ")) {
      cp->live_.erase(line.substr(2));
    } else {
      ++cp->skipped_;
    }
  }
  for (const auto& [key, line] : cp->live_) {
    cp->live_bytes_ += static_cast<int64_t>(line.size() + 1);
    cp->loaded_.push_back(*RunContextFromJson(absl::string_view(line).substr(2)));
  }
  return cp;
}

absl::Status Checkpoint::Put(const RunContext& ctx) {
  std::string line = absl::StrCat("P ", RunContextToJson(ctx));
  RETURN_IF_ERROR(log_->Append(line));
  std::string& slot = live_[ctx.key];
  live_bytes_ += static_cast<int64_t>(line.size()) - static_cast<int64_t>(slot.size());
  slot = std::move(line);
  return absl::OkStatus();
}

absl::Status Checkpoint::Remove(const std::string& key) {
  auto it = live_.find(key);
  if (it == live_.end()) return absl::OkStatus();
  RETURN_IF_ERROR(log_->Append(absl::StrCat("D ", key)));
  live_bytes_ -= static_cast<int64_t>(it->second.size() + 1);
  live_.erase(it);
  return absl::OkStatus();
}

absl::Status Checkpoint::Sync() {
  RETURN_IF_ERROR(log_->Sync());
  return MaybeCompact();
}

absl::Status Checkpoint::MaybeCompact() {
  if (log_->bytes() < (4 << 20) || log_->bytes() < 4 * live_bytes_) return absl::OkStatus();
  std::vector<std::string> lines;
  lines.reserve(live_.size());
  for (const auto& [key, line] : live_) lines.push_back(line);
  return log_->Rewrite(lines);
}

}  // namespace paceline::agent
