#include "spec/spec_validation.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/units.h"
#include "spec/field_path.h"
#include "spec/validation_internal.h"

namespace paceline {
namespace validation_internal {

void ErrorSink::Add(std::string path, std::string message,
                    std::initializer_list<absl::string_view> related) {
  FieldError e{std::move(path), std::move(message), {}};
  for (absl::string_view r : related) e.related.emplace_back(r);
  errors_.push_back(std::move(e));
}

void CheckText(ErrorSink& sink, const std::string& path, absl::string_view s, TextKind kind) {
  if (!IsValidUtf8(s)) {
    sink.Add(path, "is not valid UTF-8; expected UTF-8 text");
    return;
  }
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    bool allowed = kind == TextKind::kText && (c == '\n' || c == '\t');
    if ((c < 0x20 || c == 0x7f) && !allowed) {
      sink.Add(path,
               absl::StrCat("contains the control character \\x", absl::Hex(c, absl::kZeroPad2),
                            kind == TextKind::kLine ? "; expected one line of plain text"
                                                    : "; expected text (newlines and tabs "
                                                      "are allowed)"));
      return;
    }
  }
}

bool IsPortName(absl::string_view s) {
  if (s.empty() || s.size() > 63 || s[0] < 'a' || s[0] > 'z') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

bool IsLabelKey(absl::string_view s) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (s.empty() || s.size() > kMaxNameLength || !alnum(s[0])) return false;
  for (char c : s) {
    if (!alnum(c) && c != '.' && c != '_' && c != '-' && c != '/') return false;
  }
  return true;
}

bool IsEnvName(absl::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

void CheckTaskResources(ErrorSink& sink, const std::string& path, const Resources& r) {
  for (Dim d : kAllDims) {
    std::string p = ChildPath(path, DimName(d));
    int64_t v = r[d];
    bool required = d == Dim::kCpu || d == Dim::kMemory;
    if (v < 0) {
      sink.Add(p, absl::StrCat("is negative (", v, "); expected an amount >= 0"));
    } else if (v == kUnlimited) {
      sink.Add(p, "is unlimited; a task must ask for a finite amount");
    } else if (required && v == 0) {
      sink.Add(p, absl::StrCat("is 0; every task must ask for some ", DimName(d),
                               d == Dim::kCpu ? " (e.g. 0.1 or 100m)" : " (e.g. 256Mi)"));
    } else if (d == Dim::kGpu && v > kMilliPerUnit && v % kMilliPerUnit != 0) {
      sink.Add(p, absl::StrCat(FormatGpu(v),
                               " mixes whole devices and a fraction; expected whole devices "
                               "(1, 2, ...) or a fraction of one device (below 1)"));
    }
  }
}

void CheckEnv(ErrorSink& sink, const std::string& path,
              const std::map<std::string, std::string>& env) {
  for (const auto& [name, value] : env) {
    std::string p = ChildPath(path, name);
    if (!IsEnvName(name)) {
      sink.Add(p, "is not a valid variable name; expected [A-Za-z_][A-Za-z0-9_]*");
    } else if (absl::StartsWith(name, "PACELINE_")) {
      sink.Add(p, "uses the reserved prefix PACELINE_ (set by the agent); choose another name");
    }
    CheckText(sink, p, value, TextKind::kText);
  }
}

}  // namespace validation_internal

bool IsSecretName(absl::string_view name) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (name.empty() || name.size() > kMaxSecretNameLength || !alnum(name.front())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

using validation_internal::ErrorSink;

bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    int extra;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;  // truncated sequence
    for (int k = 1; k <= extra; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

std::vector<FieldError> ValidatePoolSpec(const PoolSpec& spec) {
  ErrorSink sink;
  validation_internal::CheckText(sink, "description", spec.description,
                                 validation_internal::TextKind::kText);
  for (Dim d : kAllDims) {
    const DimSpec& ds = spec.dim(d);
    std::string base = ChildPath("resources", DimName(d));
    std::string res = ChildPath(base, "reservation");
    std::string lim = ChildPath(base, "limit");
    if (ds.reservation < 0) {
      sink.Add(res, "is negative; expected an amount >= 0");
    } else if (ds.reservation == kUnlimited) {
      sink.Add(res, "is unlimited; a reservation is a guaranteed, finite amount");
    }
    if (ds.limit < 0) sink.Add(lim, "is negative; expected an amount >= 0 or unlimited");
    if (d == Dim::kGpu) {
      for (const auto& [p, v] : {std::pair(res, ds.reservation), std::pair(lim, ds.limit)}) {
        if (v > kMilliPerUnit && v != kUnlimited && v % kMilliPerUnit != 0) {
          sink.Add(p, absl::StrCat(FormatGpu(v),
                                   " mixes whole devices and a fraction; expected "
                                   "whole devices or a fraction below 1"));
        }
      }
    }
    if (ds.reservation >= 0 && ds.limit >= 0 && ds.reservation != kUnlimited &&
        ds.reservation > ds.limit) {
      sink.Add(
          res,
          absl::StrCat("reservation ", FormatQuantity(d, ds.reservation), " exceeds the limit ",
                       FormatQuantity(d, ds.limit), "; expected reservation <= limit"),
          {lim});
    }
    if (!(ds.share > 0) || !std::isfinite(ds.share) || ds.share > kMaxShare) {
      sink.Add(ChildPath(base, "share"),
               absl::StrCat("is ", ds.share, "; expected a weight > 0 and <= ", kMaxShare));
    }
  }
  auto check_percent = [&](const char* name, const std::optional<double>& p) {
    if (p && !(*p > 0 && *p <= 100)) {
      sink.Add(name, absl::StrCat("is ", *p, "%; expected a percent in (0, 100], such as 10%"));
    }
  };
  check_percent("controller_limit", spec.controller_limit_percent);
  check_percent("slack_limit", spec.slack_limit_percent);
  if (spec.retain_terminal && *spec.retain_terminal < kMinRetainTerminal) {
    sink.Add("retain_terminal",
             absl::StrCat("is ", FormatDurationShort(*spec.retain_terminal), "; expected at least ",
                          FormatDurationShort(kMinRetainTerminal), " (such as 7d), or forever"));
  }
  if (spec.fair_share) {
    // Shorter than a minute forgets within a few cycles; longer than a year never forgets.
    constexpr absl::Duration kMinHalfLife = absl::Minutes(1);
    constexpr absl::Duration kMaxHalfLife = absl::Hours(24 * 365);
    const absl::Duration h = spec.fair_share->half_life;
    if (h < kMinHalfLife || h > kMaxHalfLife) {
      sink.Add("fair_share.half_life",
               absl::StrCat("is ", FormatDurationShort(h),
                            "; expected a duration from 1m to 365d, such as 1d"));
    }
  }
  return sink.Take();
}

absl::Status ToStatus(const std::vector<FieldError>& errors) {
  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrJoin(errors, "\n", [](std::string* out, const FieldError& e) {
        absl::StrAppend(out, e.path.empty() ? "" : e.path, e.path.empty() ? "" : ": ", e.message);
      }));
}

}  // namespace paceline
