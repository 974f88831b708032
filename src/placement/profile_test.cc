#include "placement/profile.h"

#include <gtest/gtest.h>

namespace paceline::placement {
namespace {

TEST(Profile, EveryNamedProfileBuildsWithEveryFilterStaticFirst) {
  std::vector<std::string> names = ProfileNames();
  for (const char* want :
       {"default", "spread", "best-fit", "random-fit", "dot-product", "gpu-packing", "fgd"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  for (const std::string& name : names) {
    absl::StatusOr<Profile> p = Profile::Named(name);
    ASSERT_TRUE(p.ok()) << name << ": " << p.status();
    EXPECT_EQ(p->filters().size(), FilterNames().size());
    for (size_t i = 0; i < p->filters().size(); ++i) {
      EXPECT_EQ(p->filters()[i]->is_static(), i < p->num_static_filters()) << name;
    }
    EXPECT_EQ(p->scorers().size(), p->weights().size());
  }
}

TEST(Profile, DefaultAndFgdWeights) {
  absl::StatusOr<Profile> d = Profile::Named("default");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->spec().walk, WalkOrder::kTightestFirst);
  EXPECT_EQ(d->spec().max_candidates, 16u);
  EXPECT_EQ(d->spec().gpu_max_candidates, 256u);
  EXPECT_TRUE(d->any_device_aware());
  ASSERT_EQ(d->spec().scorers.size(), 8u);
  EXPECT_EQ(d->spec().scorers[0].scorer, "pack");
  EXPECT_EQ(d->spec().scorers[1].scorer, "gpu_fragmentation");
  EXPECT_EQ(d->spec().scorers[2].scorer, "gpu_stranding");
  EXPECT_EQ(d->spec().scorers[3].scorer, "gpu_model_pressure");
  EXPECT_EQ(d->spec().scorers[4].scorer, "avoid_reclaim");
  // The weights chosen by the searches of docs/placement.md: 1 : 16 : 32 : 32.
  EXPECT_EQ(d->spec().scorers[1].weight, 16 * d->spec().scorers[0].weight);
  EXPECT_EQ(d->spec().scorers[2].weight, 32 * d->spec().scorers[0].weight);
  EXPECT_EQ(d->spec().scorers[3].weight, 32 * d->spec().scorers[0].weight);
  // Not displacing revocable work matters more than packing, less than fragmentation.
  EXPECT_GT(d->spec().scorers[4].weight, d->spec().scorers[0].weight);
  EXPECT_LT(d->spec().scorers[4].weight, d->spec().scorers[1].weight);
  // Having the task's image cached is a nudge, below packing's full weight.
  EXPECT_EQ(d->spec().scorers[5].scorer, "image_locality");
  EXPECT_LT(d->spec().scorers[5].weight, d->spec().scorers[0].weight);
  absl::StatusOr<Profile> bf = Profile::Named("best-fit");
  ASSERT_TRUE(bf.ok());
  EXPECT_FALSE(bf->any_device_aware());
  absl::StatusOr<Profile> spread = Profile::Named("spread");
  ASSERT_TRUE(spread.ok());
  EXPECT_EQ(spread->spec().walk, WalkOrder::kLoosestFirst);
}

TEST(Profile, StickinessOutweighsEveryPolicy) {
  for (const std::string& name : ProfileNames()) {
    absl::StatusOr<Profile> p = Profile::Named(name);
    ASSERT_TRUE(p.ok());
    double policy = 0;
    double previous = 0;
    double stateful = 0;
    for (size_t i = 0; i < p->scorers().size(); ++i) {
      absl::string_view n = p->scorers()[i]->name();
      double w = p->weights()[i];
      if (n == "previous_host") {
        previous = w;
      } else if (n == "stateful_sticky") {
        stateful = w;
      } else {
        policy += w;
      }
    }
    EXPECT_GT(previous, policy) << name;
    EXPECT_GT(stateful, previous + policy) << name;
  }
}

TEST(Profile, FromWeights) {
  absl::StatusOr<ProfileSpec> p = ProfileFromWeights("pack=0.5+gpu_stranding=3");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "pack=0.5+gpu_stranding=3");
  EXPECT_EQ(p->walk, WalkOrder::kTightestFirst);
  ASSERT_GE(p->scorers.size(), 2u);
  EXPECT_EQ(p->scorers[0].scorer, "pack");
  EXPECT_EQ(p->scorers[0].weight, 0.5);
  EXPECT_EQ(p->scorers[1].scorer, "gpu_stranding");
  EXPECT_EQ(p->scorers.back().scorer, "stateful_sticky");
  EXPECT_TRUE(Profile::Build(*p).ok());
  for (const char* bad : {"pack", "pack=x", "pack=-1", "nope=1", "pack=1+", ""}) {
    absl::StatusOr<ProfileSpec> b = ProfileFromWeights(bad);
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(ProfileFromWeights("pack=x").status().message().find("'pack=x'"), std::string::npos);
}

TEST(Profile, CustomProfilesAreValidated) {
  ProfileSpec spec;
  spec.name = "mine";
  spec.filters = {"host_state", "resource_fit"};
  spec.scorers = {{"spread", 2}};
  EXPECT_TRUE(Profile::Build(spec).ok());
  spec.filters = {"resource_fit", "labels"};
  EXPECT_EQ(Profile::Build(spec).status().code(), absl::StatusCode::kInvalidArgument);
  spec.filters = {"nope"};
  EXPECT_FALSE(Profile::Build(spec).ok());
  spec.filters = {"host_state"};
  spec.scorers = {{"pack", -1}};
  EXPECT_FALSE(Profile::Build(spec).ok());
  spec.scorers = {{"unknown", 1}};
  EXPECT_FALSE(Profile::Build(spec).ok());
  EXPECT_EQ(Profile::Named("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(Profile, RegistriesResolveEveryName) {
  for (const std::string& n : FilterNames()) {
    auto f = MakeFilter(n);
    ASSERT_TRUE(f.ok()) << n;
    EXPECT_EQ((*f)->name(), n);
  }
  for (const std::string& n : ScorerNames()) {
    auto s = MakeScorer(n);
    ASSERT_TRUE(s.ok()) << n;
    EXPECT_EQ((*s)->name(), n);
  }
}

}  // namespace
}  // namespace paceline::placement
