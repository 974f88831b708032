#include "agentd/exec_sessions.h"

#include "absl/strings/str_cat.h"

namespace paceline::agentd {

ExecSessions::~ExecSessions() {
  CancelAll();
  absl::flat_hash_map<uint64_t, std::unique_ptr<Session>> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  for (auto& [id, s] : sessions) {
    if (s->thread.joinable()) s->thread.join();
  }
}

void ExecSessions::Push(v1::AgentMessage msg) {
  {
    absl::MutexLock lock(&mu_);
    outbox_.push_back(std::move(msg));
  }
  wake_();
}

void ExecSessions::Start(const v1::ExecStart& start, absl::StatusOr<agent::ExecCommand> command) {
  const uint64_t id = start.session();
  auto fail = [&](const absl::Status& s) {
    v1::AgentMessage msg;
    msg.mutable_exec_output()->set_session(id);
    msg.mutable_exec_output()->set_error(std::string(s.message()));
    Push(std::move(msg));
  };
  if (!command.ok()) return fail(command.status());
  agent::TerminalSize size;
  if (start.rows() > 0 && start.cols() > 0) {
    size.rows = static_cast<uint16_t>(std::min<uint32_t>(start.rows(), 0xffff));
    size.cols = static_cast<uint16_t>(std::min<uint32_t>(start.cols(), 0xffff));
  }
  absl::StatusOr<std::unique_ptr<agent::ExecProcess>> process =
      agent::ExecProcess::Start(*command, start.tty(), size);
  if (!process.ok()) return fail(process.status());
  auto s = std::make_unique<Session>();
  s->session = std::make_unique<agent::ExecSession>(
      *std::move(process), start.window(), [this, id](agent::ExecEvent e) {
        v1::AgentMessage msg;
        v1::ExecOutput* out = msg.mutable_exec_output();
        out->set_session(id);
        if (!e.error.empty()) {
          out->set_error(std::move(e.error));
          Push(std::move(msg));
          return;
        }
        out->set_started(e.started);
        out->set_stdout(std::move(e.out));
        out->set_stderr(std::move(e.err));
        out->set_credit(e.stdin_credit);
        if (e.exit) {
          out->set_exited(true);
          out->set_exit_code(e.exit->exit_code);
          out->set_signal(e.exit->signal);
        }
        Push(std::move(msg));
      });
  Session* raw = s.get();
  absl::MutexLock lock(&mu_);
  if (sessions_.contains(id)) return;  // a repeated start: the first one runs
  raw->thread = std::thread([this, raw] {
    raw->session->Run();
    absl::MutexLock lock(&mu_);
    raw->done = true;
  });
  sessions_[id] = std::move(s);
}

void ExecSessions::Input(const v1::ExecInput& in) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(in.session());
  if (it == sessions_.end()) return;
  agent::ExecInputs post;
  post.stdin = in.stdin();
  post.close_stdin = in.close_stdin();
  if (in.rows() > 0 && in.cols() > 0) {
    post.resize = agent::TerminalSize{static_cast<uint16_t>(std::min<uint32_t>(in.rows(), 0xffff)),
                                      static_cast<uint16_t>(std::min<uint32_t>(in.cols(), 0xffff))};
  }
  post.output_credit = in.credit();
  post.cancel = in.cancel();
  it->second->session->Post(std::move(post));
}

void ExecSessions::CancelAll() {
  absl::MutexLock lock(&mu_);
  for (auto& [id, s] : sessions_) s->session->Cancel();
  outbox_.clear();  // for a master that is gone
}

std::vector<v1::AgentMessage> ExecSessions::Take() {
  std::vector<std::unique_ptr<Session>> ended;
  std::vector<v1::AgentMessage> out;
  {
    absl::MutexLock lock(&mu_);
    out.swap(outbox_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second->done) {
        ended.push_back(std::move(it->second));
        sessions_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (auto& s : ended) s->thread.join();
  return out;
}

size_t ExecSessions::open() const {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

}  // namespace paceline::agentd
