#include "agent/recovery/outbox.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/base/agent_json.h"
#include "common/status.h"

namespace paceline::agent {

absl::StatusOr<std::unique_ptr<Outbox>> Outbox::Open(const std::string& dir) {
  RETURN_IF_ERROR(MakeDirs(dir, 0700));
  std::vector<std::string> lines;
  ASSIGN_OR_RETURN(std::unique_ptr<AppendLog> log, AppendLog::Open(dir + "/events", &lines));
  std::unique_ptr<Outbox> ob(new Outbox(std::move(log)));
  for (const std::string& line : lines) {
    absl::string_view rest = absl::string_view(line).substr(std::min<size_t>(2, line.size()));
    uint64_t n = 0;
    if (absl::StartsWith(line, "E ")) {
      absl::StatusOr<TaskEvent> e = TaskEventFromJson(rest);
      if (!e.ok()) return WithContext(e.status(), ob->log_->path());
      ob->next_seq_ = std::max(ob->next_seq_, e->seq + 1);
      ob->pending_.push_back({std::move(*e), static_cast<int64_t>(line.size() + 1)});
    } else if (absl::StartsWith(line, "A ") && absl::SimpleAtoi(rest, &n)) {
      ob->acked_ = std::max(ob->acked_, n);
    } else if (absl::StartsWith(line, "N ") && absl::SimpleAtoi(rest, &n)) {
      ob->next_seq_ = std::max(ob->next_seq_, n);
    }
  }
  ob->next_seq_ = std::max(ob->next_seq_, ob->acked_ + 1);
  while (!ob->pending_.empty() && ob->pending_.front().event.seq <= ob->acked_) {
    ob->pending_.pop_front();
  }
  for (const Entry& e : ob->pending_) ob->pending_bytes_ += e.bytes;
  return ob;
}

absl::StatusOr<uint64_t> Outbox::Append(TaskEvent event) {
  event.seq = next_seq_;
  std::string line = absl::StrCat("E ", TaskEventToJson(event));
  RETURN_IF_ERROR(log_->Append(line));
  ++next_seq_;
  pending_bytes_ += static_cast<int64_t>(line.size() + 1);
  pending_.push_back({std::move(event), static_cast<int64_t>(line.size() + 1)});
  dirty_ = true;
  return next_seq_ - 1;
}

std::vector<TaskEvent> Outbox::Pending(size_t max) const {
  std::vector<TaskEvent> out;
  for (const Entry& e : pending_) {
    if (out.size() >= max) break;
    out.push_back(e.event);
  }
  return out;
}

absl::Status Outbox::Ack(uint64_t seq) {
  if (seq >= next_seq_) {
    return absl::InvalidArgumentError(
        absl::StrCat("ack of event ", seq, " which does not exist yet (last is ", last_seq(), ")"));
  }
  if (seq <= acked_) return absl::OkStatus();  // a repeated or stale ack
  RETURN_IF_ERROR(log_->Append(absl::StrCat("A ", seq)));
  acked_ = seq;
  dirty_ = true;
  while (!pending_.empty() && pending_.front().event.seq <= acked_) {
    pending_bytes_ -= pending_.front().bytes;
    pending_.pop_front();
  }
  return absl::OkStatus();
}

absl::Status Outbox::Sync() {
  RETURN_IF_ERROR(log_->Sync());
  dirty_ = false;
  return MaybeCompact();
}

absl::Status Outbox::MaybeCompact() {
  if (log_->bytes() < (1 << 20) || log_->bytes() < 4 * pending_bytes_) return absl::OkStatus();
  std::vector<std::string> lines;
  lines.push_back(absl::StrCat("N ", next_seq_));
  lines.push_back(absl::StrCat("A ", acked_));
  for (const Entry& e : pending_) lines.push_back(absl::StrCat("E ", TaskEventToJson(e.event)));
  return log_->Rewrite(lines);
}

}  // namespace paceline::agent
