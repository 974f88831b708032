// Fuzzes layer unpacking (layer_unpack.h) with untrusted layer bytes: any input gives OK or an
// error, never a crash, and never writes outside the rootfs. Each input is applied to a fresh
// rootfs in a directory that also holds the layer file and a sentinel file; afterwards that
// directory must hold exactly those three, the sentinel unchanged and with no second hard link,
// and the scratch directory above it nothing else either.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "image/layer_unpack.h"

namespace {

namespace fs = std::filesystem;

constexpr char kSentinel[] = "sentinel\n";

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "layer_unpack_fuzz: %s\n", what.c_str());
  std::abort();
}

std::set<std::string> Names(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename());
  return names;
}

// The fuzzer's own directory, removed at exit (never destroyed, so usable then).
const fs::path& Scratch() {
  static const fs::path* scratch = [] {
    std::string tmpl = (fs::temp_directory_path() / "layer-unpack-fuzz-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) Fail("mkdtemp");
    return new fs::path(tmpl);
  }();
  static const bool cleanup = std::atexit([] {
                                std::error_code ignored;
                                fs::remove_all(*scratch, ignored);
                              }) == 0;
  (void)cleanup;
  return *scratch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path base = Scratch() / "run";
  fs::remove_all(base);
  fs::create_directories(base / "rootfs");
  std::ofstream(base / "sentinel") << kSentinel;
  {
    std::ofstream layer(base / "layer", std::ios::binary);
    layer.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }

  paceline::image::UnpackStats stats;
  absl::Status s = paceline::image::ApplyLayer((base / "layer").string(),
                                               (base / "rootfs").string(), "", &stats);
  (void)s;

  if (Names(Scratch()) != std::set<std::string>{"run"}) Fail("wrote beside the run directory");
  if (Names(base) != std::set<std::string>{"layer", "rootfs", "sentinel"}) {
    Fail("wrote outside the rootfs");
  }
  struct stat st;
  if (::lstat((base / "sentinel").c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    Fail("the sentinel was replaced or linked");
  }
  std::stringstream content;
  content << std::ifstream(base / "sentinel").rdbuf();
  if (content.str() != kSentinel) Fail("the sentinel was written");
  if (::lstat((base / "rootfs").c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    Fail("the rootfs is no longer a directory");
  }
  if (s.ok() && (stats.entries < 0 || stats.bytes < 0)) Fail("negative stats");
  fs::remove_all(base);
  return 0;
}
