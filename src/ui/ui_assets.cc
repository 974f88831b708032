#include "ui/ui_assets.h"

#include <cstdlib>
#include <iostream>
#include <span>

namespace paceline::ui {

// Written by scripts/embed-ui.py into the build directory.
std::span<const Asset> EmbeddedAssets();

const Asset* FindAsset(std::string_view path) {
  for (const Asset& a : EmbeddedAssets()) {
    if (a.path == path) return &a;
  }
  return nullptr;
}

const Asset& IndexPage() {
  const Asset* index = FindAsset("index.html");
  if (index == nullptr) {
    std::cerr << "the embedded web UI has no index.html: the build is broken" << std::endl;
    std::abort();
  }
  return *index;
}

}  // namespace paceline::ui
