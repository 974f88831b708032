#include "cli/reference.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/version.h"

namespace paceline::cli {
namespace {

std::vector<const CLI::App*> Visible(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* c) { return !c->get_group().empty(); });
}

std::vector<const CLI::Option*> Options(const CLI::App& app, bool positional) {
  return app.get_options([positional](const CLI::Option* o) {
    return !o->get_group().empty() && o->get_positional() == positional;
  });
}

bool TakesValue(const CLI::Option* o) { return o->get_expected_max() > 0; }

bool IsHelp(const CLI::Option* o) {
  const std::vector<std::string>& l = o->get_lnames();
  return std::find(l.begin(), l.end(), "help") != l.end();
}

// ---- bash ----

struct Level {
  std::string path;                // "paceline job runs"
  std::vector<std::string> words;  // its subcommands and long options
};

void Walk(const CLI::App& app, const std::string& path, std::vector<Level>& levels,
          std::vector<std::string>& takes_value) {
  Level level{path, {}};
  for (const CLI::App* sub : Visible(app)) level.words.push_back(sub->get_name());
  for (const CLI::Option* o : Options(app, /*positional=*/false)) {
    for (const std::string& l : o->get_lnames()) {
      level.words.push_back("--" + l);
      if (TakesValue(o)) takes_value.push_back("--" + l);
    }
    for (const std::string& s : o->get_snames()) {
      if (TakesValue(o)) takes_value.push_back("-" + s);
    }
  }
  levels.push_back(std::move(level));
  for (const CLI::App* sub : Visible(app)) {
    Walk(*sub, absl::StrCat(path, " ", sub->get_name()), levels, takes_value);
  }
}

// ---- man ----

// Text for groff: backslashes escaped, and no line may start with a control character.
std::string Roff(const std::string& text) {
  std::string s;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      s += c == '\\' ? std::string("\\e") : std::string(1, text[i]);
      ++i;
      continue;
    }
    // UTF-8: groff's input is ASCII, so a character beyond it is written \[uXXXX].
    const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
    uint32_t cp = c & (0x3F >> extra);
    for (int k = 1; k <= extra && i + k < text.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    absl::StrAppend(&s, "\\[u", absl::StrFormat("%04X", cp), "]");
    i += 1 + extra;
  }
  std::vector<std::string> lines = absl::StrSplit(s, '\n');
  for (std::string& line : lines) {
    if (!line.empty() && (line[0] == '.' || line[0] == '\'')) line = "\\&" + line;
  }
  return absl::StrJoin(lines, "\n");
}

std::string Dashes(const std::string& s) { return absl::StrReplaceAll(s, {{"-", "\\-"}}); }

std::string OptionHead(const CLI::Option* o) {
  std::vector<std::string> names;
  for (const std::string& s : o->get_snames()) names.push_back(absl::StrCat("\\fB\\-", s, "\\fR"));
  for (const std::string& l : o->get_lnames()) {
    names.push_back(absl::StrCat("\\fB\\-\\-", Dashes(l), "\\fR"));
  }
  std::string head = absl::StrJoin(names, ", ");
  if (TakesValue(o) && !o->get_type_name().empty()) {
    absl::StrAppend(&head, " \\fI", Roff(o->get_type_name()), "\\fR");
  }
  return head;
}

void AppendOptions(const CLI::App& app, std::string& out) {
  for (const CLI::Option* o : Options(app, /*positional=*/true)) {
    absl::StrAppend(&out, ".TP\n\\fI", Roff(absl::AsciiStrToUpper(o->get_name())), "\\fR\n",
                    Roff(o->get_description()), "\n");
  }
  for (const CLI::Option* o : Options(app, /*positional=*/false)) {
    if (IsHelp(o)) continue;
    absl::StrAppend(&out, ".TP\n", OptionHead(o), "\n", Roff(o->get_description()));
    if (!o->get_default_str().empty()) {
      absl::StrAppend(&out, " (default: ", Roff(o->get_default_str()), ")");
    }
    absl::StrAppend(&out, "\n");
  }
}

// Each command under `app` that runs something, depth first, as a subsection.
void AppendCommands(const CLI::App& app, const std::string& path, std::string& out) {
  for (const CLI::App* sub : Visible(app)) {
    const std::string name = absl::StrCat(path, " ", sub->get_name());
    absl::StrAppend(&out, ".SS \"", Roff(name), "\"\n", Roff(sub->get_description()), "\n");
    AppendOptions(*sub, out);
    AppendCommands(*sub, name, out);
  }
}

std::string Header(const std::string& page, const std::string& version,
                   const std::string& description) {
  return absl::StrCat(".TH ", absl::AsciiStrToUpper(page), " 1 \"\" \"paceline ", Roff(version),
                      "\" \"Paceline Manual\"\n.SH NAME\n", Dashes(page), " \\- ",
                      Roff(description), "\n");
}

}  // namespace

