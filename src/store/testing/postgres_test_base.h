#pragma once
// A gtest fixture for tests against a real PostgreSQL: one server per test suite (started in
// SetUpTestSuite, stopped by PID in TearDownTestSuite; store/testing/postgres_server.h) and a
// fresh database per test, its URL in url_. MustOpen() opens a PostgresStore on it, failing the
// test (and returning null) when it cannot.
//
// Thread-safety: gtest's; tests of one suite run one at a time.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "store/postgres/postgres_store.h"
#include "store/testing/postgres_server.h"

namespace paceline::store::testing {

class PostgresDatabaseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = PostgresServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    std::string db = "t" + std::to_string(next_db_++);
    ASSERT_TRUE(server_->CreateDatabase(db).ok());
    url_ = server_->url_for(db);
  }
  std::unique_ptr<PostgresStore> MustOpen() {
    auto s = PostgresStore::Open(url_);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }

  static inline PostgresServer* server_ = nullptr;
  static inline int next_db_ = 0;
  std::string url_;
};

}  // namespace paceline::store::testing
