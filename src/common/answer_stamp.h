#pragma once
// How a master stamps its answers, and how a client asks for fresh enough ones
// (docs/operations.md "Reads on standbys"). Every call a master checked carries, in its
// trailing metadata:
//
//   paceline-served-by      "leader" or "standby" (absent: a master alone)
//   paceline-revision       the store revision the answer reflects at least: a leader's is
//                           that of everything it has committed, this call's writes included
//   paceline-staleness-ms   a standby's: how old its copy of the store is
//
// A client that wrote at revision R sends `paceline-min-revision: R` with its reads: a standby
// answers once its copy reflects R (waiting a little for it), or refuses naming the leader.
//
// Thread-safety: constants only.

namespace paceline {

inline constexpr char kServedByKey[] = "paceline-served-by";
inline constexpr char kRevisionKey[] = "paceline-revision";
inline constexpr char kStalenessKey[] = "paceline-staleness-ms";
inline constexpr char kMinRevisionKey[] = "paceline-min-revision";

}  // namespace paceline
