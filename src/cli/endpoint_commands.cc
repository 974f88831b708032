// `paceline job endpoints JOB [-w]`: where a service's instances take traffic
// (JobService.GetEndpoints / WatchEndpoints; docs/services.md, "Endpoints"): a table of its
// instances placed on a host — INSTANCE, ADDRESS, PORTS (name=port), READY, WHY — under a line
// with the job's DNS name. `-o json|yaml` prints the answer. `-w` follows: the table again on
// every change (with `-o json`, one JSON object a line), until interrupted or the job is
// deleted. A follow rides through a restart or a failover of the master (the stream is a read,
// cli/rpc.h): the first list after a reconnect is printed only if it differs from the last.

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/context.h"
#include "cli/output.h"
#include "cli/rpc.h"
#include "cli/table.h"
#include "paceline/v1/job.grpc.pb.h"

namespace paceline::cli {
namespace {

std::string PortsOf(const v1::Endpoint& e) {
  std::vector<std::pair<std::string, uint32_t>> ports(e.ports().begin(), e.ports().end());
  std::sort(ports.begin(), ports.end());
  std::vector<std::string> parts;
  for (const auto& [name, port] : ports) parts.push_back(absl::StrCat(name, "=", port));
  return parts.empty() ? "-" : absl::StrJoin(parts, ",");
}

void PrintTable(const v1::JobEndpoints& j) {
  std::cout << "job " << j.job_id() << "  "
            << (j.dns_name().empty() ? absl::StrCat("no DNS name: ", j.dns_name_note())
                                     : j.dns_name())
            << "\n";
  Table t({"INSTANCE", "ADDRESS", "PORTS", "READY", "WHY"});
  for (const v1::Endpoint& e : j.endpoints()) {
    t.AddRow({absl::StrCat(e.instance()), e.address().empty() ? "-" : e.address(), PortsOf(e),
              e.ready() ? "yes" : "no", e.why_not_ready().empty() ? "-" : e.why_not_ready()});
  }
  if (t.size() == 0) {
    std::cout << "no instance has a host\n";
  } else {
    std::cout << t.Render();
  }
  std::cout << std::flush;
}

// Follows the job's endpoints, printing each new list.
class Follower {
 public:
  Follower(CommandContext& ctx, Rpc& rpc, uint64_t job) : ctx_(ctx), rpc_(rpc), job_(job) {}

  absl::Status Run() {
    rpc_.set_deadline(absl::InfiniteFuture());
    return rpc_.Invoke(
        CallKind::kRead, [this](Rpc::Attempt& a) { return Session(a); }, /*stream=*/true);
  }

 private:
  // One stream, read to its end; OK when the follow is over (the job was deleted).
  grpc::Status Session(Rpc::Attempt& a) {
    v1::WatchEndpointsRequest req;
    req.set_job_id(job_);
    auto reader = v1::JobService::NewStub(a.channel)->WatchEndpoints(a.context, req);
    v1::JobEndpoints e;
    while (reader->Read(&e)) {
      a.answered = true;
      ++lists_;
      if (e.deleted()) {
        Deleted();
        a.context->TryCancel();
        return grpc::Status::OK;
      }
      if (printed_ && e.version() == last_) continue;  // repeated while idle, or after a reconnect
      Print(e);
    }
    grpc::Status s = reader->Finish();
    if (s.error_code() == grpc::StatusCode::NOT_FOUND && lists_ > 0) {
      Deleted();  // while the master was out of reach
      return grpc::Status::OK;
    }
    if (s.ok()) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the master ended the watch");
    return s;
  }

  void Print(const v1::JobEndpoints& e) {
    printed_ = true;
    last_ = e.version();
    switch (ctx_.client.format()) {
      case OutputFormat::kJson: {
        google::protobuf::util::JsonPrintOptions json;
        json.preserve_proto_field_names = true;
        json.always_print_primitive_fields = true;
        std::string line;
        (void)google::protobuf::util::MessageToJsonString(e, &line, json);
        std::cout << line << std::endl;
        break;
      }
      case OutputFormat::kYaml:
        std::cout << "---\n";
        PrintProtoYaml(e);
        std::cout << std::flush;
        break;
      case OutputFormat::kTable:
        std::cout << "--- "
                  << absl::FormatTime("%Y-%m-%d %H:%M:%E3S", absl::Now(), absl::UTCTimeZone())
                  << "\n";
        PrintTable(e);
        break;
    }
  }

  void Deleted() {
    if (ctx_.client.format() == OutputFormat::kJson) {
      std::cout << "{\"job_id\":\"" << job_ << "\",\"deleted\":true}" << std::endl;
    } else {
      std::cout << "job " << job_ << " was deleted" << std::endl;
    }
  }

  CommandContext& ctx_;
  Rpc& rpc_;
  const uint64_t job_;
  int lists_ = 0;  // lists received, over every stream
  bool printed_ = false;
  uint64_t last_ = 0;  // the version printed last
};

}  // namespace

void AddJobEndpointsCommand(CLI::App& job, CommandContext& ctx) {
  static uint64_t job_id = 0;
  static bool follow = false;
  CLI::App* cmd = job.add_subcommand(
      "endpoints",
      "where a service or stateful job's instances take traffic: address, ports, "
      "ready or why not");
  cmd->add_option("job", job_id, "job id")->required();
  cmd->add_flag("-w,--watch", follow, "print the endpoints again on every change, until ^C");
  cmd->callback([&ctx] {
    if (follow) {
      absl::StatusOr<Rpc> rpc = Rpc::Connect(ctx.client);
      if (!rpc.ok()) return ctx.Fail(rpc.status());
      Follower f(ctx, *rpc, job_id);
      if (absl::Status s = f.Run(); !s.ok()) ctx.Fail(s);
      return;
    }
    v1::GetEndpointsRequest req;
    req.set_job_id(job_id);
    std::optional<v1::JobEndpoints> resp =
        Run(ctx, CallKind::kRead, &v1::JobService::Stub::GetEndpoints, req);
    if (resp) PrintTable(*resp);
  });
}

}  // namespace paceline::cli
