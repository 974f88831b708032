#pragma once
// The store revision of the CLI's last write to a set of masters, kept between commands so
// that a read a standby answers right after a write (in another command) reflects it: the
// CLI sends it as paceline-min-revision (common/answer_stamp.h) with its reads.
//
// Kept in ~/.paceline/revisions, one "ADDRS REVISION" line per set of masters (ADDRS as given,
// comma-separated; the 32 written last), rewritten whole by rename; a missing or unreadable file is
// no revision, and a file that cannot be written is ignored: the reads are then only as fresh as
// the standby.
//
// Thread-safety: functions of the file system; concurrent commands may lose each other's
// newer line (then a read may be older than the last write of the other command).

#include <cstdint>
#include <string>
#include <vector>

namespace paceline::cli {

// The revision last saved for `addrs`; -1 when none.
int64_t LoadWriteRevision(const std::vector<std::string>& addrs);
// Saves `revision` for `addrs` when it is newer than the one saved, or, with `may_lower`, in any
// case: a leader that answers with an older revision than the one saved serves another database
// (a cluster made again on the same addresses), which would never reach the saved one.
void SaveWriteRevision(const std::vector<std::string>& addrs, int64_t revision,
                       bool may_lower = false);

}  // namespace paceline::cli
