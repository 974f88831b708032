"""Client.from_env's discovery rules (paceline.discovery), on files in a temporary directory:
no master needed."""

from __future__ import annotations

import importlib
import json
import os
import tempfile
import unittest
from pathlib import Path

import paceline
from paceline import discovery

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


class DiscoveryTest(unittest.TestCase):
    """Each source in its place in the order, and each malformed input refused."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        root = Path(self._tmp.name)
        self.home = root / "home"
        self.cwd = root / "work"  # where ./data is looked for
        self.home.mkdir()
        self.cwd.mkdir()
        self.env: dict[str, str] = {"HOME": str(self.home)}

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def resolve(self, **kw: str) -> discovery.Settings:
        return discovery.resolve(environ=self.env, cwd=self.cwd, **kw)

    def write_config(self, text: str) -> None:
        (self.home / ".paceline").mkdir(exist_ok=True)
        (self.home / ".paceline" / "config").write_text(text)

    def write_local_master(self, grpc_addr: str = "127.0.0.1:6000") -> None:
        data = self.cwd / "data"
        (data / "tls").mkdir(parents=True)
        (data / "master.json").write_text(json.dumps({"grpc": grpc_addr, "http": "x", "pid": 1}))
        (data / "token").write_text("  local-token\n")
        (data / "tls" / "ca.pem").write_bytes(PEM)

    def test_nothing_found_is_the_default_address_without_token_or_ca(self) -> None:
        s = self.resolve()
        self.assertEqual(s.addrs, ("127.0.0.1:5390",))
        self.assertEqual(s.addr_source, "the default address")
        self.assertEqual(s.token, "")
        self.assertIsNone(s.ca_pem)

    def test_local_paceline_up_data_dir(self) -> None:
        self.write_local_master()
        s = self.resolve()
        self.assertEqual(s.addrs, ("127.0.0.1:6000",))
        self.assertEqual(s.addr_source, "./data/master.json")
        self.assertEqual(s.token, "local-token")  # whitespace stripped
        self.assertEqual(s.ca_pem, PEM)
        self.assertEqual(s.ca_source, "./data/tls/ca.pem")

    def test_a_malformed_endpoints_file_falls_back_to_the_default(self) -> None:
        (self.cwd / "data").mkdir()
        (self.cwd / "data" / "master.json").write_text('{"http": "x"}')
        self.assertEqual(self.resolve().addrs, ("127.0.0.1:5390",))

    def test_config_file_wins_over_the_local_data_dir(self) -> None:
        self.write_local_master()
        ca = self.home / "ca.pem"
        ca.write_bytes(PEM)
        self.write_config(f"addr: m1:5390\ntoken: file-token\nca: {ca}\n")
        s = self.resolve()
        self.assertEqual((s.addrs, s.addr_source), (("m1:5390",), "~/.paceline/config"))
        self.assertEqual(s.token, "file-token")
        self.assertEqual(s.ca_source, "~/.paceline/config")

    def test_environment_wins_over_the_config_file(self) -> None:
        self.write_config("addr: m1:5390\ntoken: file-token\n")
        ca = self.home / "env-ca.pem"
        ca.write_bytes(PEM)
        self.env.update(PACELINE_ADDR="m2:5390", PACELINE_TOKEN="env-token",
                        PACELINE_CA=str(ca))
        s = self.resolve()
        self.assertEqual((s.addrs, s.addr_source), (("m2:5390",), "$PACELINE_ADDR"))
        self.assertEqual(s.token, "env-token")
        self.assertEqual(s.ca_source, "$PACELINE_CA")

    def test_empty_environment_variables_count_as_unset(self) -> None:
        self.write_config("token: file-token\n")
        self.env.update(PACELINE_ADDR="", PACELINE_TOKEN="", PACELINE_CA="")
        s = self.resolve()
        self.assertEqual(s.addr_source, "the default address")
        self.assertEqual(s.token, "file-token")

    def test_arguments_win_over_everything(self) -> None:
        self.env.update(PACELINE_ADDR="m2:5390", PACELINE_TOKEN="env-token")
        s = self.resolve(addr="m3:1", token="arg-token")
        self.assertEqual((s.addrs, s.token), (("m3:1",), "arg-token"))

    def test_several_masters_separated_by_commas(self) -> None:
        self.env["PACELINE_ADDR"] = "m1:5390, m2:5390,m3:5390"
        self.assertEqual(self.resolve().addrs, ("m1:5390", "m2:5390", "m3:5390"))

    def test_an_empty_address_in_a_list_is_an_error(self) -> None:
        self.env["PACELINE_ADDR"] = "m1:5390,,m2:5390"
        with self.assertRaises(paceline.InvalidArgumentError) as cm:
            self.resolve()
        self.assertIn("$PACELINE_ADDR: 'm1:5390,,m2:5390' has an empty address",
                      cm.exception.message)

    def test_an_unknown_config_key_is_an_error_naming_its_line(self) -> None:
        self.write_config("addr: m1:5390\ntokn: x\n")
        with self.assertRaises(paceline.InvalidArgumentError) as cm:
            self.resolve()
        self.assertIn("config:2: unknown key 'tokn'; expected addr, token or ca",
                      cm.exception.message)

    def test_a_config_that_is_not_a_map_is_an_error(self) -> None:
        self.write_config("- addr\n")
        with self.assertRaises(paceline.InvalidArgumentError) as cm:
            self.resolve()
        self.assertIn("expected a map with addr, token, ca", cm.exception.message)

    def test_an_empty_config_is_no_config(self) -> None:
        self.write_config("# nothing yet\n")
        self.assertEqual(self.resolve().addr_source, "the default address")

    def test_config_values_are_read_as_written(self) -> None:
        self.write_config("token: 0123\n")  # not the number 123
        self.assertEqual(self.resolve().token, "0123")

    def test_no_home_means_no_config(self) -> None:
        self.write_config("bogus: 1\n")
        self.env.pop("HOME")
        self.assertEqual(self.resolve().addr_source, "the default address")

    def test_a_ca_that_is_not_a_pem_certificate_is_an_error(self) -> None:
        bad = self.home / "bad.pem"
        bad.write_text("not a certificate")
        for ca in (str(bad), str(self.home / "missing.pem")):
            with self.assertRaises(paceline.InvalidArgumentError) as cm:
                self.resolve(ca=ca)
            self.assertIn(f"{ca} is not a readable PEM certificate", cm.exception.message)
            self.assertEqual(cm.exception.code.name, "INVALID_ARGUMENT")

    def test_from_env_uses_the_same_rules(self) -> None:
        self.write_local_master("127.0.0.1:6001")
        client = paceline.Client.from_env(environ=self.env, cwd=self.cwd)
        try:
            self.assertEqual(client.settings.addrs, ("127.0.0.1:6001",))
            self.assertEqual(client.settings.token, "local-token")
        finally:
            client.close()

    def test_the_installed_package_is_tested(self) -> None:
        # The suite runs against the package pip installed (with its generated code), not the
        # source tree.
        self.assertNotIn(os.path.join("clients", "python", "paceline"), paceline.__file__)
        generated = importlib.import_module("paceline.v1.job_pb2")  # made at build time
        self.assertTrue(hasattr(generated, "CreateJobRequest"))


if __name__ == "__main__":
    unittest.main()
