// ChangeCompaction (change_compaction.h): a revision noted comes due once it is `kept` old, once;
// notes closer together than `sample`, or of a revision already noted, are not kept.

#include "store/postgres/change_compaction.h"

#include <gtest/gtest.h>

namespace paceline::store::pg {
namespace {

const absl::Time t0 = absl::FromUnixSeconds(1000);

TEST(ChangeCompactionTest, ARevisionComesDueOnceWhenItIsKeptLongEnough) {
  ChangeCompaction c(absl::Minutes(10), absl::Seconds(30));
  c.Note(t0, 5);
  EXPECT_EQ(c.Due(t0 + absl::Minutes(9)), std::nullopt);
  EXPECT_EQ(c.Due(t0 + absl::Minutes(10)), 5);
  EXPECT_EQ(c.Due(t0 + absl::Minutes(20)), std::nullopt);  // once
}

TEST(ChangeCompactionTest, NotesAreSampledAndTheNewestDueRevisionWins) {
  ChangeCompaction c(absl::Minutes(10), absl::Seconds(30));
  c.Note(t0, 5);
  c.Note(t0 + absl::Seconds(10), 6);  // within the sample: not kept
  c.Note(t0 + absl::Seconds(40), 6);
  c.Note(t0 + absl::Seconds(80), 6);  // the same revision: not kept
  c.Note(t0 + absl::Seconds(120), 9);
  EXPECT_EQ(c.Due(t0 + absl::Seconds(640)), 6);  // 5 and 6 came due: 6
  EXPECT_EQ(c.Due(t0 + absl::Seconds(719)), std::nullopt);
  EXPECT_EQ(c.Due(t0 + absl::Seconds(720)), 9);
}

}  // namespace
}  // namespace paceline::store::pg
