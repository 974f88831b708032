#include "agent/container/image_pulls.h"

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "image/image_source.h"
#include "spec/image_ref.h"

namespace paceline::agent {

ImagePulls::ImagePulls(image::ImageStore& store, PullSettings settings, std::function<void()> wake)
    : store_(store), settings_(std::move(settings)), wake_(std::move(wake)) {}

ImagePulls::~ImagePulls() {
  absl::MutexLock lock(&mu_);
  for (auto& [ref, pull] : pulls_) {
    mu_.Unlock();
    if (pull->thread.joinable()) pull->thread.join();
    mu_.Lock();
  }
}

bool ImagePulls::MaybeWait(const LaunchRequest& request) {
  const std::optional<ContainerSpec>& c = request.spec.container;
  if (!c || c->pull == PullPolicy::kNever) return false;
  absl::StatusOr<spec::ImageRef> ref = spec::ParseImageRef(c->image);
  if (!ref.ok()) return false;  // the launch fails with the parse error
  std::string canonical = ref->ToString();
  if (c->pull == PullPolicy::kIfNotPresent && store_.Lookup(canonical)) return false;
  // Launches share a pull only when they would pull alike: the same image, the same login.
  std::string login;
  if (auto it = request.secret_values.find(c->pull_secret);
      !c->pull_secret.empty() && it != request.secret_values.end()) {
    login = it->second;
  }
  std::string key = absl::StrCat(canonical, "\x01", login);
  waiting_[request.run] = key;
  requests_[request.run] = request;
  Start(key, canonical, login, request);
  return true;
}

void ImagePulls::Start(const std::string& key, const std::string& canonical,
                       const std::string& login, const LaunchRequest& request) {
  absl::MutexLock lock(&mu_);
  if (auto it = pulls_.find(key); it != pulls_.end() && !it->second->finished) return;
  if (auto it = pulls_.find(key); it != pulls_.end()) {
    if (it->second->thread.joinable()) it->second->thread.join();
    pulls_.erase(it);
  }
  image::RegistryOptions options;
  options.ca_file = settings_.ca_file;
  options.stall_timeout = settings_.stall_timeout;
  if (!login.empty()) {
    size_t colon = login.find(':');
    options.username = login.substr(0, colon);
    if (colon != std::string::npos) options.password = login.substr(colon + 1);
  }
  auto pull = std::make_unique<Pull>();
  Pull* p = pull.get();
  spec::ImageRef ref = *spec::ParseImageRef(request.spec.container->image);
  pull->thread = std::thread([this, p, canonical, ref, options] {
    image::RegistrySource source(ref, options);
    absl::Status status = store_.Pull(canonical, source).status();
    {
      absl::MutexLock lock(&mu_);
      p->finished = true;
      p->status = WithContext(status, absl::StrCat("pull of image ", canonical));
    }
    wake_();
  });
  pulls_[key] = std::move(pull);
}

bool ImagePulls::Cancel(const RunId& run) {
  requests_.erase(run);
  return waiting_.erase(run) > 0;
}

std::vector<RunId> ImagePulls::WaitingRuns() const {
  std::vector<RunId> out;
  for (const auto& [run, ref] : waiting_) out.push_back(run);
  return out;
}

std::vector<ImagePulls::Done> ImagePulls::TakeDone() {
  std::map<std::string, absl::Status> ended;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = pulls_.begin(); it != pulls_.end();) {
      if (!it->second->finished) {
        ++it;
        continue;
      }
      ended[it->first] = it->second->status;
      if (it->second->thread.joinable()) it->second->thread.join();
      it = pulls_.erase(it);
    }
  }
  std::vector<Done> out;
  if (ended.empty()) return out;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    auto e = ended.find(it->second);
    if (e == ended.end()) {
      ++it;
      continue;
    }
    out.push_back(Done{std::move(requests_[it->first]), e->second});
    requests_.erase(it->first);
    it = waiting_.erase(it);
  }
  return out;
}

}  // namespace paceline::agent
