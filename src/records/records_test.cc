#include "records/records.h"

#include <gtest/gtest.h>

namespace paceline::records {
namespace {

TEST(EntryProgress, EveryValueHasACodeThatReadsBack) {
  std::vector<EntryProgress> all = {EntryProgress::kWaiting, EntryProgress::kInFlight,
                                    EntryProgress::kDone, EntryProgress::kFailed};
  EXPECT_EQ(ProgressCodes(all), ".>DF");  // the store's encoding: existing databases read back
  for (EntryProgress p : all) EXPECT_EQ(EntryProgressFromCode(EntryProgressCode(p)), p);
}

TEST(EntryProgress, AnUnknownCodeIsRefused) {
  EXPECT_EQ(EntryProgressFromCode('x'), std::nullopt);
  EXPECT_EQ(EntryProgressFromCode('\0'), std::nullopt);
}

}  // namespace
}  // namespace paceline::records
