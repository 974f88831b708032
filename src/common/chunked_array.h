#pragma once
// ChunkedArray<T>: an array that grows by whole chunks of 256 KiB and never moves what it holds.
// For the core's per-task records (millions of them): a std::vector of 10,000,000 records of
// 240 bytes copies 1.9 GB when it outgrows its capacity, which stalls the master's loop for
// over a second; this one only adds a chunk. Indexing is O(1) (a division by a constant);
// references stay valid while it grows. It is Boost.Container's deque with large blocks.
//
// Thread-safety: as a std::vector.

#include <boost/container/deque.hpp>
#include <boost/container/options.hpp>

namespace paceline {

template <typename T>
using ChunkedArray = boost::container::deque<
    T, void, boost::container::deque_options_t<boost::container::block_bytes<256 * 1024>>>;

}  // namespace paceline
