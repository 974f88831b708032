// `paceline secret new-key --key-file FILE`: puts a new key first in a master's secrets key file
// (secrets/keyring.h), the first step of rotating it (docs/security.md "Rotating the secrets
// key"). Works on the file alone, with or without a running master.

#include <iostream>

#include "CLI/CLI.hpp"
#include "common/defaults.h"
#include "main/commands.h"
#include "secrets/keyring.h"

namespace paceline::cli {

void RegisterSecretKeyCommand(CLI::App& app, CommandContext& ctx) {
  static std::string key_file = std::string(defaults::kDataDir) + "/secrets.key";
  CLI::App* secret = AddGroup(app, "secret", kSecretGroupHelp);
  CLI::App* cmd = secret->add_subcommand(
      "new-key",
      "put a new key first in a master's secrets key file (then copy the file to "
      "every master and run `secret rekey`)");
  cmd->add_option("--key-file", key_file, "the master's secrets key file")->capture_default_str();
  cmd->callback([&ctx] {
    absl::StatusOr<std::string> id = secrets::Keyring::AddKeyToFile(key_file);
    if (!id.ok()) return ctx.Fail(id.status());
    std::cout << "key " << *id << " added first to " << key_file
              << "; copy the file to every master, then run `paceline secret rekey`, then delete "
                 "the older keys' lines"
              << std::endl;
  });
}

}  // namespace paceline::cli
