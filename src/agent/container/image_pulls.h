#pragma once
// ImagePulls: the launches of container tasks whose image must be pulled first. They wait
// here while the image is pulled on a thread of its own — one pull per image and login,
// however many launches wait for it — and come back through TakeDone(), ready to launch or failed
// with what to fix. Nothing of a waiting launch is on disk: an agent that dies meanwhile has
// started nothing, and the master sees the run as lost.
//
//   pull: if-not-present   waits only when the image is not cached
//   pull: always           always waits for a pull (joining one in flight)
//   pull: never            never waits (the launch fails if the image is not cached)
//
// Registry access: the agent's CA file and stall timeout; credentials, when the container
// names a pull_secret, from that secret's value ("USER:PASSWORD") in the launch request.
//
// Thread-safety: called on the runtime's thread; pulls run on their own threads and call
// `wake` (which must be thread-safe) when one ends. The destructor waits for pulls in flight.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/base/launch_request.h"
#include "image/image_store.h"

namespace paceline::agent {

struct PullSettings {
  std::string ca_file;
  absl::Duration stall_timeout = absl::Seconds(30);
};

class ImagePulls {
 public:
  struct Done {
    LaunchRequest request;
    absl::Status status;  // OK: the image is cached now
  };

  ImagePulls(image::ImageStore& store, PullSettings settings, std::function<void()> wake);
  ~ImagePulls();
  ImagePulls(const ImagePulls&) = delete;
  ImagePulls& operator=(const ImagePulls&) = delete;

  // Queues `request` when its image must be pulled first (see above); false: launch it now.
  bool MaybeWait(const LaunchRequest& request);
  bool Waiting(const RunId& run) const { return waiting_.contains(run); }
  // Forgets a waiting launch; false when `run` was not waiting.
  bool Cancel(const RunId& run);
  std::vector<RunId> WaitingRuns() const;
  // Launches whose pull ended since the last call.
  std::vector<Done> TakeDone();

 private:
  struct Pull {
    std::thread thread;
    bool finished = false;
    absl::Status status;
  };
  // Starts the pull `key` (image and login) unless it is in flight.
  void Start(const std::string& key, const std::string& canonical, const std::string& login,
             const LaunchRequest& request);

  image::ImageStore& store_;
  PullSettings settings_;
  std::function<void()> wake_;
  std::map<RunId, std::string> waiting_;  // run -> its pull's key
  std::map<RunId, LaunchRequest> requests_;
  absl::Mutex mu_;
  // By key: the canonical reference and the login ("" = anonymous), so that launches with
  // other credentials never share (nor inherit the failure of) a pull.
  std::map<std::string, std::unique_ptr<Pull>> pulls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paceline::agent