std::string BashCompletion(const CLI::App& app) {
  std::vector<Level> levels;
  std::vector<std::string> takes_value;
  Walk(app, app.get_name(), levels, takes_value);
  std::sort(takes_value.begin(), takes_value.end());
  takes_value.erase(std::unique(takes_value.begin(), takes_value.end()), takes_value.end());
  std::vector<std::string> top;  // the top level's options apply at every depth
  for (const std::string& w : levels.front().words) {
    if (w.rfind("--", 0) == 0) top.push_back(w);
  }
  const std::string fn = absl::StrCat("_", absl::StrReplaceAll(app.get_name(), {{"-", "_"}}));
  std::string out = absl::StrCat("# bash completion for ", app.get_name(), " (generated by `",
                                 app.get_name(), " completion bash`)\n", fn, "() {\n",
                                 "  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n",
                                 "  local prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n",
                                 "  local path=\"", app.get_name(), "\" w i words\n");
  if (!takes_value.empty()) {
    absl::StrAppend(&out, "  case \"$prev\" in\n    ", absl::StrJoin(takes_value, "|"),
                    ")\n      COMPREPLY=($(compgen -f -- \"$cur\"))\n      return ;;\n  esac\n");
  }
  std::vector<std::string> paths;
  for (size_t i = 1; i < levels.size(); ++i)
    paths.push_back(absl::StrCat("\"", levels[i].path, "\""));
  absl::StrAppend(&out, "  for ((i = 1; i < COMP_CWORD; i++)); do\n    w=\"${COMP_WORDS[i]}\"\n");
  if (!paths.empty()) {
    absl::StrAppend(&out, "    case \"$path $w\" in\n      ", absl::StrJoin(paths, "|"),
                    ") path=\"$path $w\" ;;\n    esac\n");
  }
  absl::StrAppend(&out, "  done\n  case \"$path\" in\n");
  for (const Level& l : levels) {
    std::vector<std::string> words = l.words;
    for (const std::string& w : top) {
      if (std::find(words.begin(), words.end(), w) == words.end()) words.push_back(w);
    }
    absl::StrAppend(&out, "    \"", l.path, "\") words=\"", absl::StrJoin(words, " "), "\" ;;\n");
  }
  absl::StrAppend(&out, "  esac\n  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\n",
                  "complete -F ", fn, " ", app.get_name(), "\n");
  return out;
}

std::map<std::string, std::string> ManPages(const CLI::App& app, const std::string& version) {
  std::map<std::string, std::string> pages;
  const std::string name = app.get_name();
  std::string top = Header(name, version, app.get_description());
  absl::StrAppend(&top, ".SH SYNOPSIS\n.B ", name, "\n[\\fIOPTIONS\\fR] \\fICOMMAND\\fR ...\n",
                  ".SH DESCRIPTION\n", Roff(app.get_description()), "\n.SH OPTIONS\n");
  AppendOptions(app, top);
  absl::StrAppend(&top, ".SH COMMANDS\n");
  std::vector<std::string> see_also;
  for (const CLI::App* cmd : Visible(app)) {
    const std::string page = absl::StrCat(name, "-", cmd->get_name());
    absl::StrAppend(&top, ".TP\n\\fB", Dashes(cmd->get_name()), "\\fR\n",
                    Roff(cmd->get_description()), " See \\fB", Dashes(page), "\\fR(1).\n");
    see_also.push_back(absl::StrCat(".BR ", Dashes(page), " (1)"));
    std::string body = Header(page, version, cmd->get_description());
    absl::StrAppend(
        &body, ".SH SYNOPSIS\n.B ", name, " ", Dashes(cmd->get_name()), "\n",
        Visible(*cmd).empty() ? "[\\fIOPTIONS\\fR]" : "\\fICOMMAND\\fR [\\fIOPTIONS\\fR]",
        "\n.SH DESCRIPTION\n", Roff(cmd->get_description()), "\n");
    if (!Options(*cmd, true).empty() || Options(*cmd, false).size() > 1) {
      absl::StrAppend(&body, ".SH OPTIONS\n");
      AppendOptions(*cmd, body);
    }
    if (!Visible(*cmd).empty()) {
      absl::StrAppend(&body, ".SH COMMANDS\n");
      AppendCommands(*cmd, absl::StrCat(name, " ", cmd->get_name()), body);
    }
    absl::StrAppend(&body, ".SH \"SEE ALSO\"\n.BR ", name, " (1)\n");
    pages[page + ".1"] = std::move(body);
  }
  absl::StrAppend(&top, ".SH \"SEE ALSO\"\n", absl::StrJoin(see_also, ",\n"), "\n");
  pages[name + ".1"] = std::move(top);
  return pages;
}

void RegisterReferenceCommands(CLI::App& app, int& exit_code) {
  CLI::App* completion = app.add_subcommand("completion", "print a shell completion script (bash)");
  auto shell = std::make_shared<std::string>();
  completion->add_option("shell", *shell, "the shell: bash")
      ->required()
      ->check(CLI::IsMember({"bash"}));
  completion->callback([&app, shell] { std::cout << BashCompletion(app); });

  CLI::App* man = app.add_subcommand("man", "write the man pages of every command into DIR");
  auto dir = std::make_shared<std::string>();
  man->add_option("dir", *dir, "the directory to write the NAME.1 files into")->required();
  man->callback([&app, &exit_code, dir] {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    for (const auto& [file, text] : ManPages(app, std::string(Version()))) {
      const std::filesystem::path path = std::filesystem::path(*dir) / file;
      std::ofstream f(path);
      f << text;
      if (!f) {
        std::cerr << "error: man: cannot write " << path.string() << "\n";
        exit_code = 1;
        return;
      }
    }
  });
}

}  // namespace paceline::cli
