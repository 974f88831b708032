#include "archive/gzip.h"

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace paceline::archive {
namespace {

constexpr int kGzipWindow = 15 + 16;  // 15-bit window, gzip header and trailer
constexpr size_t kChunk = 64 * 1024;

}  // namespace

std::string GzipMember(absl::string_view data) {
  z_stream z{};
  PL_CHECK(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindow, 8,
                        Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out;
  out.resize(deflateBound(&z, data.size()) + 32);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  PL_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);  // deflateBound leaves room for everything
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

absl::StatusOr<std::string> Gunzip(absl::string_view data) {
  std::string out;
  size_t used = 0;
  while (used < data.size()) {
    z_stream z{};
    if (inflateInit2(&z, kGzipWindow) != Z_OK) return absl::InternalError("inflateInit2 failed");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + used));
    z.avail_in = static_cast<uInt>(data.size() - used);
    int rc = Z_OK;
    while (rc == Z_OK) {
      const size_t old = out.size();
      out.resize(old + kChunk);
      z.next_out = reinterpret_cast<Bytef*>(out.data() + old);
      z.avail_out = kChunk;
      rc = inflate(&z, Z_NO_FLUSH);
      out.resize(old + kChunk - z.avail_out);
      if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // input ends inside the member
    }
    const size_t consumed = (data.size() - used) - z.avail_in;
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
      return absl::DataLossError(absl::StrCat("gzip member at byte ", used,
                                              rc == Z_BUF_ERROR ? " is cut short" : " is corrupt"));
    }
    used += consumed;
  }
  return out;
}

}  // namespace paceline::archive
