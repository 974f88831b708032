#include "dns/names.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace paceline::dns {

bool IsLabel(absl::string_view label) {
  if (label.empty() || label.size() > kMaxLabel) return false;
  if (label.front() == '-' || label.back() == '-') return false;
  for (char c : label) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  }
  return true;
}

absl::StatusOr<std::string> NormalizeDomain(absl::string_view domain) {
  absl::ConsumeSuffix(&domain, ".");
  if (domain.empty()) {
    return absl::InvalidArgumentError("empty; expected a name such as 'paceline'");
  }
  if (domain.size() > kMaxName) {
    return absl::InvalidArgumentError(
        absl::StrCat(domain.size(), " characters; at most ", kMaxName));
  }
  for (absl::string_view label : absl::StrSplit(domain, '.')) {
    if (!IsLabel(label)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", label, "' is not a DNS label (1 to 63 of a-z, 0-9 and '-')"));
    }
  }
  return absl::AsciiStrToLower(domain);
}

absl::StatusOr<std::string> ServiceNameOf(absl::string_view pool, absl::string_view job_name,
                                          absl::string_view domain) {
  if (!IsLabel(job_name) || !absl::ascii_isalpha(static_cast<unsigned char>(job_name[0]))) {
    return absl::InvalidArgumentError(
        absl::StrCat("the job's name '", job_name,
                     "' is not a DNS label starting with a letter (1 to 63 of a-z, 0-9, '-')"));
  }
  std::vector<absl::string_view> labels = {job_name};
  std::vector<absl::string_view> segments =
      absl::StrSplit(absl::StripPrefix(pool, "/"), '/', absl::SkipEmpty());
  for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
    if (!IsLabel(*it)) {
      return absl::InvalidArgumentError(absl::StrCat("the pool's segment '", *it, "' of ", pool,
                                                     " is not a DNS label (1 to 63 of a-z, 0-9, "
                                                     "'-')"));
    }
    labels.push_back(*it);
  }
  labels.push_back(domain);
  std::string name = absl::AsciiStrToLower(absl::StrJoin(labels, "."));
  // The longest name under it ("_port._tcp." and an instance) must fit too: leave room.
  if (name.size() > kMaxName - 32) {
    return absl::InvalidArgumentError(absl::StrCat("the name ", name, " is ", name.size(),
                                                   " characters; at most ", kMaxName - 32,
                                                   " leave room for its SRV and instance names"));
  }
  return name;
}

std::string InstanceName(absl::string_view service, uint32_t instance) {
  return absl::StrCat(instance, ".", service);
}

std::string SrvName(absl::string_view service, absl::string_view port) {
  return absl::StrCat("_", port, "._tcp.", service);
}

std::optional<QueryName> SplitQueryName(absl::string_view name, absl::string_view domain) {
  absl::string_view rest = name;
  if (rest != domain && !(absl::ConsumeSuffix(&rest, domain) && absl::ConsumeSuffix(&rest, "."))) {
    return std::nullopt;
  }
  QueryName q;
  q.service = std::string(name);
  if (rest == name) return q;  // the apex
  const size_t dot = name.find('.');
  absl::string_view first = name.substr(0, dot);
  const absl::string_view after = dot == absl::string_view::npos ? "" : name.substr(dot + 1);
  uint32_t instance = 0;
  if (!first.empty() && absl::ascii_isdigit(static_cast<unsigned char>(first[0]))) {
    if (after != domain && absl::SimpleAtoi(first, &instance) && first == absl::StrCat(instance)) {
      q.kind = QueryName::Kind::kInstance;
      q.instance = instance;
      q.service = std::string(after);
    }
    return q;
  }
  if (absl::ConsumePrefix(&first, "_")) {
    absl::string_view tail = after;
    if (!first.empty() && absl::ConsumePrefix(&tail, "_tcp.") && tail != domain) {
      q.kind = QueryName::Kind::kSrv;
      q.port = std::string(first);
      q.service = std::string(tail);
    }
    return q;
  }
  q.kind = QueryName::Kind::kService;
  return q;
}

}  // namespace paceline::dns
