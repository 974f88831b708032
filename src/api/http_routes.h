#pragma once
// The master's HTTP routes. For now: GET /healthz -> 200 with a small JSON document
// {"status":"ok","version":...,"commit":...,"cluster_id":...,"store":...,"uptime_seconds":...}.
//
// Thread-safety: handlers read only immutable facts.

#include "api/backend.h"
#include "api/cluster_service.h"
#include "http/http_server.h"

namespace paceline::api {

void AddHealthRoutes(http::HttpServer& server, const MasterFacts& facts);
// GET /metrics: Prometheus text (metrics.h), read on the cluster's event loop.
// A standby has no state of its own to show: it serves the role metrics only.
void AddMetricsRoutes(http::HttpServer& server, Backend* cluster, const MasterFacts& facts);

}  // namespace paceline::api
